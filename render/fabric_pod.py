"""What a pod on a fabric pool needs to use the fabric, from the pool's facts: GKE multi-network annotations, the
TCPX/TCPXO RxDM sidecar and its device list, the NCCL env, volumes and mounts (TCPX/TCPXO libraries, gIB with
``NCCL_NET=gIB``), the DRA claim of a GKE-managed RDMA pool (``render/fabric_claim.py``), or on EKS the ``vpc.amazonaws.com/efa`` request and libfabric env. Pure: no Pulumi.

The Trainer runtime (``render/trainer.py``) and the Slinky NodeSet (``render/slurm_values.py``) both apply
the same ``PodFabric``, so ``TrainJob`` and ``srun`` take the same path. Sources: GKE's "Maximize GPU network
bandwidth" guides (TCPX, TCPXO), container-engine-accelerators gpudirect-tcpxo/README.md (NCCL configs of the
v1.0.14 / RxDM v1.0.20 release), cluster-toolkit ``gpu-direct-workload/scripts/enable-tcpxo-in-workload.py`` and
``examples/gke-a4/nccl-jobset-example.yaml`` (gIB), AWS's EKS EFA guide (EFA request, FI_* env, hugepages).
The NCCL and libfabric env tables live in ``render/nccl_env.py``, the NCCL plugin's ready gate in
``render/fabric_ready_gate.py``.
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
from render.fabric_ready_gate import ready_gate
from render.nccl_env import EFA_ENV, GIB_NCCL_ENV, GIB_TUNER_CONFIG, NVIDIA_LIB64, TCPX_NCCL_ENV, TCPXO_NCCL_ENV
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
GIB_DIR = "/usr/local/gib"
GIB_ENV_SCRIPT = f"{GIB_DIR}/scripts/set_nccl_env.sh"

SHM_MAX_GIB = 256
"""Upstream's fabric jobs mount a Memory emptyDir at /dev/shm: 250Gi in cluster-toolkit@10470803
examples/gke-a3-ultragpu/ and gke-a4/nccl-jobset-example.yaml, 1Gi in the TCPXO sample job. Without one a container
gets the runtime's 64 MiB, which NCCL's shared-memory transport and PyTorch's DataLoader workers outgrow."""


def shm_gib(ram_gib: int | None, override: int | None = None) -> int:
    """The /dev/shm size of a fabric job: ``override`` (``fabric.sharedMemoryGiB``), else an eighth of the node's
    RAM, at most 256 GiB (a3-megagpu-8g: 234 GiB; a3-ultragpu-8g, p5.48xlarge: 256 GiB), at least 1 GiB."""
    if override is not None:
        return override
    return max(1, min(SHM_MAX_GIB, (ram_gib or 8) // 8))


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
    return (
        {"name": SHM_VOLUME, "mountPath": "/dev/shm"},
        {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": f"{size}Gi"}},
    )


def _gke_annotations(pool: PoolFacts) -> dict[str, str]:
    return {DEFAULT_INTERFACE_ANNOTATION: "eth0", INTERFACES_ANNOTATION: interfaces(pool)}


def _tcpxo(pool: PoolFacts) -> PodFabric:
    fab = load_fabric_catalog()
    shm_mount, shm_volume = _shm(pool)
    sidecar = {
        "name": SIDECAR[FabricKind.TCPXO],
        "image": fab.image(FabricKind.TCPXO, "rxdm").reference,
        "restartPolicy": "Always",
        # upstream's manifests of this release chmod the entry script first (catalog/data/fabric-entrypoints.csv)
        "command": ["/bin/sh", "-c", fab.entrypoint(FabricKind.TCPXO, "rxdm").command(" && exec ")],
        "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_BIND_SERVICE"]}},
        "env": [{"name": "LD_LIBRARY_PATH", "value": NVIDIA_LIB64}],
        "volumeMounts": [
            {"name": "nvtcpxo-libraries", "mountPath": "/usr/local/nvidia", "readOnly": True},
            {"name": "nvtcpxo-sys", "mountPath": "/hostsysfs"},
            {"name": "nvtcpxo-proc-sys", "mountPath": "/hostprocsysfs"},
        ],
    }
    return PodFabric(
        summary="GPUDirect-TCPXO: 8 NICs, tcpxo-daemon (RxDM) sidecar, NCCL FasTrak env",
        annotations={
            **_gke_annotations(pool),
            DEVICES_ANNOTATION.format(container=SIDECAR[FabricKind.TCPXO]): device_list(
                pool.gpus_per_node, ("/dev/dmabuf_import_helper",)
            ),
        },
        sidecars=(sidecar,),
        env={"LD_LIBRARY_PATH": NVIDIA_LIB64, "NCCL_LIB_DIR": NVIDIA_LIB64, **TCPXO_NCCL_ENV},
        mounts=({"name": "aperture-devices", "mountPath": "/dev/aperture_devices"}, shm_mount),
        volumes=(
            _host("nvtcpxo-libraries", "/home/kubernetes/bin/nvidia"),
            _host("nvtcpxo-sys", "/sys"),
            _host("nvtcpxo-proc-sys", "/proc/sys"),
            _host("aperture-devices", "/dev/aperture_devices"),
            shm_volume,
        ),
    )


