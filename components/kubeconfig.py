"""Kubeconfig documents that authenticate through the cloud CLI (no long-lived credential in state)."""

from __future__ import annotations

import json


def gke_kubeconfig(name: str, endpoint: str, ca_data: str) -> str:
    """Uses gke-gcloud-auth-plugin, as `gcloud container clusters get-credentials` does."""
    return _kubeconfig(
        name,
        endpoint,
        ca_data,
        {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "gke-gcloud-auth-plugin",
            "installHint": "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin",
            "provideClusterInfo": True,
        },
    )


def eks_kubeconfig(name: str, region: str, endpoint: str, ca_data: str) -> str:
    """Uses `aws eks get-token`, as `aws eks update-kubeconfig` does."""
    return _kubeconfig(
        name,
        endpoint,
        ca_data,
        {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", name, "--region", region, "--output", "json"],
        },
    )


def _kubeconfig(name: str, endpoint: str, ca_data: str, exec_cfg: dict) -> str:
    server = endpoint if str(endpoint).startswith("https://") else f"https://{endpoint}"
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": name,
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "users": [{"name": name, "user": {"exec": exec_cfg}}],
    }
    return json.dumps(doc, indent=2)
