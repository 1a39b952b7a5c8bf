"""Every default gpu-cluster chooses passes the mandatory rules: a stack that names no image gets the Trainer
runtime's default training image pinned by digest (resolved from the registry at deploy), also where it runs
host-level (the GPUDirect-TCPXO pool of an a3-megagpu-8g), so the user is never sent to fix what they did not write."""

from __future__ import annotations

from preview.run import preview_config
from tests.support.spec.edit import edits
from tests.support.spec.stack_configs import GKE

A3_MEGA_KUEUE = edits(
    GKE,
    {
        "nodePools[0].machineType": "a3-megagpu-8g",
        "nodePools[0].minNodes": 16,
        "nodePools[0].maxNodes": 16,
        "gpu-cluster:scheduling": {
            "workload": "kubeflow",
            "queues": [{"name": "team", "quotas": [{"pool": "h100", "gpus": 128}]}],
        },
    },
)


def test_a_16_node_a3_mega_kueue_stack_with_every_default_exits_0():
    report = preview_config("defaults", A3_MEGA_KUEUE)
    assert not report.errors, [str(e) for e in report.errors]
    assert [v for v in report.violations if v.get("enforcement") == "mandatory"] == []
    assert report.exit_code == 0


def test_the_default_training_image_runs_pinned_on_the_tcpxo_pool():
    report = preview_config("defaults", A3_MEGA_KUEUE)
    runtime = next(r for r in report.resources if r.name == "kubeflow-runtime-torch-h100")
    text = str(runtime.inputs)
    assert "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime@sha256:resolved-at-deploy" in text
    assert "/dev/aperture_devices" in text  # host-level: the TCPXO NCCL plugin's host path is mounted
