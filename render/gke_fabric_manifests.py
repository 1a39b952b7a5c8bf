"""The Kubernetes objects of a GKE GPU fabric, as plain dicts: one ``GKENetworkParamSet`` + ``Network`` per extra
network, the NCCL plugin installer DaemonSet of each fabric (TCPX, TCPXO, gIB), the NRI device injector TCPX/TCPXO
need, and TCPX's ``nccl-config``. Pure (no Pulumi); images and versions come from the fabric catalog.

Shapes follow GKE's guides and GoogleCloudPlatform/container-engine-accelerators (gpudirect-tcpx/, gpudirect-tcpxo/,
gpudirect-rdma/, nri_device_injector/) and cluster-toolkit's examples; written here, not copied. The installers run
on the fabric pools only (selected by the gpu-cluster pool label, tolerating every taint), in kube-system, as
system-node-critical: a node without its plugin cannot run a fabric job.
"""

from __future__ import annotations

from typing import Any, Sequence

from catalog.fabric import FabricCatalog, FabricKind
from render.fabric_ready_gate import READY_DIR, READY_DIR_HOST, ready_marker_command
from render.nccl_env import TCPX_NCCL_ENV  # one copy: the nccl-config ConfigMap carries what runtimes set
from stacks.spec.stack import POOL_LABEL_KEY

NETWORK_API = "networking.gke.io/v1"
NAMESPACE = "kube-system"
LIBRARY_DIR_HOST = "/home/kubernetes/bin/nvidia/lib64"
"""Where GKE's driver libraries live on COS; the installers put the NCCL plugin next to them (containers see it at
``/usr/local/nvidia/lib64``)."""
GIB_DIR_HOST = "/home/kubernetes/bin/gib"
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpu-cluster"}
INSTALLER_NAMES = {
    FabricKind.TCPX: "nccl-tcpx-installer",
    FabricKind.TCPXO: "nccl-tcpxo-installer",
    FabricKind.RDMA: "nccl-rdma-installer",
}
INJECTOR_NAME = "device-injector"
NEEDS_INJECTOR = (FabricKind.TCPX, FabricKind.TCPXO)
"""The RxDM sidecar of TCPX/TCPXO gets the GPU devices through the NRI device injector (pod annotation
``devices.gke.io/container.<name>``); gIB needs no sidecar."""
MARTIANS_STEP = "disable-log-martians"
READY_MOUNT = {"name": "fabric-ready", "mountPath": READY_DIR}
READY_VOLUME = {"name": "fabric-ready", "hostPath": {"path": READY_DIR_HOST, "type": "DirectoryOrCreate"}}
"""Where the installer writes its ready marker, last, once the plugin is on the node (``render/fabric_ready_gate.py``
``READY_FILE``): fabric jobs wait for it."""


def param_set(name: str, vpc: Any, subnet: Any, device_mode: str) -> dict[str, Any]:
    return {
        "apiVersion": NETWORK_API,
        "kind": "GKENetworkParamSet",
        "metadata": {"name": name, "labels": MANAGED_BY},
        "spec": {"vpc": vpc, "vpcSubnet": subnet, "deviceMode": device_mode},
    }


def network(name: str) -> dict[str, Any]:
    return {
        "apiVersion": NETWORK_API,
        "kind": "Network",
        "metadata": {"name": name, "labels": MANAGED_BY},
        "spec": {
            "type": "Device",
            "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": name},
        },
    }


def _on_pools(pools: Sequence[str]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": POOL_LABEL_KEY, "operator": "In", "values": sorted(pools)}]}
                ]
            }
        }
    }


def _host_path(name: str, path: str, kind: str | None = None) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path, **({"type": kind} if kind else {})}}


