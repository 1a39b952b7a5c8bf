"""On EKS a pod that asks for no GPU gets none through NVIDIA_VISIBLE_DEVICES: the pinned nvidia-device-plugin chart,
rendered by real Helm with the stack's values, runs the plugin with the volume-mounts device list strategy (and the
SYS_ADMIN capability the chart adds for it), and every config entry keeps that strategy. The node half (the toolkit
refusing the env var from unprivileged containers) is in the GPU node groups' user data
(``tests/components/k8s/test_gpu_runtime_components.py``); neither can be tried on a real GPU node here."""

from __future__ import annotations

import pytest
import yaml

from render.nvidia_values import DEVICE_LIST_STRATEGY
from tests.support.helm.examples import rendered

EKS_STACKS = ["eks-kueue", "eks-serving", "eks-p5-efa"]


@pytest.mark.parametrize("stack", EKS_STACKS)
def test_the_rendered_device_plugin_hands_out_gpus_as_volume_mounts(stack):
    objects = rendered(stack).release("gpu-runtime-device-plugin")
    plugin = next(o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == "nvidia-device-plugin")
    ctr = next(c for c in plugin["spec"]["template"]["spec"]["containers"] if c["name"] == "nvidia-device-plugin-ctr")
    assert {"name": "DEVICE_LIST_STRATEGY", "value": DEVICE_LIST_STRATEGY} in ctr["env"]
    assert DEVICE_LIST_STRATEGY == "volume-mounts"
    assert "SYS_ADMIN" in ctr["securityContext"]["capabilities"]["add"]  # the chart's own requirement for it
    for cm in (
        o
        for o in rendered(stack).objects
        if o["kind"] == "ConfigMap" and any("flags" in str(v) for v in (o.get("data") or {}).values())
    ):
        for entry in cm["data"].values():
            doc = yaml.safe_load(entry)
            if isinstance(doc, dict) and "flags" in doc:
                assert doc["flags"]["plugin"]["deviceListStrategy"] == DEVICE_LIST_STRATEGY, cm["metadata"]["name"]
