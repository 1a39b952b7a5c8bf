"""The valid ``workload: slurm`` stack the Slurm error tables break one setting at a time, and their row helper."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

BASE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-central1",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
    "nodePools": [
        {
            "name": "h100",
            "machineType": "a3-highgpu-8g",
            "zones": ["us-central1-a"],
            "minNodes": 8,
            "maxNodes": 8,
            "multiNode": True,
        },
        {"name": "l4", "machineType": "g2-standard-8", "zones": ["us-central1-a"], "minNodes": 4, "maxNodes": 4},
    ],
    "scheduling": {
        "workload": "slurm",
        "queues": [
            {"name": "research", "quotas": [{"pool": "h100", "gpus": 32}]},
            {"name": "eval", "quotas": [{"pool": "l4", "gpus": 4}]},
        ],
        "priorityClasses": [{"name": "high", "value": 100}, {"name": "low", "value": 10}],
        "slurm": {"blockSize": 4},
    },
}


def case(changes: dict[tuple, Any], *expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(changes, [textwrap.dedent(e).strip("\n") for e in expected], id=id)
