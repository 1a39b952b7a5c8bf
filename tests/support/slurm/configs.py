"""Stack configs with ``workload: slurm`` for the Slurm tests: every example stack that uses Slurm, plus synthetic
ones covering what the examples do not (zone tree, partition_prio, no accounting, several pools of one GPU)."""

from __future__ import annotations

from typing import Any

from preview.engine import PROJECT_ROOT, read_stack_file
from tests.support.spec.edit import edits
from tests.support.spec.stack_configs import EKS, GKE

EXAMPLE_SLURM_STACKS = sorted(
    p.name[len("Pulumi.") : -len(".yaml")]
    for p in PROJECT_ROOT.glob("Pulumi.*.yaml")
    if (read_stack_file(p).get("gpu-cluster:scheduling") or {}).get("workload") == "slurm"
)

SLURMD_EFA = {
    "runtimeImageBuild": "slurmd-efa",
    "runtimeImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
    "slurmd-efa@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
}
"""Slurm tasks on an EFA pool need a slurmd image with the EFA libraries (validation refuses Slinky's default)."""
EKS_ZONES: dict[str, Any] = edits(
    EKS,
    {
        "nodePools": [
            {
                "name": "p5-a",
                "machineType": "p5.48xlarge",
                "zones": ["us-east-1a"],
                "minNodes": 4,
                "maxNodes": 4,
                "multiNode": True,
                "fabric": SLURMD_EFA,
            },
            {
                "name": "p5-b",
                "machineType": "p5.48xlarge",
                "zones": ["us-east-1b"],
                "minNodes": 2,
                "maxNodes": 2,
                "multiNode": True,
                "fabric": SLURMD_EFA,
            },
            {
                "name": "l4",
                "machineType": "g6.xlarge",
                "zones": ["us-east-1a", "us-east-1b"],
                "minNodes": 3,
                "maxNodes": 3,
            },
        ],
        "scheduling": {
            "workload": "slurm",
            "cohort": "all-teams",
            "queues": [
                {
                    "name": "llm",
                    "fairShareWeight": 5,
                    "quotas": [{"pool": "p5-a", "gpus": 32}, {"pool": "p5-b", "gpus": 8, "borrowingLimit": 8}],
                },
                {
                    "name": "infer",
                    "quotas": [{"pool": "l4", "gpus": 3, "borrowingLimit": 0}, {"pool": "p5-b", "gpus": 8}],
                },
            ],
            "priorityClasses": [{"name": "prod", "value": 50}, {"name": "batch", "value": 10}],
            "topology": {"mode": "required", "level": "zone"},
            "slurm": {
                "preemptType": "partition_prio",
                "partitions": [{"name": "train", "pools": ["p5-a", "p5-b"], "priorityTier": 3}],
                "qosLimits": {"batch": {"maxWallMinutes": 720, "maxGpusPerUser": 16, "grpGpus": 24}},
            },
        },
    },
)

GKE_NO_ACCOUNTING: dict[str, Any] = edits(
    GKE,
    {
        "nodePools": [
            {
                "name": "h100",
                "machineType": "a3-highgpu-8g",
                "zones": ["us-central1-a"],
                "minNodes": 6,
                "maxNodes": 6,
                "multiNode": True,
            },
            {"name": "l4", "machineType": "g2-standard-8", "zones": ["us-central1-a"], "minNodes": 2, "maxNodes": 2},
        ],
        "scheduling": {
            "workload": "slurm",
            "queues": [{"name": "team", "quotas": [{"pool": "h100", "gpus": 48}]}],
            "slurm": {"accounting": False, "priorityWeights": {"fairShare": 0, "age": 0}, "allPoolsPartition": False},
        },
    },
)

SYNTHETIC = {"eks-zones": EKS_ZONES, "gke-no-accounting": GKE_NO_ACCOUNTING}


def slurm_configs() -> dict[str, dict[str, Any]]:
    """name -> flat stack config, examples first."""
    out = {s: read_stack_file(PROJECT_ROOT / f"Pulumi.{s}.yaml") for s in EXAMPLE_SLURM_STACKS}
    out.update(SYNTHETIC)
    return out
