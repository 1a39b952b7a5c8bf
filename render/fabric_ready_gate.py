"""The NCCL plugin's ready gate: the installer's marker on the node and the init container that waits for it.

A fabric job's first init container (``render/fabric_pod.py``) waits until the marker names the plugin the catalog
pins; the installer (``render/gke_fabric_manifests.py``) writes it last.
"""

from __future__ import annotations

from typing import Any

from catalog.fabric import FabricKind, load_fabric_catalog

READY_DIR_HOST = "/home/kubernetes/bin/gpu-cluster"
READY_DIR = "/run/gpu-cluster"
READY_FILE = "nccl-plugin-ready"
"""The NCCL plugin installer writes the plugin's image reference to ``READY_DIR_HOST/READY_FILE`` once the plugin is on
the node (``render/gke_fabric_manifests.py``); a fabric job's first init container waits until the file names the
plugin the catalog pins. Upstream starts jobs whenever the pod lands, so on a fresh node NCCL can start before the
plugin exists (and fall back to sockets, or fail with ``NCCL_NET=gIB``). A file on the node, not a node label or
taint: the installer needs no Kubernetes API credentials, and the autoscalers' scale-from-zero templates (which
cannot know a label set later) keep matching the pods."""


def plugin_component(arm64: bool) -> str:
    """The catalog component of the NCCL plugin image for the nodes' architecture (gIB has an arm64 image)."""
    return "nccl-plugin-arm64" if arm64 else "nccl-plugin"


def ready_marker_command(kind: FabricKind, arm64: bool = False) -> str:
    """The installer's last step: write the marker (plugin reference) where the gate reads it."""
    ref = load_fabric_catalog().image(kind, plugin_component(arm64)).reference
    return f"mkdir -p {READY_DIR} && echo '{ref}' > {READY_DIR}/{READY_FILE}"


def ready_gate(kind: FabricKind, arm64: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """(init container, volume): wait for the installer's marker naming the pinned plugin (of the nodes' arch)."""
    fab = load_fabric_catalog()
    ref = fab.image(kind, plugin_component(arm64)).reference
    wait = (
        f"until [ \"$(cat {READY_DIR}/{READY_FILE} 2>/dev/null)\" = '{ref}' ]; do "
        f"echo 'waiting for the NCCL plugin {ref} on this node'; sleep 5; done"
    )
    container = {
        "name": "fabric-ready",
        "image": fab.image(kind, "ready-gate").reference,
        "command": ["/bin/sh", "-c", wait],
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
        "volumeMounts": [{"name": "fabric-ready", "mountPath": READY_DIR, "readOnly": True}],
    }
    return container, {"name": "fabric-ready", "hostPath": {"path": READY_DIR_HOST, "type": "DirectoryOrCreate"}}
