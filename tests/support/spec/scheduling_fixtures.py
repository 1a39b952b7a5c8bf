"""Valid stack specs with a ``scheduling`` section (raw, as ``load_spec`` reads them), and their derived facts."""

from __future__ import annotations

import copy
from typing import Any

from catalog import load_catalog
from stacks.plan.facts import PoolFacts, pool_facts
from stacks.validate.load import load_spec
from stacks.spec.stack import StackSpec

GKE_TEAMS: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-central1",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
    "nodePools": [
        {
            "name": "h100",
            "machineType": "a3-highgpu-8g",
            "zones": ["us-central1-a"],
            "minNodes": 4,
            "maxNodes": 4,
            "multiNode": True,
        },
        {"name": "l4", "machineType": "g2-standard-24", "zones": ["us-central1-a"], "maxNodes": 4},
    ],
    "scheduling": {
        "workload": "kubeflow",
        "cohort": "ml",
        "queues": [
            {
                "name": "research",
                "fairShareWeight": 2,
                "quotas": [
                    {"pool": "h100", "gpus": 24, "lendingLimit": 8},
                    {"pool": "l4", "gpus": 4, "borrowingLimit": 4},
                ],
            },
            {
                "name": "product",
                "namespace": "product-ml",
                "quotas": [{"pool": "h100", "gpus": 8, "borrowingLimit": 16}, {"pool": "l4", "gpus": 4}],
            },
        ],
        "priorityClasses": [
            {"name": "production", "value": 1000, "description": "release runs"},
            {"name": "preemptible", "value": 10},
        ],
        "gang": {"timeoutSeconds": 900},
        "topology": {"mode": "preferred", "level": "block"},
    },
}

EKS_TEAMS: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {
        "name": "llm",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [
        {
            "name": "p5",
            "machineType": "p5.48xlarge",
            "zones": ["us-east-1a"],
            "minNodes": 2,
            "maxNodes": 2,
            "multiNode": True,
        },
        {
            "name": "l40s",
            "machineType": "g6e.xlarge",
            "zones": ["us-east-1a", "us-east-1b"],
            "minNodes": 4,
            "maxNodes": 4,
        },
    ],
    "scheduling": {
        "workload": "kubeflow",
        "cohort": "llm",
        "queueingStrategy": "StrictFIFO",
        "queues": [
            {"name": "pretraining", "quotas": [{"pool": "p5", "gpus": 12}, {"pool": "l40s", "gpus": 1}]},
            {
                "name": "finetune",
                "quotas": [{"pool": "p5", "gpus": 4, "borrowingLimit": 4}, {"pool": "l40s", "gpus": 3}],
            },
        ],
        "preemption": {"withinQueue": "LowerOrNewerEqualPriority", "reclaimWithinCohort": "LowerPriority"},
        "topology": {"mode": "required", "level": "block"},
    },
}
"""Required block placement: valid because p5.48xlarge and g6e carry EKS network-layer labels and both pools are of
fixed size."""

CAT = load_catalog()


EKS_QUEUED: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {
        "name": "llm",
        "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"},
    },
    "nodePools": [
        {
            "name": "p5",
            "machineType": "p5.48xlarge",
            "zones": ["us-east-1a"],
            "maxNodes": 4,
            "multiNode": True,
            "capacity": {"queuedProvisioning": True},
        },
        {"name": "l40s", "machineType": "g6e.xlarge", "zones": ["us-east-1a"], "minNodes": 2, "maxNodes": 2},
    ],
    "scheduling": {
        "workload": "kubeflow",
        "cohort": "llm",
        "queues": [
            {"name": "pretraining", "quotas": [{"pool": "p5", "gpus": 24}, {"pool": "l40s", "gpus": 1}]},
            {"name": "eval", "quotas": [{"pool": "l40s", "gpus": 1}]},
        ],
        "topology": {"mode": "required", "level": "block"},
    },
}
"""An EKS queued node group (all-or-nothing scale-ups by the Cluster Autoscaler) next to a fixed one; required
block placement: p5 nodes carry EC2 topology labels whether or not they are queued."""


def spec_and_facts(raw: dict[str, Any]) -> tuple[StackSpec, list[PoolFacts]]:
    spec, _ = load_spec(copy.deepcopy(raw), CAT)
    return spec, [pool_facts(spec, p, CAT) for p in spec.node_pools]


def flat_config(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` as the flat ``gpu-cluster:<key>`` map the Pulumi program reads."""
    return {f"gpu-cluster:{k}": copy.deepcopy(v) for k, v in raw.items()}


SLURMD_EFA_IMAGE = (
    "123456789012.dkr.ecr.us-east-1.amazonaws.com/slurmd-efa"
    "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)
"""A slurmd image with the EFA libraries, pushed by the user: validation refuses a multi-node EFA pool of a Slurm stack
on Slinky's default slurmd image (it has none)."""


def with_slurmd_efa_image(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` (a copy) with ``fabric.runtimeImage`` on each multi-node EKS pool that names none."""
    raw = copy.deepcopy(raw)
    if raw.get("cloud") == "aws":
        for pool in raw["nodePools"]:
            if pool.get("multiNode") and not (pool.get("fabric") or {}).get("runtimeImage"):
                pool["fabric"] = {**(pool.get("fabric") or {}), "runtimeImage": SLURMD_EFA_IMAGE}
    return raw