def _tcpx(pool: PoolFacts) -> PodFabric:
    fab = load_fabric_catalog()
    shm_mount, shm_volume = _shm(pool)
    sidecar = {
        "name": SIDECAR[FabricKind.TCPX],
        "image": fab.image(FabricKind.TCPX, "rxdm").reference,
        "restartPolicy": "Always",
        "command": [
            "/tcpgpudmarxd/build/app/tcpgpudmarxd",
            "--gpu_nic_preset",
            "a3vm",
            "--gpu_shmem_type",
            "fd",
            "--uds_path",
            "/run/tcpx",
            "--setup_param",
            "--verbose 128 2 0 ",
        ],
        "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}},
        "env": [{"name": "LD_LIBRARY_PATH", "value": NVIDIA_LIB64}],
        "volumeMounts": [
            {"name": "tcpx-libraries", "mountPath": NVIDIA_LIB64, "readOnly": True},
            {"name": "tcpx-socket", "mountPath": "/run/tcpx"},
            {"name": "tcpx-sys", "mountPath": "/hostsysfs"},
            {"name": "tcpx-proc-sys", "mountPath": "/hostprocsysfs"},
        ],
    }
    return PodFabric(
        summary="GPUDirect-TCPX: 4 NICs, tcpx-daemon (RxDM) sidecar, NCCL TCPX env",
        annotations={
            **_gke_annotations(pool),
            DEVICES_ANNOTATION.format(container=SIDECAR[FabricKind.TCPX]): device_list(pool.gpus_per_node, ()),
        },
        sidecars=(sidecar,),
        env={"LD_LIBRARY_PATH": NVIDIA_LIB64, **TCPX_NCCL_ENV},
        # the GPU container sees the socket RxDM serves and the TCPX plugin the installer put on the host
        # (container-engine-accelerators gpudirect-tcpx/nccl-test*.yaml; cluster-toolkit enable-tcpx-in-workload.py)
        mounts=(
            {"name": "tcpx-socket", "mountPath": "/run/tcpx"},
            {"name": "tcpx-libraries", "mountPath": NVIDIA_LIB64, "readOnly": True},
            shm_mount,
        ),
        volumes=(
            _host("tcpx-libraries", "/home/kubernetes/bin/nvidia/lib64"),
            {"name": "tcpx-socket", "emptyDir": {}},
            _host("tcpx-sys", "/sys"),
            _host("tcpx-proc-sys", "/proc/sys"),
            shm_volume,
        ),
    )


def _rdma(pool: PoolFacts) -> PodFabric:
    assert pool.fabric is not None
    claim = pod_claim(pool)  # GKE-managed networks: the NICs come through a DRA claim, not annotations
    shm_mount, shm_volume = _shm(pool)
    tuner = GIB_TUNER_CONFIG.get(pool.machine.machine_type)
    return PodFabric(
        summary=f"GPUDirect RDMA on GKE-managed networks: DRA claim {claim['resourceClaimTemplateName']} (every "
        "RDMA NIC), gIB plugin, NCCL_NET=gIB"
        if claim
        else "GPUDirect RDMA: 9 NICs (gvnic-1, rdma-0…7), gIB plugin, NCCL_NET=gIB",
        annotations={} if pool.fabric.managed else _gke_annotations(pool),
        resource_claims=(claim,) if claim else (),
        # NCCL_NET=gIB makes a broken fabric fail instead of falling back to TCP; the tuning of set_nccl_env.sh is
        # in the env itself (every entrypoint), and BASH_ENV still makes every `bash -c` command source the script
        env={
            "NCCL_NET": "gIB",
            "BASH_ENV": GIB_ENV_SCRIPT,
            "LD_LIBRARY_PATH": f"{GIB_DIR}/lib64:{NVIDIA_LIB64}",
            **GIB_NCCL_ENV,
            **({"NCCL_TUNER_CONFIG_PATH": f"{GIB_DIR}/configs/{tuner}"} if tuner else {}),
        },
        mounts=({"name": "gib", "mountPath": GIB_DIR, "readOnly": True}, shm_mount),
        volumes=(_host("gib", "/home/kubernetes/bin/gib"), shm_volume),
    )


def _efa(pool: PoolFacts) -> PodFabric:
    assert pool.fabric is not None
    count = pool.fabric.gpu_nics
    shm_mount, shm_volume = _shm(pool)
    return PodFabric(
        summary=f"EFA: {count} × {EFA_RESOURCE}, 5120Mi of 2 MiB huge pages, libfabric env",
        env=dict(EFA_ENV),
        resources={EFA_RESOURCE: count, **EFA_HUGEPAGES},
        min_requests=dict(HUGEPAGES_MEMORY_REQUEST),
        mounts=(shm_mount,),
        volumes=(shm_volume,),
    )


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
    return replace(
        network,
        summary=f"{network.summary}; IMEX channel (ComputeDomain)",
        resource_claims=(*network.resource_claims, channel),
    )


def _network_fabric(pool: PoolFacts) -> PodFabric | None:
    if pool.fabric is None:
        return None
    kind = pool.fabric.kind
    if kind == FabricKind.EFA and not (pool.runtime is not None and pool.runtime.efa_device_plugin):
        return None
    made = {FabricKind.TCPX: _tcpx, FabricKind.TCPXO: _tcpxo, FabricKind.RDMA: _rdma, FabricKind.EFA: _efa}[kind](pool)
    if kind != FabricKind.EFA:  # EFA: the device plugin advertises the devices only once they work
        gate, volume = ready_gate(kind, pool.arm64)
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
        out["resources"] = {
            **res,
            "claims": [*res.get("claims", []), *({"name": c["name"]} for c in fabric.resource_claims)],
        }
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