def _pause(image: str) -> dict[str, Any]:
    """The installers work in init containers; a pause container keeps the pod (and its Ready status) up."""
    return {"name": "pause", "image": image, "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}


UPSTREAM = "GoogleCloudPlatform/container-engine-accelerators@992db81257553607f1477945f1b3219632991829"
HOST_ACCESS: dict[str, tuple[bool, bool, str]] = {
    # name: (hostNetwork, hostPID, why). Upstream's manifests set both on every one of these DaemonSets
    # (gpudirect-tcpx/nccl-tcpx-installer.yaml, gpudirect-tcpxo/nccl-tcpxo-installer.yaml,
    # gpudirect-rdma/nccl-rdma-installer.yaml and -a4x.yaml, nri_device_injector/nri-device-injector.yaml at UPSTREAM);
    # what each container does needs less.
    "nccl-tcpx-installer": (
        False,
        False,
        "container_entry.sh install only copies the plugin into the /var/lib and "
        "/home/kubernetes/bin host paths (GCP's Slurm recipes run the same image with just "
        "`-v /var/lib:/var/lib`)",
    ),
    "nccl-tcpxo-installer": (
        False,
        True,
        "the aperture-devices init container runs `nsenter -at 1` (modprobe and "
        "bind mounts in the host's mount namespace), which needs the host's PID 1; the install "
        "step only copies files",
    ),
    "nccl-rdma-installer": (
        True,
        False,
        "disable-log-martians writes /proc/sys/net/ipv4/conf/gpu<i>rdma0/"
        "log_martians, a sysctl of the host's network namespace where the RDMA NICs are; no "
        "nsenter",
    ),
    "nccl-rdma-installer-arm64": (
        False,
        False,
        "A4X's installer has no disable-log-martians step (upstream's A4X "
        "installers have none): its install step only copies files into host paths",
    ),
    INJECTOR_NAME: (
        False,
        False,
        "talks to containerd over the NRI socket (/var/run/nri host path) and reads /dev "
        "(host path); nri_device_injector.go opens no network listener and reads no other process",
    ),
}
"""Host namespaces per DaemonSet: only what its containers use (``tests/components/test_installer_host_access.py``
derives the same from the rendered commands)."""


def _daemonset(
    name: str, pools: Sequence[str], containers: list[dict], volumes: list[dict], init: list[dict] | None = None
) -> dict[str, Any]:
    labels = {"k8s-app": name}
    host_network, host_pid, _ = HOST_ACCESS[name]
    host = {**({"hostNetwork": True} if host_network else {}), **({"hostPID": True} if host_pid else {})}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {**labels, **MANAGED_BY}},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "affinity": _on_pools(pools),
                    "tolerations": [{"operator": "Exists"}],
                    **host,
                    "volumes": volumes,
                    **({"initContainers": init} if init else {}),
                    "containers": containers,
                },
            },
        },
    }


def martians_command(rdma_nics: int) -> str:
    """Turn off martian-packet logging on each RDMA NIC the machine has (``gpu<i>rdma0``, i < ``rdma_nics``). Writing
    a NIC the machine lacks fails the init container and the plugin is never installed (A4X has 4, not 8)."""
    return "; ".join(f"echo 0 > /proc/sys/net/ipv4/conf/gpu{i}rdma0/log_martians" for i in range(rdma_nics))


