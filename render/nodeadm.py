"""EKS (AL2023) node user data: one nodeadm ``NodeConfig`` holding what a GPU pool asks of its nodes (NVMe RAID0 for
images and scratch, SOCI fast image pull, parallel kubelet pulls). Managed node groups merge it with their own
NodeConfig, so it must be a MIME multi-part document (awslabs/amazon-eks-ami nodeadm doc, "Merging multiple
configuration objects"). On nodes whose IMEX runs in ComputeDomain daemons a second, shell-script part (run by
cloud-init, which hands ``application/node.eks.aws`` parts to nodeadm) masks the AMI's host ``nvidia-imex.service``;
on device-plugin pools another sets the node's NVIDIA toolkit to ignore a pod's ``NVIDIA_VISIBLE_DEVICES``. Pure."""

from __future__ import annotations

from typing import Any

from stacks.plan.pod_start import PodStartPlan

_HEAD = """\
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="GPUCLUSTER"

--GPUCLUSTER
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
"""
_TAIL = "\n--GPUCLUSTER--\n"
HOST_IMEX_UNIT = "nvidia-imex.service"
MASK_HOST_IMEX = f"""\
--GPUCLUSTER
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/sh
# The NVIDIA DRA driver's ComputeDomain daemons run IMEX on this node; a host {HOST_IMEX_UNIT} conflicts with them
# (kubernetes-sigs/dra-driver-nvidia-gpu docs/prerequisites.md: disable and mask it; dra-driver-nvidia-gpu#524). Stop and disable
# it if the AMI ships it, then mask it so nothing starts it again (masking works whether or not the unit exists).
systemctl stop {HOST_IMEX_UNIT} 2>/dev/null || true
systemctl disable {HOST_IMEX_UNIT} 2>/dev/null || true
systemctl mask {HOST_IMEX_UNIT}
"""


def node_config_spec(plan: PodStartPlan, raid: bool) -> dict[str, Any]:
    """The NodeConfig ``spec`` of an EKS pool from its pod-start plan and whether its instance-store NVMe disks form a
    RAID0 (empty: no user data). Key order is fixed so the same spec always yields the same bytes: a changed user data
    is a new launch-template version, which rolls the nodes."""
    spec: dict[str, Any] = {}
    if plan.fast_image_pull:
        spec["featureGates"] = {"FastImagePull": True}
    if raid:
        spec["instance"] = {"localStorage": {"strategy": "RAID0"}}
    kubelet: dict[str, Any] = {}
    if plan.fast_image_pull or plan.max_parallel_pulls is not None:
        kubelet["serializeImagePulls"] = plan.max_parallel_pulls == 1
        if plan.max_parallel_pulls is not None and plan.max_parallel_pulls > 1:
            kubelet["maxParallelImagePulls"] = plan.max_parallel_pulls
    if kubelet:
        spec["kubelet"] = {"config": kubelet}
    return spec


def _yaml(value: dict[str, Any], indent: int) -> str:
    """Block YAML of nested mappings of plain scalars (all a NodeConfig here holds)."""
    lines = []
    for key, item in value.items():
        pad = " " * indent
        if isinstance(item, dict):
            lines.append(f"{pad}{key}:\n{_yaml(item, indent + 2)}")
        else:
            lines.append(f"{pad}{key}: {str(item).lower() if isinstance(item, bool) else item}")
    return "\n".join(lines)


TOOLKIT_SETTINGS = (
    ("accept-nvidia-visible-devices-envvar-when-unprivileged", "false"),
    ("accept-nvidia-visible-devices-as-volume-mounts", "true"),
)
"""The NVIDIA Container Toolkit settings (``/etc/nvidia-container-runtime/config.toml``) that make a pod's
``NVIDIA_VISIBLE_DEVICES`` select nothing unless it is privileged, and the device plugin's ``volume-mounts`` list
(``render/nvidia_values.py`` ``DEVICE_LIST_STRATEGY``) select the GPUs kubelet allocated: without them a pod asking
for no GPU sets the env var (or runs a CUDA base image, which sets it) and sees every GPU of the node."""
_SCRIPT_PART = """\
--GPUCLUSTER
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
set -euo pipefail
# the NVIDIA AMI's toolkit: GPUs only from the device plugin's volume mounts, never from a pod's env var
nvidia-ctk config --in-place {sets}
"""


def toolkit_script_part() -> str:
    sets = " ".join(f"--set {k}={v}" for k, v in TOOLKIT_SETTINGS)
    return _SCRIPT_PART.format(sets=sets)


def nodeadm_user_data(
    plan: PodStartPlan, raid: bool, mask_host_imex: bool = False, toolkit_lockdown: bool = False
) -> str | None:
    """The launch template's user data (before base64), or None when the pool asks nodeadm for nothing, keeps the
    host IMEX service and leaves the node toolkit as the AMI ships it.
    ``toolkit_lockdown``: the pool runs NVIDIA's device plugin with volume-mounts (the toolkit settings above)."""
    spec = node_config_spec(plan, raid)
    if not spec and not mask_host_imex and not toolkit_lockdown:
        return None
    # an empty NodeConfig spec is still a valid part: managed node groups merge theirs over it
    head = f"{_HEAD}spec:\n{_yaml(spec, 2)}\n" if spec else f"{_HEAD}spec: {{}}\n"
    return (
        head
        + (f"\n{MASK_HOST_IMEX}" if mask_host_imex else "")
        + (f"\n{toolkit_script_part()}" if toolkit_lockdown else "")
        + _TAIL
    )
