"""The GPU runtime as the program really sends it (recorded under mocks): node pool inputs and labels per mode,
Helm releases and their values, the objects around them, parents and providers. One advertiser per pool."""

from __future__ import annotations

import pytest
import yaml

from components.charts import COS_DRIVER_INSTALLER_COMMIT
from tests.support.spec.gpu_runtime_matrix import recording
from tests.support.preview.recorded import of_type, one, parent_of

NODE_POOL = "gcp:container/nodePool:NodePool"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
QUOTA = "kubernetes:core/v1:ResourceQuota"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
GPU_TAINT_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
DEDICATED_TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "inference", "effect": "NoSchedule"}
PIN_KEYS = ("repository", "image", "version", "tag")
"""Where components/image_digests.py pins an operand's or plugin's image by digest (tests/components/
test_image_digest_resolution.py checks the pins themselves)."""


def unpinned(section: dict) -> dict:
    """A values section without the image pin gpu-cluster adds, which must carry a digest when present."""
    if "version" in section or "tag" in section:
        assert "@sha256:" in section.get("version", section.get("tag", "")), section
    return {k: v for k, v in section.items() if k not in PIN_KEYS}


def accelerator(rec, pool: str) -> dict:
    return one(rec, NODE_POOL, pool).inputs["nodeConfig"]["guestAccelerators"][0]


def gke_labels(rec, pool: str) -> dict:
    return one(rec, NODE_POOL, pool).inputs["nodeConfig"]["labels"]


def gpu_node_group_labels(rec) -> dict[str, dict]:
    """Labels of the GPU node groups (the system node group has none)."""
    return {r.name: r.inputs["labels"] for r in of_type(rec, NODE_GROUP) if "labels" in r.inputs}


def release(rec, chart: str):
    hits = [r for r in of_type(rec, RELEASE) if r.inputs["chart"] == chart]
    assert len(hits) == 1, f"expected one {chart} release, found {len(hits)}"
    return hits[0]


def pool_selector(values: dict) -> list[str]:
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert len(terms) == 1 and len(terms[0]["matchExpressions"]) == 1
    expr = terms[0]["matchExpressions"][0]
    assert (expr["key"], expr["operator"]) == ("gpu-cluster/pool", "In")
    return expr["values"]


