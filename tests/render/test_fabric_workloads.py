"""Jobs on a fabric pool use the fabric without hand edits: the ``torch-<pool>`` runtime and the Slinky NodeSet of
each fabric carry the GKE multi-network annotations, the RxDM sidecar and its devices, the NCCL env and mounts, or
the EFA requests. Objects are parsed (JSON annotations, YAML device lists), not grepped; the pod a TrainJob gets
from each runtime validates as a core/v1 Pod with kubernetes-validate. One golden file per fabric runtime
(``UPDATE_GOLDEN=1`` regenerates them; review the diff)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from catalog.fabric import FabricKind, load_fabric_catalog
from stacks.plan import slurm_task_env
from render.fabric_pod import EFA_RESOURCE, pod_fabric
from render.kueue import render_kueue
from stacks.plan.slurm import plan_slurm
from render.slurm_values import slurm_values
from render.trainer import training_runtimes
from tests.conftest import require_shared
from tests.support.helm.values import unknown_keys
from tests.support.spec.scheduling_fixtures import EKS_TEAMS, GKE_TEAMS, spec_and_facts, with_slurmd_efa_image

K8S_VERSION = "1.34.0"
GOLDEN = Path(__file__).parent / "golden"
FAB = load_fabric_catalog()


def _gke(machine: str, region: str, zone: str, l4_zone: str | None = None) -> dict:
    """``l4_zone``: where the catalog's sources list g2-standard-24 when the fabric machine's zone lacks it."""
    raw = copy.deepcopy(GKE_TEAMS)
    raw["region"] = region
    raw["nodePools"][0].update(machineType=machine, zones=[zone])
    raw["nodePools"][1]["zones"] = [l4_zone or zone]
    return raw


def _managed(raw: dict) -> dict:
    raw = copy.deepcopy(raw)
    raw["nodePools"][0]["fabric"] = {"mode": "managed"}
    return raw


FABRICS = {
    "tcpx": GKE_TEAMS,
    "tcpxo": _gke("a3-megagpu-8g", "us-east4", "us-east4-a"),
    "rdma": _gke("a3-ultragpu-8g", "us-east4", "us-east4-b", l4_zone="us-east4-a"),
    "rdma-managed": _managed(_gke("a3-ultragpu-8g", "us-east4", "us-east4-b", l4_zone="us-east4-a")),
    "efa": EKS_TEAMS,
}


def _runtime(raw: dict) -> dict:
    spec, facts = spec_and_facts(raw)
    objects = render_kueue(spec.scheduling, facts)
    return {r["metadata"]["name"]: r for r in training_runtimes(facts, objects.placements)}[
        f"torch-{raw['nodePools'][0]['name']}"
    ]


def _pod(runtime: dict) -> dict:
    """The pod a TrainJob node gets: the runtime's pod template, as JobSet copies it."""
    template = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "job-node-0-0", **template.get("metadata", {})},
        "spec": template["spec"],
    }