def installer(
    kind: FabricKind, pools: Sequence[str], fab: FabricCatalog, arch: str = "x86_64", rdma_nics: int = 0
) -> dict[str, Any]:
    """The NCCL plugin installer DaemonSet of ``kind`` on ``pools`` (all of ``arch``: the gIB plugin has a separate
    arm64 image, ``nccl-plugin-arm64``, for Grace hosts such as A4X; its DaemonSet is ``<name>-arm64``).
    ``rdma_nics``: the RDMA NICs of the pools' machine type (gIB only; from the fabric catalog)."""
    component = "nccl-plugin-arm64" if arch == "arm64" else "nccl-plugin"
    plugin, pause = fab.image(kind, component).reference, fab.image(kind, "pause").reference
    privileged = {"privileged": True}
    requests = {"requests": {"cpu": "150m"}}
    if kind == FabricKind.RDMA:
        if rdma_nics < 1:
            raise ValueError(f"the gIB installer on {sorted(pools)} needs the machine's RDMA NIC count")
        init: list[dict[str, Any]] = [
            {
                "name": "nccl-rdma-installer",
                "image": plugin,
                "securityContext": privileged,
                "resources": requests,
                "volumeMounts": [
                    {"name": "library-dir-host", "mountPath": "/usr/local/home/kubernetes/bin/nvidia/lib64"},
                    {"name": "gib", "mountPath": "/usr/local/home/kubernetes/bin/gib"},
                    READY_MOUNT,
                ],
                "command": [
                    "/bin/sh",
                    "-c",
                    f"set -ex; {fab.entrypoint(kind, 'nccl-plugin').command()}; "
                    "cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64; "
                    "cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib; "
                    + ready_marker_command(kind, arch == "arm64"),
                ],
            }
        ]
        if arch != "arm64":
            # gIB's guide turns off martian-packet logging on the RDMA NICs (RoCE traffic trips it) on A3 Ultra and A4.
            # Upstream's A4X installers have no such step (container-engine-accelerators
            # gpudirect-rdma/nccl-rdma-installer-a4x.yaml, cluster-toolkit examples/gke-a4x/nccl-installer.yaml.tftpl):
            # a write to a NIC the Grace host does not name that way would fail the init container and stall every job
            init.insert(
                0,
                {
                    "name": MARTIANS_STEP,
                    "image": fab.image(kind, "host-setup").reference,
                    "securityContext": privileged,
                    "command": ["/bin/sh", "-c", martians_command(rdma_nics)],
                },
            )
        volumes = [
            _host_path("library-dir-host", LIBRARY_DIR_HOST, "DirectoryOrCreate"),
            _host_path("gib", GIB_DIR_HOST, "DirectoryOrCreate"),
            READY_VOLUME,
        ]
        name = INSTALLER_NAMES[kind] + ("-arm64" if arch == "arm64" else "")
        return _daemonset(name, pools, [_pause(pause)], volumes, init)
    lib = "tcpx" if kind == FabricKind.TCPX else "tcpxo"
    install = {
        "name": INSTALLER_NAMES[kind],
        "image": plugin,
        "securityContext": privileged,
        "resources": requests,
        "volumeMounts": [
            {"name": "var-lib", "mountPath": "/var/lib"},
            {"name": "library-dir-host", "mountPath": "/usr/local"},
            READY_MOUNT,
        ],
        "command": [
            "/bin/sh",
            "-c",
            f"set -ex; {fab.entrypoint(kind, 'nccl-plugin').command()}; "
            f"mkdir -p /usr/local/nvidia/lib64; cp -r /var/lib/{lib}/lib64/. /usr/local/nvidia/lib64; "
            + ready_marker_command(kind),
        ],
    }
    init = [install]
    if kind == FabricKind.TCPXO:
        # TCPXO's LLCM needs the NICs' aperture BARs bound under /dev/aperture_devices (pods mount that path)
        init.insert(
            0,
            {
                "name": "aperture-devices",
                "image": fab.image(kind, "host-setup").reference,
                "securityContext": privileged,
                "command": ["nsenter", "-at", "1", "--", "sh", "-c", APERTURE_SETUP],
            },
        )
    volumes = [_host_path("var-lib", "/var/lib"), _host_path("library-dir-host", "/home/kubernetes/bin"), READY_VOLUME]
    return _daemonset(INSTALLER_NAMES[kind], pools, [_pause(pause)], volumes, init)


APERTURE_SETUP = (
    "modprobe import-helper; mkdir -p /dev/aperture_devices; "
    "for bdf in $(lspci -nn -D | grep '1ae0:0084' | cut -d' ' -f1); do "
    "mkdir -p /dev/aperture_devices/$bdf; umount -R /dev/aperture_devices/$bdf 2>/dev/null || true; "
    "mount --bind $(readlink -f /sys/bus/pci/devices/$bdf) /dev/aperture_devices/$bdf; done; "
    "chmod -R a+r /dev/aperture_devices; chmod a+rw /dev/aperture_devices/*/resource* || true"
)
"""Bind each gVNIC GPU NIC's PCI BAR (vendor 1ae0 device 0084) under /dev/aperture_devices, on the host."""


def device_injector(pools: Sequence[str], fab: FabricCatalog, kind: FabricKind) -> dict[str, Any]:
    """The NRI device injector: adds the devices a pod's ``devices.gke.io/container.<name>`` annotation lists."""
    image = fab.image(kind, "nri-device-injector").reference
    container = {
        "name": INJECTOR_NAME,
        "image": image,
        "securityContext": {"privileged": True},
        "resources": {"requests": {"cpu": "150m"}},
        "volumeMounts": [{"name": "dev", "mountPath": "/dev"}, {"name": "nri", "mountPath": "/var/run/nri"}],
    }
    return _daemonset(INJECTOR_NAME, pools, [container], [_host_path("dev", "/dev"), _host_path("nri", "/var/run/nri")])


def nccl_config() -> dict[str, Any]:
    """TCPX's ``nccl-config`` ConfigMap: the NCCL environment a TCPX job needs, for jobs not rendered by us."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "nccl-config", "namespace": NAMESPACE, "labels": MANAGED_BY},
        "data": dict(TCPX_NCCL_ENV),
    }
