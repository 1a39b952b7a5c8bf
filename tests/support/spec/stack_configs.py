"""Small valid stack configs (flat Pulumi config maps) for component and preview tests; change a field with
``tests.support.spec.edit.edit(GKE, "nodePools[0].maxNodes", 8)``."""

from __future__ import annotations

from typing import Any

GKE: dict[str, Any] = {
    "gpu-cluster:cloud": "gcp",
    "gpu-cluster:project": "test-project-1",
    "gpu-cluster:region": "us-central1",
    "gpu-cluster:labels": {"team": "ml"},
    "gpu-cluster:cluster": {"name": "ml", "authorizedNetworks": ["203.0.113.0/24"]},
    "gpu-cluster:nodePools": [
        {
            "name": "h100",
            "machineType": "a3-highgpu-8g",
            "zones": ["us-central1-a"],
            "minNodes": 0,
            "maxNodes": 4,
            "multiNode": True,
        },
    ],
}

EKS: dict[str, Any] = {
    "gpu-cluster:cloud": "aws",
    "gpu-cluster:region": "us-east-1",
    "gpu-cluster:accountId": "123456789012",
    "gpu-cluster:cluster": {
        "name": "ml",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "gpu-cluster:nodePools": [
        {
            "name": "p5",
            "machineType": "p5.48xlarge",
            "zones": ["us-east-1a"],
            "minNodes": 0,
            "maxNodes": 2,
            "multiNode": True,
        },
    ],
}