def _env(container: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", [])}


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_runtime_matches_golden(fabric):
    path = GOLDEN / f"runtime-{fabric}.yaml"
    rendered = yaml.safe_dump(_runtime(FABRICS[fabric]), sort_keys=False)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(rendered, encoding="utf-8")
    assert rendered == path.read_text(encoding="utf-8"), f"{path.name} changed: review, then UPDATE_GOLDEN=1"


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_the_pod_a_job_gets_is_a_valid_pod(fabric):
    kubernetes_validate.validate(_pod(_runtime(FABRICS[fabric])), K8S_VERSION, strict=True)


def test_tcpxo_runtime_has_nine_nics_the_rxdm_sidecar_its_devices_and_the_nccl_env():
    pod = _pod(_runtime(FABRICS["tcpxo"]))
    notes = pod["metadata"]["annotations"]
    assert notes["networking.gke.io/default-interface"] == "eth0"
    assert json.loads(notes["networking.gke.io/interfaces"]) == [
        {"interfaceName": "eth0", "network": "default"},
        *({"interfaceName": f"eth{i}", "network": f"vpc{i}"} for i in range(1, 9)),
    ]
    devices = [d["path"] for d in yaml.safe_load(notes["devices.gke.io/container.tcpxo-daemon"])]
    assert devices == [f"/dev/nvidia{i}" for i in range(8)] + [
        "/dev/nvidiactl",
        "/dev/nvidia-uvm",
        "/dev/dmabuf_import_helper",
    ]
    gate, sidecar = pod["spec"]["initContainers"]  # the ready gate runs to completion before RxDM starts
    assert gate["name"] == "fabric-ready" and "restartPolicy" not in gate
    assert sidecar["name"] == "tcpxo-daemon" and sidecar["restartPolicy"] == "Always"
    assert sidecar["image"] == FAB.image(FabricKind.TCPXO, "rxdm").reference
    assert FAB.image(FabricKind.TCPXO, "rxdm").pairs_with == FAB.image(FabricKind.TCPXO, "nccl-plugin").version
    assert sidecar["securityContext"]["capabilities"]["add"] == ["NET_ADMIN", "NET_BIND_SERVICE"]
    (node,) = pod["spec"]["containers"]
    env = _env(node)
    assert env["NCCL_FASTRAK_IFNAME"] == "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"
    assert env["NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"] == "/dev/aperture_devices"
    assert env["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"
    assert {"name": "aperture-devices", "mountPath": "/dev/aperture_devices"} in node["volumeMounts"]
    volumes = {v["name"]: v["hostPath"]["path"] for v in pod["spec"]["volumes"] if "hostPath" in v}
    assert volumes["aperture-devices"] == "/dev/aperture_devices"
    assert node["resources"]["limits"] == {"nvidia.com/gpu": 8}, "GKE fabrics need no extra device request"


def test_tcpx_runtime_has_five_nics_and_the_tcpx_daemon():
    pod = _pod(_runtime(FABRICS["tcpx"]))
    nics = json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert [n["network"] for n in nics] == ["default", "vpc1", "vpc2", "vpc3", "vpc4"]
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["fabric-ready", "tcpx-daemon"]
    assert pod["spec"]["initContainers"][1]["image"].endswith("tcpgpudmarxd-dev:v2.0.12")
    assert _env(pod["spec"]["containers"][0])["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] == "eth1,eth2,eth3,eth4"


def test_rdma_runtime_uses_gib_on_gvnic_and_eight_rdma_nics():
    pod = _pod(_runtime(FABRICS["rdma"]))
    nics = json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert nics == [
        {"interfaceName": "eth0", "network": "default"},
        {"interfaceName": "eth1", "network": "gvnic-1"},
        *({"interfaceName": f"eth{i + 2}", "network": f"rdma-{i}"} for i in range(8)),
    ]
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["fabric-ready"], "gIB has no sidecar, only the gate"
    node = pod["spec"]["containers"][0]
    assert _env(node)["NCCL_NET"] == "gIB"
    assert _env(node)["BASH_ENV"] == "/usr/local/gib/scripts/set_nccl_env.sh"
    assert {"name": "gib", "mountPath": "/usr/local/gib", "readOnly": True} in node["volumeMounts"]
    assert {"name": "gib", "hostPath": {"path": "/home/kubernetes/bin/gib"}} in pod["spec"]["volumes"]


def test_eks_p5_runtime_requests_every_efa_interface_and_the_libfabric_env():
    node = _pod(_runtime(FABRICS["efa"]))["spec"]["containers"][0]
    assert node["resources"]["requests"][EFA_RESOURCE] == 32 == node["resources"]["limits"][EFA_RESOURCE]
    assert node["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert _env(node)["FI_PROVIDER"] == "efa" and _env(node)["FI_EFA_USE_DEVICE_RDMA"] == "1"


def test_eks_without_the_efa_device_plugin_requests_no_efa():
    raw = copy.deepcopy(EKS_TEAMS)
    raw["gpuRuntime"] = {"efaDevicePlugin": False}
    node = _pod(_runtime(raw))["spec"]["containers"][0]
    assert EFA_RESOURCE not in node["resources"]["limits"], "nothing would advertise it: pods would stay Pending"


def test_single_node_pools_get_no_fabric():
    _, facts = spec_and_facts(GKE_TEAMS)
    assert pod_fabric(facts[1]) is None
    l4 = {r["metadata"]["name"]: r for r in training_runtimes(facts, {})}["torch-l4"]
    assert "annotations" not in json.dumps(l4)


def test_team_namespaces_on_gpudirect_pools_admit_the_fabrics_host_paths():
    spec, facts = spec_and_facts(FABRICS["tcpxo"])
    labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in render_kueue(spec.scheduling, facts).namespaces}
    assert all(v["pod-security.kubernetes.io/enforce"] == "privileged" for v in labels.values())
    assert all(v["pod-security.kubernetes.io/warn"] == "restricted" for v in labels.values())
    spec, facts = spec_and_facts(EKS_TEAMS)
    labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in render_kueue(spec.scheduling, facts).namespaces}
    assert all(v["pod-security.kubernetes.io/enforce"] == "baseline" for v in labels.values()), "EFA needs no host"


def _slurm(raw: dict) -> dict:
    raw = copy.deepcopy(raw)
    raw["scheduling"] = {
        "workload": "slurm",
        "queues": [{"name": "research", "quotas": [{"pool": raw["nodePools"][0]["name"], "gpus": 8}]}],
    }
    spec, facts = spec_and_facts(with_slurmd_efa_image(raw))
    plan = plan_slurm(spec.scheduling, facts)
    return slurm_values(plan, "ml", fabrics={p.name: pod_fabric(p) for p in facts})


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_slinky_nodeset_gets_the_same_fabric_as_the_runtime(fabric):
    values = _slurm(FABRICS[fabric])
    pool = FABRICS[fabric]["nodePools"][0]["name"]
    nodeset = values["nodesets"][pool]
    runtime_pod = _pod(_runtime(FABRICS[fabric]))
    assert nodeset.get("metadata", {}).get("annotations", {}) == {
        k: v for k, v in runtime_pod["metadata"].get("annotations", {}).items() if not k.startswith("kueue")
    }
    assert nodeset["podSpec"].get("initContainers", []) == runtime_pod["spec"].get("initContainers", [])
    # plus the TaskProlog's ConfigMap (the fabric env of every Slurm task: stacks/plan/slurm_task_env.py)
    assert nodeset["podSpec"].get("volumes", []) == [
        *runtime_pod["spec"].get("volumes", []),
        slurm_task_env.volume(pool, True),
    ]
    assert nodeset["podSpec"].get("resourceClaims", []) == runtime_pod["spec"].get("resourceClaims", [])
    runtime_env = _env(runtime_pod["spec"]["containers"][0])
    assert _env(nodeset["slurmd"]) == runtime_env
    assert nodeset["slurmd"]["resources"].get("claims") == runtime_pod["spec"]["containers"][0]["resources"].get(
        "claims"
    ), "slurmd, where job steps run, holds the same DRA claims as the runtime's container"
    if fabric == "efa":
        assert nodeset["slurmd"]["resources"]["requests"][EFA_RESOURCE] == 32
        assert nodeset["slurmd"]["resources"]["limits"][EFA_RESOURCE] == 32
    defaults = yaml.safe_load(require_shared("schemas", "slurm-operator/v1.2.1/helm/slurm/values.yaml").read_text())
    nodeset = copy.deepcopy(nodeset)
    nodeset["podSpec"].pop("nodeSelector")  # map[string]string: any label keys
    # a core/v1 PodSpec field the chart's defaults do not list; templates/nodeset/nodeset-cr.yaml copies podSpec into
    # the NodeSet's pod template verbatim (toYaml), so it reaches the pod as given
    nodeset["podSpec"].pop("resourceClaims", None)
    assert unknown_keys(nodeset, defaults["nodesetDefaults"], f"nodesets.{pool}") == []