# -- GKE, gke-managed -------------------------------------------------------------------------------------------------
def test_gke_managed_sharing_is_a_node_pool_setting():
    rec = recording("gke-managed")
    assert accelerator(rec, "plain") == {
        "type": "nvidia-h100-80gb",
        "count": 8,
        "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
    }
    assert accelerator(rec, "ts")["gpuSharingConfig"] == {
        "gpuSharingStrategy": "TIME_SHARING",
        "maxSharedClientsPerGpu": 3,
    }
    assert accelerator(rec, "mps")["gpuSharingConfig"] == {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 8}
    mig = accelerator(rec, "mig")
    assert mig["gpuPartitionSize"] == "3g.40gb" and "gpuSharingConfig" not in mig
    assert mig["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}


def test_gke_managed_installs_nothing_in_the_cluster_and_labels_nothing():
    rec = recording("gke-managed")
    assert of_type(rec, RELEASE) == [] and of_type(rec, CONFIG_FILE) == []
    assert of_type(rec, "gpu-cluster:k8s:NvidiaGpuRuntime") == []
    for pool in ("plain", "ts", "mps", "mig"):
        assert gke_labels(rec, pool) == {"gpu-cluster/pool": pool}, "GKE's own plugin must stay in charge"


def test_gke_managed_latest_driver_reaches_the_pool():
    rec = recording("gke-h100-512")  # example stack: gpuRuntime.driverVersion: latest
    assert accelerator(rec, "h100-mega")["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "LATEST"}


# -- GKE, gpu-operator ------------------------------------------------------------------------------------------------
def test_gke_operator_pools_turn_gke_driver_and_plugin_off():
    rec = recording("gke-operator")
    for pool in ("h100-mig", "a100-ts", "a100"):
        acc = accelerator(rec, pool)
        assert acc["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
        assert "gpuSharingConfig" not in acc and "gpuPartitionSize" not in acc, "the operator shares, not GKE"
        labels = gke_labels(rec, pool)
        assert labels["gke-no-default-nvidia-gpu-device-plugin"] == "true"
        assert "nvidia.com/gpu.deploy.operands" not in labels
    assert gke_labels(rec, "h100-mig")["nvidia.com/mig.config"] == "all-1g.10gb"
    assert gke_labels(rec, "a100-ts")["nvidia.com/device-plugin.config"] == "a100-ts"
    assert "nvidia.com/device-plugin.config" not in gke_labels(rec, "a100"), "no sharing: the default entry applies"


def test_gke_managed_pool_next_to_the_operator_keeps_gke_and_keeps_the_operator_away():
    rec = recording("gke-operator")
    assert gke_labels(rec, "l4-gke") == {"gpu-cluster/pool": "l4-gke", "nvidia.com/gpu.deploy.operands": "false"}
    assert accelerator(rec, "l4-gke")["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}


def test_gke_operator_values():
    values = release(recording("gke-operator"), "gpu-operator").inputs["values"]
    assert values["driver"] == {"enabled": False}
    assert values["hostPaths"] == {"driverInstallDir": "/home/kubernetes/bin/nvidia"}
    assert unpinned(values["toolkit"]) == {"installDir": "/home/kubernetes/bin/nvidia"}
    assert values["cdi"] == {"enabled": True}
    assert values["mig"] == {"strategy": "single"} and unpinned(values["migManager"]) == {"enabled": True}
    assert unpinned(values["dcgmExporter"]) == {"enabled": True, "serviceMonitor": {"enabled": False}}
    assert unpinned(values["gfd"]) == {"enabled": True}
    assert values["toolkit"]["version"].startswith("v1.20.0@sha256:f8c647d5")  # cited (GPU Operator bundle)
    # operands tolerate exactly the served pools' taints (a100-ts is tainted dedicated=inference)
    assert values["daemonsets"]["tolerations"] == [GPU_TAINT_TOLERATION, DEDICATED_TOLERATION]
    assert values["node-feature-discovery"]["worker"]["tolerations"] == [GPU_TAINT_TOLERATION, DEDICATED_TOLERATION]
    assert unpinned(values["devicePlugin"]) == {
        "config": {"create": False, "name": "gpu-cluster-device-plugin-config", "default": "default"}
    }


def test_gke_operator_sharing_config_map_has_one_entry_per_shared_pool():
    rec = recording("gke-operator")
    cm = one(rec, CONFIG_MAP)
    assert cm.inputs["metadata"]["name"] == "gpu-cluster-device-plugin-config"
    assert cm.inputs["metadata"]["namespace"] == "gpu-operator"
    data = {k: yaml.safe_load(v) for k, v in cm.inputs["data"].items()}
    assert data == {
        "default": {"version": "v1", "flags": {"migStrategy": "single"}},
        "a100-ts": {
            "version": "v1",
            "flags": {"migStrategy": "single"},
            "sharing": {
                "timeSlicing": {
                    "failRequestsGreaterThanOne": True,
                    "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
                }
            },
        },
    }


def test_gke_namespace_quota_admits_critical_pods_and_release_waits_for_both():
    rec = recording("gke-operator")
    ns = one(rec, "kubernetes:core/v1:Namespace")
    assert ns.inputs["metadata"]["name"] == "gpu-operator"
    assert ns.inputs["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    quota = one(rec, QUOTA).inputs
    assert quota["metadata"]["namespace"] == "gpu-operator"
    assert quota["spec"]["scopeSelector"]["matchExpressions"] == [
        {"operator": "In", "scopeName": "PriorityClass", "values": ["system-node-critical", "system-cluster-critical"]}
    ]
    assert quota["spec"]["hard"] == {"pods": str(10 * (4 + 4 + 4 + 1))}  # three served pools × maxNodes 4, + 1
    rel = release(rec, "gpu-operator")
    assert {d.split("::")[-1] for d in rel.dependencies} == {
        "gpu-runtime-gpu-operator-ns",
        "gpu-runtime-gpu-operator-quota",
        "gpu-runtime-gpu-operator-config",
    }


def test_gke_operator_release_pin_and_placement():
    rec = recording("gke-operator")
    rel = release(rec, "gpu-operator")
    assert rel.inputs["version"] == "v26.7.0" and rel.inputs["name"] == "gpu-operator"
    assert rel.inputs["repositoryOpts"] == {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    assert rel.inputs["namespace"] == "gpu-operator" and rel.inputs["createNamespace"] is False
    runtime = parent_of(rec, rel)
    assert runtime.type == "gpu-cluster:k8s:NvidiaGpuRuntime" and runtime.name == "gpu-runtime"
    assert rel.provider.split("::")[-2] == "ml-k8s", "must deploy through the cluster's Kubernetes provider"
    assert "ml" in {d.split("::")[-1] for d in runtime.dependencies}, "after the cluster (its system pool runs it)"


@pytest.mark.parametrize(
    "config, manifest",
    [("gke-operator", "daemonset-preloaded.yaml"), ("gke-operator-latest", "daemonset-preloaded-latest.yaml")],
)
def test_gke_cos_driver_installer_is_pinned_and_follows_driver_version(config, manifest):
    rec = recording(config)
    installer = one(rec, CONFIG_FILE)
    assert installer.inputs["file"] == (
        "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/"
        f"{COS_DRIVER_INSTALLER_COMMIT}/nvidia-driver-installer/cos/{manifest}"
    )
    assert parent_of(rec, installer).type == "gpu-cluster:k8s:NvidiaGpuRuntime"


# -- EKS, device-plugin -----------------------------------------------------------------------------------------------
def test_eks_device_plugin_values_target_exactly_its_pools():
    rec = recording("eks-device-plugin")
    rel = release(rec, "nvidia-device-plugin")
    values = rel.inputs["values"]
    assert rel.inputs["version"] == "0.20.0" and rel.inputs["namespace"] == "nvidia-device-plugin"
    assert rel.inputs["repositoryOpts"] == {"repo": "https://nvidia.github.io/k8s-device-plugin"}
    assert pool_selector(values) == ["p5", "l40s-ts", "l40s-mps"]
    assert values["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        GPU_TAINT_TOLERATION,
        DEDICATED_TOLERATION,
    ]
    assert values["gfd"] == {"enabled": True}
    assert values["nfd"] == {"worker": {"tolerations": [GPU_TAINT_TOLERATION, DEDICATED_TOLERATION]}}
    assert values["config"] == {"name": "gpu-cluster-device-plugin-config", "default": "default"}
    assert of_type(rec, QUOTA) == [] and of_type(rec, CONFIG_FILE) == [], "GKE-only objects"


def test_eks_device_plugin_sharing_entries_and_pool_labels_agree():
    rec = recording("eks-device-plugin")
    data = {k: yaml.safe_load(v) for k, v in one(rec, CONFIG_MAP).inputs["data"].items()}
    # volume-mounts in every entry too: a node's config entry never brings the env-var strategy back
    assert data["default"] == {
        "version": "v1",
        "flags": {"migStrategy": "none", "plugin": {"deviceListStrategy": "volume-mounts"}},
    }
    assert all(d["flags"]["plugin"] == {"deviceListStrategy": "volume-mounts"} for d in data.values())
    assert data["l40s-ts"]["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    assert data["l40s-mps"]["sharing"] == {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}}
    labels = gpu_node_group_labels(rec)
    assert labels["l40s-ts"]["nvidia.com/device-plugin.config"] == "l40s-ts"
    assert labels["l40s-mps"]["nvidia.com/device-plugin.config"] == "l40s-mps"
    assert labels["p5"] == {"gpu-cluster/pool": "p5", "k8s.amazonaws.com/accelerator": "nvidia-h100"}


def test_eks_efa_plugin_only_on_the_multi_node_pool():
    rec = recording("eks-device-plugin")
    rel = release(rec, "aws-efa-k8s-device-plugin")
    assert rel.inputs["version"] == "v0.5.30" and rel.inputs["repositoryOpts"] == {
        "repo": "https://aws.github.io/eks-charts"
    }
    assert rel.inputs["namespace"] == "aws-efa-device-plugin"
    values = rel.inputs["values"]
    assert {k: v for k, v in values.items() if k != "image"} == {
        "supportedInstanceLabels": {"keys": ["gpu-cluster/pool"], "values": ["p5"]},
        "tolerations": [GPU_TAINT_TOLERATION],
    }
    assert unpinned(values["image"]) == {} and values["image"]["tag"].startswith("v0.5.20@")  # resolved at deploy
    assert parent_of(rec, rel).type == "gpu-cluster:aws:AwsEfaDevicePlugin"


# -- EKS, gpu-operator ------------------------------------------------------------------------------------------------
def test_eks_operator_uses_the_ami_driver_and_toolkit():
    rec = recording("eks-operator")
    values = release(rec, "gpu-operator").inputs["values"]
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {"enabled": False} and values["cdi"] == {"enabled": False}  # off: not pinned
    assert "hostPaths" not in values, "GKE's COS paths do not apply on EKS"
    assert unpinned(values["migManager"]) == {"enabled": True} and values["gfd"] == {"enabled": False}
    assert "config" not in values["devicePlugin"], "no pool shares through the plugin config: no config map"
    assert of_type(rec, CONFIG_MAP) == []


def test_eks_operator_and_device_plugin_split_the_pools():
    rec = recording("eks-operator")
    labels = gpu_node_group_labels(rec)
    assert labels["a100-mig"] == {
        "gpu-cluster/pool": "a100-mig",
        "nvidia.com/mig.config": "all-3g.20gb",
        "k8s.amazonaws.com/accelerator": "nvidia-a100",
    }
    assert labels["l40s"] == {
        "gpu-cluster/pool": "l40s",
        "nvidia.com/gpu.deploy.operands": "false",
        "k8s.amazonaws.com/accelerator": "nvidia-l40s",
    }
    assert pool_selector(release(rec, "nvidia-device-plugin").inputs["values"]) == ["l40s"]


def test_eks_efa_plugin_can_be_turned_off():
    rec = recording("eks-operator")  # gpuRuntime.efaDevicePlugin: false, with a multi-node pool
    assert of_type(rec, "gpu-cluster:aws:AwsEfaDevicePlugin") == []
    assert sorted(r.inputs["chart"] for r in of_type(rec, RELEASE)) == [
        "cluster-autoscaler",
        "gpu-operator",
        "nvidia-device-plugin",
    ]


def test_eks_gpu_nodes_get_the_toolkit_lockdown_in_their_user_data():
    """A pod asking for no GPU with NVIDIA_VISIBLE_DEVICES=all sees none: the device plugin hands GPUs out as volume
    mounts, and every device-plugin pool's user data sets the toolkit to refuse the env var from unprivileged pods."""
    import base64

    rec = recording("eks-device-plugin")
    templates = [
        r for r in rec.resources if r.type == "aws:ec2/launchTemplate:LaunchTemplate" and r.name != "ml-system-lt"
    ]  # the system group runs no GPU
    assert len(templates) == 3
    for lt in templates:
        data = base64.b64decode(lt.inputs["userData"]).decode()
        assert (
            "nvidia-ctk config --in-place --set accept-nvidia-visible-devices-envvar-when-unprivileged=false "
            "--set accept-nvidia-visible-devices-as-volume-mounts=true" in data
        ), lt.name
        assert 'Content-Type: text/x-shellscript; charset="us-ascii"' in data and data.endswith("--GPUCLUSTER--\n")


def test_eks_operator_pools_get_the_lockdown_and_the_operators_plugin_lists_by_volume_mounts():
    """The GPU Operator's device plugin on EKS is a second door for NVIDIA_VISIBLE_DEVICES: its pools get the same
    toolkit lockdown in their user data, and the ClusterPolicy runs its plugin with the volume-mounts strategy (the
    chart passes ``devicePlugin.env`` into the ClusterPolicy: templates/clusterpolicy.yaml)."""
    import base64

    from render.nvidia_values import DEVICE_LIST_STRATEGY

    rec = recording("eks-operator")
    values = release(rec, "gpu-operator").inputs["values"]
    assert {"name": "DEVICE_LIST_STRATEGY", "value": DEVICE_LIST_STRATEGY} in values["devicePlugin"]["env"]
    (lt,) = [r for r in rec.resources if r.type == "aws:ec2/launchTemplate:LaunchTemplate" and r.name == "a100-mig-lt"]
    assert (
        "accept-nvidia-visible-devices-envvar-when-unprivileged=false"
        in base64.b64decode(lt.inputs["userData"]).decode()
    )
