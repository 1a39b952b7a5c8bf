"""What a pod on a fabric pool needs to use the fabric, from the pool's facts: GKE multi-network annotations, the
TCPX/TCPXO RxDM sidecar and its device list, the NCCL env, volumes and mounts (TCPX/TCPXO libraries, gIB with
``NCCL_NET=gIB``), the DRA claim of a GKE-managed RDMA pool (``render/fabric_claim.py``), or on EKS the ``vpc.amazonaws.com/efa`` request and libfabric env. Pure: no Pulumi.

The Trainer runtime (``render/trainer.py``) and the Slinky NodeSet (``render/slurm_values.py``) both apply
the same ``PodFabric``, so ``TrainJob`` and ``srun`` take the same path. Sources: GKE's "Maximize GPU network
bandwidth" guides (TCPX, TCPXO), container-engine-accelerators gpudirect-tcpxo/README.md (NCCL configs of the
v1.0.14 / RxDM v1.0.20 release), cluster-toolkit ``gpu-direct-workload/scripts/enable-tcpxo-in-workload.py`` and
``examples/gke-a4/nccl-jobset-example.yaml`` (gIB), AWS's EKS EFA guide (EFA request, FI_* env, hugepages).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from catalog.fabric import FabricKind, load_fabric_catalog
from catalog.fabric_images import load_fabric_image_tables
from render.compute_domain import pod_claim as imex_pod_claim
from render.fabric_image_check import image_check
from render.fabric_claim import pod_claim
from stacks.plan.fabric import EFA_NODE_HUGEPAGES  # noqa: F401  (what an EFA node advertises: planned)
from stacks.plan.facts import PoolFacts

EFA_RESOURCE = "vpc.amazonaws.com/efa"
EFA_HUGEPAGES = {"hugepages-2Mi": "5120Mi"}
"""Amazon EKS user guide "Run machine learning training on Amazon EKS with Elastic Fabric Adapter"
(docs.aws.amazon.com/eks/latest/userguide/node-efa.html): EFA nodes pre-allocate 5,128 2-MiB huge pages and the
guide's EFA pods request ``hugepages-2Mi: 5120Mi`` next to ``vpc.amazonaws.com/efa``; libfabric's EFA provider
takes its buffers from that pool."""
HUGEPAGES_MEMORY_REQUEST = {"memory": "8000Mi"}
"""Kubernetes refuses a container that requests huge pages but neither cpu nor memory ("HugePages require cpu or
memory"); the same AWS guide's pods request ``memory: 8000Mi``. Only a request (no limit), and only where the
container requests neither already (the Slurm NodeSet's slurmd requests its whole node)."""
DEFAULT_INTERFACE_ANNOTATION = "networking.gke.io/default-interface"
INTERFACES_ANNOTATION = "networking.gke.io/interfaces"
DEVICES_ANNOTATION = "devices.gke.io/container.{container}"
SIDECAR = {FabricKind.TCPX: "tcpx-daemon", FabricKind.TCPXO: "tcpxo-daemon"}
NVIDIA_LIB64 = "/usr/local/nvidia/lib64"
GIB_DIR = "/usr/local/gib"
GIB_ENV_SCRIPT = f"{GIB_DIR}/scripts/set_nccl_env.sh"

TCPXO_NCCL_ENV = {
    # container-engine-accelerators gpudirect-tcpxo/README.md, release Nov 19, 2025 (plugin v1.0.14, RxDM v1.0.20)
    "NCCL_FASTRAK_CTRL_DEV": "eth0",
    "NCCL_FASTRAK_IFNAME": "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8",
    "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_CROSS_NIC": "0",
    "NCCL_PROTO": "Simple,LL128",
    "NCCL_MIN_NCHANNELS": "4",
    "NCCL_TUNER_PLUGIN": "libnccl-tuner.so",
    "NCCL_TUNER_CONFIG_PATH": f"{NVIDIA_LIB64}/a3plus_tuner_config.textproto",
    "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": f"{NVIDIA_LIB64}/a3plus_guest_config.textproto",
    "NCCL_NVLSTREE_MAX_CHUNKSIZE": "131072",
    "NCCL_P2P_NET_CHUNKSIZE": "524288",
    "NCCL_P2P_PCI_CHUNKSIZE": "524288",
    "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_FASTRAK_NUM_FLOWS": "2",
    "NCCL_FASTRAK_USE_SNAP": "1",
    "NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS": "600000",
    "NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL": "0",
    "NCCL_BUFFSIZE": "8388608",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING": "0",
    "NCCL_FASTRAK_USE_LLCM": "1",
    "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY": "/dev/aperture_devices",
    "NCCL_NVLS_ENABLE": "1",
}
TCPX_NCCL_ENV = {
    # GoogleCloudPlatform/container-engine-accelerators@0e5609b0 gpudirect-tcpx/nccl-config.yaml, "Finalize NCCL config
    # for GKE 1.34+" (run-nccl.sh): Ring,Tree (was Ring), FORCE_ACK dropped as deprecated, flow steering waits
    # 500000 us (the older GKE/GCE guides' 50000 is superseded). The RxDM socket stays at /run/tcpx (upstream picks a
    # prefix with unix_client_prefix_selection.sh; the sidecar here serves it there).
    "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_GPUDIRECTTCPX_CTRL_DEV": "eth0",
    "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": "eth1,eth2,eth3,eth4",
    "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX": "/run/tcpx",
    "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS": "500000",
    "NCCL_CROSS_NIC": "0",
    "NCCL_ALGO": "Ring,Tree",
    "NCCL_PROTO": "Simple",
    "NCCL_NSOCKS_PERTHREAD": "4",
    "NCCL_SOCKET_NTHREADS": "1",
    "NCCL_DYNAMIC_CHUNK_SIZE": "524288",
    "NCCL_P2P_NET_CHUNKSIZE": "524288",
    "NCCL_P2P_PCI_CHUNKSIZE": "524288",
    "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_BUFFSIZE": "4194304",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_P2P_PXN_LEVEL": "0",
    "NCCL_GPUDIRECTTCPX_TX_BINDINGS": "eth1:8-21,112-125;eth2:8-21,112-125;eth3:60-73,164-177;eth4:60-73,164-177",
    "NCCL_GPUDIRECTTCPX_RX_BINDINGS": "eth1:22-35,126-139;eth2:22-35,126-139;eth3:74-87,178-191;eth4:74-87,178-191",
}
GIB_NCCL_ENV = {
    # What gIB v1.1.0's set_nccl_env.sh sets, as GoogleCloudPlatform/cluster-toolkit@10470803 writes it out for
    # entrypoints that never source the script (examples/machine-learning/a3-ultragpu-8g/nemo-framework/Dockerfile:
    # "Set the following to match what is in /usr/local/gib/scripts/set_nccl_env.sh"; a4-highgpu-8g/a4high-vm.yaml).
    # Set in the pod env so `torchrun …` or `python …` get it too; BASH_ENV still sources the script (it wins).
    "NCCL_CROSS_NIC": "0",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_P2P_NET_CHUNKSIZE": "131072",
    "NCCL_NVLS_CHUNKSIZE": "524288",
    "NCCL_IB_ADAPTIVE_ROUTING": "1",
    "NCCL_IB_QPS_PER_CONNECTION": "4",
    "NCCL_IB_TC": "52",
    "NCCL_IB_FIFO_TC": "84",
}
GIB_TUNER_CONFIG = {"a3-ultragpu-8g": "tuner_config_a3u.txtpb", "a4-highgpu-8g": "tuner_config.txtpb"}
"""gIB's tuner config per machine (same cluster-toolkit files: the A3 Ultra Dockerfile, the A4 VM blueprint)."""
SHM_MAX_GIB = 256
"""Upstream's fabric jobs mount a Memory emptyDir at /dev/shm: 250Gi in cluster-toolkit@10470803
examples/gke-a3-ultragpu/ and gke-a4/nccl-jobset-example.yaml, 1Gi in the TCPXO sample job. Without one a container
gets the runtime's 64 MiB, which NCCL's shared-memory transport and PyTorch's DataLoader workers outgrow."""


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


def _ready_gate(kind: FabricKind, arm64: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """(init container, volume): wait for the installer's marker naming the pinned plugin (of the nodes' arch)."""
    fab = load_fabric_catalog()
    ref = fab.image(kind, plugin_component(arm64)).reference
    wait = (f"until [ \"$(cat {READY_DIR}/{READY_FILE} 2>/dev/null)\" = '{ref}' ]; do "
            f"echo 'waiting for the NCCL plugin {ref} on this node'; sleep 5; done")
    container = {"name": "fabric-ready", "image": fab.image(kind, "ready-gate").reference,
                 "command": ["/bin/sh", "-c", wait],
                 "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                 "volumeMounts": [{"name": "fabric-ready", "mountPath": READY_DIR, "readOnly": True}]}
    return container, {"name": "fabric-ready", "hostPath": {"path": READY_DIR_HOST, "type": "DirectoryOrCreate"}}


def shm_gib(ram_gib: int | None, override: int | None = None) -> int:
    """The /dev/shm size of a fabric job: ``override`` (``fabric.sharedMemoryGiB``), else an eighth of the node's
    RAM, at most 256 GiB (a3-megagpu-8g: 234 GiB; a3-ultragpu-8g, p5.48xlarge: 256 GiB), at least 1 GiB."""
    if override is not None:
        return override
    return max(1, min(SHM_MAX_GIB, (ram_gib or 8) // 8))


EFA_ENV = {
    # AWS "Run machine learning training on Amazon EKS with Elastic Fabric Adapter"; aws-ofi-nccl docs
    "FI_PROVIDER": "efa",
    "FI_EFA_USE_DEVICE_RDMA": "1",
    "FI_EFA_FORK_SAFE": "1",
    "NCCL_SOCKET_IFNAME": "^lo,docker",
}


@dataclass(frozen=True)
class PodFabric:
    """Additions to a pod template (and its main container) for the pool's fabric."""

    summary: str
    annotations: dict[str, str] = field(default_factory=dict)
    sidecars: tuple[dict[str, Any], ...] = ()
    """Native sidecars (``initContainers`` with ``restartPolicy: Always``): they live as long as the job's pod."""
    env: dict[str, str] = field(default_factory=dict)
    mounts: tuple[dict[str, Any], ...] = ()
    volumes: tuple[dict[str, Any], ...] = ()
    resources: dict[str, int | str] = field(default_factory=dict)
    """Extra requests = limits for the main container (EFA interfaces, huge pages)."""
    min_requests: dict[str, str] = field(default_factory=dict)
    """Requests (no limits) added only when the container requests neither cpu nor memory."""
    init: tuple[dict[str, Any], ...] = ()
    """Init containers that run (to completion) before the sidecars and the job: the ready gate."""
    image: str | None = None
    """``fabric.runtimeImage``: the training container's image (on a NodeSet: slurmd's, where tasks run)."""
    resource_claims: tuple[dict[str, str], ...] = ()
    """DRA claims of the pod (``spec.resourceClaims``), each also listed in the main container's
    ``resources.claims``: the RDMA NICs of a GKE-managed fabric (``render/fabric_claim.py``)."""

    @property
    def host_access(self) -> bool:
        """hostPath volumes or added capabilities, which Pod Security baseline refuses: the team namespace gets the
        fabric admission policy instead (``render/admission.py``). Library mounts are read-only, which that
        policy then requires. A Memory emptyDir (/dev/shm) alone needs neither."""
        return any("hostPath" in v for v in self.volumes) or bool(self.sidecars)

    def env_list(self) -> list[dict[str, str]]:
        return [{"name": k, "value": v} for k, v in self.env.items()]


def interfaces(pool: PoolFacts) -> str:
    """``networking.gke.io/interfaces``: eth0 on the default network, then each extra network in NIC order."""
    assert pool.fabric is not None
    nics = [{"interfaceName": "eth0", "network": "default"}]
    nics += [{"interfaceName": n.interface, "network": n.k8s_name} for n in pool.fabric.networks]
    return json.dumps(nics, separators=(",", ":"))


def device_list(gpus: int, extra: tuple[str, ...]) -> str:
    """The NRI device injector's YAML list: every GPU, the control devices, plus ``extra``."""
    paths = [f"/dev/nvidia{i}" for i in range(gpus)] + ["/dev/nvidiactl", "/dev/nvidia-uvm", *extra]
    return "".join(f"- path: {p}\n" for p in paths)


def _host(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path}}


SHM_VOLUME = "dshm"


def _shm(pool: PoolFacts) -> tuple[dict[str, Any], dict[str, Any]]:
    """(mount, volume): a Memory emptyDir at /dev/shm, sized by :func:`shm_gib`."""
    assert pool.fabric is not None
    size = shm_gib(pool.machine.ram_gib, pool.fabric.shm_gib)
    return ({"name": SHM_VOLUME, "mountPath": "/dev/shm"},
            {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": f"{size}Gi"}})


def _gke_annotations(pool: PoolFacts) -> dict[str, str]:
    return {DEFAULT_INTERFACE_ANNOTATION: "eth0", INTERFACES_ANNOTATION: interfaces(pool)}


def _tcpxo(pool: PoolFacts) -> PodFabric:
    fab = load_fabric_catalog()
    shm_mount, shm_volume = _shm(pool)
    sidecar = {
        "name": SIDECAR[FabricKind.TCPXO], "image": fab.image(FabricKind.TCPXO, "rxdm").reference,
        "restartPolicy": "Always",
        # upstream's manifests of this release chmod the entry script first (catalog/data/fabric-entrypoints.csv)
        "command": ["/bin/sh", "-c", fab.entrypoint(FabricKind.TCPXO, "rxdm").command(" && exec ")],
        "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_BIND_SERVICE"]}},
        "env": [{"name": "LD_LIBRARY_PATH", "value": NVIDIA_LIB64}],
        "volumeMounts": [{"name": "nvtcpxo-libraries", "mountPath": "/usr/local/nvidia", "readOnly": True},
                         {"name": "nvtcpxo-sys", "mountPath": "/hostsysfs"},
                         {"name": "nvtcpxo-proc-sys", "mountPath": "/hostprocsysfs"}]}
    return PodFabric(
        summary="GPUDirect-TCPXO: 8 NICs, tcpxo-daemon (RxDM) sidecar, NCCL FasTrak env",
        annotations={**_gke_annotations(pool), DEVICES_ANNOTATION.format(container=SIDECAR[FabricKind.TCPXO]):
                     device_list(pool.gpus_per_node, ("/dev/dmabuf_import_helper",))},
        sidecars=(sidecar,), env={"LD_LIBRARY_PATH": NVIDIA_LIB64, "NCCL_LIB_DIR": NVIDIA_LIB64, **TCPXO_NCCL_ENV},
        mounts=({"name": "aperture-devices", "mountPath": "/dev/aperture_devices"}, shm_mount),
        volumes=(_host("nvtcpxo-libraries", "/home/kubernetes/bin/nvidia"), _host("nvtcpxo-sys", "/sys"),
                 _host("nvtcpxo-proc-sys", "/proc/sys"), _host("aperture-devices", "/dev/aperture_devices"),
                 shm_volume))


def _tcpx(pool: PoolFacts) -> PodFabric:
    fab = load_fabric_catalog()
    shm_mount, shm_volume = _shm(pool)
    sidecar = {
        "name": SIDECAR[FabricKind.TCPX], "image": fab.image(FabricKind.TCPX, "rxdm").reference,
        "restartPolicy": "Always",
        "command": ["/tcpgpudmarxd/build/app/tcpgpudmarxd", "--gpu_nic_preset", "a3vm", "--gpu_shmem_type", "fd",
                    "--uds_path", "/run/tcpx", "--setup_param", "--verbose 128 2 0 "],
        "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}},
        "env": [{"name": "LD_LIBRARY_PATH", "value": NVIDIA_LIB64}],
        "volumeMounts": [{"name": "tcpx-libraries", "mountPath": NVIDIA_LIB64, "readOnly": True},
                         {"name": "tcpx-socket", "mountPath": "/run/tcpx"},
                         {"name": "tcpx-sys", "mountPath": "/hostsysfs"},
                         {"name": "tcpx-proc-sys", "mountPath": "/hostprocsysfs"}]}
    return PodFabric(
        summary="GPUDirect-TCPX: 4 NICs, tcpx-daemon (RxDM) sidecar, NCCL TCPX env",
        annotations={**_gke_annotations(pool), DEVICES_ANNOTATION.format(container=SIDECAR[FabricKind.TCPX]):
                     device_list(pool.gpus_per_node, ())},
        sidecars=(sidecar,), env={"LD_LIBRARY_PATH": NVIDIA_LIB64, **TCPX_NCCL_ENV},
        # the GPU container sees the socket RxDM serves and the TCPX plugin the installer put on the host
        # (container-engine-accelerators gpudirect-tcpx/nccl-test*.yaml; cluster-toolkit enable-tcpx-in-workload.py)
        mounts=({"name": "tcpx-socket", "mountPath": "/run/tcpx"},
                {"name": "tcpx-libraries", "mountPath": NVIDIA_LIB64, "readOnly": True}, shm_mount),
        volumes=(_host("tcpx-libraries", "/home/kubernetes/bin/nvidia/lib64"), {"name": "tcpx-socket", "emptyDir": {}},
                 _host("tcpx-sys", "/sys"), _host("tcpx-proc-sys", "/proc/sys"), shm_volume))


def _rdma(pool: PoolFacts) -> PodFabric:
    assert pool.fabric is not None
    claim = pod_claim(pool)  # GKE-managed networks: the NICs come through a DRA claim, not annotations
    shm_mount, shm_volume = _shm(pool)
    tuner = GIB_TUNER_CONFIG.get(pool.machine.machine_type)
    return PodFabric(
        summary=f"GPUDirect RDMA on GKE-managed networks: DRA claim {claim['resourceClaimTemplateName']} (every "
        "RDMA NIC), gIB plugin, NCCL_NET=gIB" if claim else
        "GPUDirect RDMA: 9 NICs (gvnic-1, rdma-0…7), gIB plugin, NCCL_NET=gIB",
        annotations={} if pool.fabric.managed else _gke_annotations(pool),
        resource_claims=(claim,) if claim else (),
        # NCCL_NET=gIB makes a broken fabric fail instead of falling back to TCP; the tuning of set_nccl_env.sh is
        # in the env itself (every entrypoint), and BASH_ENV still makes every `bash -c` command source the script
        env={"NCCL_NET": "gIB", "BASH_ENV": GIB_ENV_SCRIPT, "LD_LIBRARY_PATH": f"{GIB_DIR}/lib64:{NVIDIA_LIB64}",
             **GIB_NCCL_ENV, **({"NCCL_TUNER_CONFIG_PATH": f"{GIB_DIR}/configs/{tuner}"} if tuner else {})},
        mounts=({"name": "gib", "mountPath": GIB_DIR, "readOnly": True}, shm_mount),
        volumes=(_host("gib", "/home/kubernetes/bin/gib"), shm_volume))


def _efa(pool: PoolFacts) -> PodFabric:
    assert pool.fabric is not None
    count = pool.fabric.gpu_nics
    shm_mount, shm_volume = _shm(pool)
    return PodFabric(summary=f"EFA: {count} × {EFA_RESOURCE}, 5120Mi of 2 MiB huge pages, libfabric env",
                     env=dict(EFA_ENV), resources={EFA_RESOURCE: count, **EFA_HUGEPAGES},
                     min_requests=dict(HUGEPAGES_MEMORY_REQUEST), mounts=(shm_mount,), volumes=(shm_volume,))


def pod_fabric(pool: PoolFacts) -> PodFabric | None:
    """None when the pool has no fabric, or when on EKS nothing advertises ``vpc.amazonaws.com/efa`` (no EFA device
    plugin: a request would leave the pods Pending forever). On a rack-scale NVLink pool (GB200 NVL72) the pod also
    claims an IMEX channel of the pool's ComputeDomain (``render/compute_domain.py``)."""
    network = _network_fabric(pool)
    channel = imex_pod_claim(pool)
    if channel is None:
        return network
    if network is None:
        return PodFabric(summary="IMEX channel (ComputeDomain)", resource_claims=(channel,))
    return replace(network, summary=f"{network.summary}; IMEX channel (ComputeDomain)",
                   resource_claims=(*network.resource_claims, channel))


def _network_fabric(pool: PoolFacts) -> PodFabric | None:
    if pool.fabric is None:
        return None
    kind = pool.fabric.kind
    if kind == FabricKind.EFA and not (pool.runtime is not None and pool.runtime.efa_device_plugin):
        return None
    made = {FabricKind.TCPX: _tcpx, FabricKind.TCPXO: _tcpxo, FabricKind.RDMA: _rdma, FabricKind.EFA: _efa}[kind](pool)
    if kind != FabricKind.EFA:  # EFA: the device plugin advertises the devices only once they work
        gate, volume = _ready_gate(kind, pool.arm64)
        made = replace(made, init=(gate,), volumes=(*made.volumes, volume))
    if pool.fabric.runtime_image:
        made = replace(made, image=pool.fabric.runtime_image)
    build = load_fabric_image_tables().build(pool.fabric.runtime_image_build or "")
    if build is not None and pool.fabric.runtime_image:  # first: nothing starts from an image that is not the build
        note, check = image_check(build, pool.fabric.runtime_image)
        made = replace(made, annotations={**made.annotations, **note}, init=(check, *made.init))
    return made


def apply_to_container(container: dict[str, Any], fabric: PodFabric) -> dict[str, Any]:
    """``container`` with the fabric's env, mounts, extra requests = limits and DRA claims added (existing keys
    kept)."""
    out = dict(container)
    if fabric.env:
        out["env"] = [*container.get("env", []), *fabric.env_list()]
    if fabric.mounts:
        out["volumeMounts"] = [*container.get("volumeMounts", []), *fabric.mounts]
    if fabric.resources:
        res = container.get("resources", {})
        extra = {k: v for k, v in fabric.resources.items()}
        requests = {**res.get("requests", {}), **extra}
        if not {"cpu", "memory"} & set(requests):
            requests.update(fabric.min_requests)
        out["resources"] = {"requests": requests, "limits": {**res.get("limits", {}), **extra}}
    if fabric.resource_claims:
        res = out.get("resources", {})
        out["resources"] = {**res, "claims": [*res.get("claims", []),
                                              *({"name": c["name"]} for c in fabric.resource_claims)]}
    return out


def apply_to_pod_spec(spec: dict[str, Any], fabric: PodFabric) -> dict[str, Any]:
    """``spec`` with the fabric's sidecars, volumes and DRA claims added."""
    out = dict(spec)
    if fabric.sidecars or fabric.init:  # the gate first: RxDM reads the plugin's files too
        out["initContainers"] = [*fabric.init, *spec.get("initContainers", []), *fabric.sidecars]
    if fabric.volumes:
        out["volumes"] = [*spec.get("volumes", []), *fabric.volumes]
    if fabric.resource_claims:
        out["resourceClaims"] = [*spec.get("resourceClaims", []), *fabric.resource_claims]
    return out
