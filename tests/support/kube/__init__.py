"""Kubernetes: OpenAPI and CRD schema checks, upstream files and manifests, install order, a fake API server."""
