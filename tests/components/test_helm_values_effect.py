"""The settings that matter arrive where intended, read from the objects real Helm renders (not from our values):
GPU daemons select exactly the stack's GPU pools and tolerate their taints, the sharing config map is mounted, the
GPU Operator's ClusterPolicy carries the driver/toolkit settings of the cloud, Kueue's manager config its
waitForPodsReady/fairSharing/integrations, the Slurm CRs the slurm.conf lines, NodeSets and accounting storage, the
cluster autoscaler discovers exactly this cluster's node groups."""

from __future__ import annotations

import functools

import pytest
import yaml

from catalog import Cloud, load_catalog
from components.k8s.nvidia_gpu_runtime import SHARING_CONFIG_MAP
from render.nvidia_values import GKE_NVIDIA_HOST_DIR
from render.fabric_pod import apply_to_container, pod_fabric
from render.kueue_config import manager_config_yaml
from stacks.plan.slurm import plan_slurm
from catalog.image_digests import DEPLOY_DIGEST
from render.slurm_values import LOGFILE_IMAGE
from stacks.plan.facts import PoolFacts, pool_facts
from stacks.plan.gpu_runtime_plan import GpuRuntimePlan, runtime_plan
from stacks.spec.stack import POOL_LABEL_KEY, StackSpec
from tests.support.spec.gpu_runtime_matrix import ALL_CONFIGS, config
from tests.support.helm.checks import program_objects
from tests.support.helm.examples import recording, rendered
from tests.support.helm.render import RELEASE
from stacks.validate.load import decode_config, load_spec
from stacks.validate.planned import load_planned

CAT = load_catalog()
ALL = sorted(set(ALL_CONFIGS))


@functools.cache
def spec_of(name: str) -> tuple[StackSpec, list[PoolFacts]]:
    spec, _ = load_spec(decode_config(config(name)), CAT)
    return spec, [pool_facts(spec, p, CAT) for p in spec.node_pools]


def plan_of(name: str) -> GpuRuntimePlan:
    spec, facts = spec_of(name)
    return runtime_plan(spec, facts)


def with_release(resource: str) -> list[str]:
    return [n for n in ALL if any(r.type == RELEASE and r.name == resource for r in recording(n).resources)]


def pod_spec(obj: dict) -> dict:
    return obj["spec"]["template"]["spec"]


def selected_pools(obj: dict) -> list[str]:
    terms = pod_spec(obj)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert len(terms) == 1 and len(terms[0]["matchExpressions"]) == 1, terms
    expr = terms[0]["matchExpressions"][0]
    assert (expr["key"], expr["operator"]) == (POOL_LABEL_KEY, "In")
    return expr["values"]


def tolerates(tolerations: list[dict], pools: tuple[PoolFacts, ...]) -> list[dict]:
    """The pool tolerations missing from ``tolerations``."""
    return [t for p in pools for t in p.tolerations if t not in tolerations]


@pytest.mark.parametrize("name", with_release("gpu-runtime-device-plugin"))
def test_device_plugin_gfd_and_mps_daemons_run_on_exactly_the_gpu_pools(name):
    plan, stack = plan_of(name), rendered(name)
    daemons = [
        o
        for o in stack.release("gpu-runtime-device-plugin")
        if o["kind"] == "DaemonSet" and o["metadata"]["name"] != "nvidia-device-plugin-node-feature-discovery-worker"
    ]
    expected = {"nvidia-device-plugin"} | (
        {"nvidia-device-plugin-gpu-feature-discovery"} if plan.gpu_feature_discovery else set()
    )
    assert expected <= {d["metadata"]["name"] for d in daemons}
    for daemon in daemons:
        assert selected_pools(daemon) == [p.name for p in plan.device_plugin_pools], daemon["metadata"]["name"]
        assert tolerates(pod_spec(daemon)["tolerations"], plan.device_plugin_pools) == []


@pytest.mark.parametrize("name", ["eks-device-plugin"])
def test_the_mps_daemon_exists_where_a_pool_uses_mps(name):
    names = {o["metadata"]["name"] for o in rendered(name).release("gpu-runtime-device-plugin")}
    assert "nvidia-device-plugin-mps-control-daemon" in names


def shares_gpus(name: str) -> bool:
    return any(p.resolved_runtime.device_plugin_config for p in plan_of(name).device_plugin_pools)


@pytest.mark.parametrize("name", [n for n in with_release("gpu-runtime-device-plugin") if shares_gpus(n)])
def test_the_sharing_config_map_is_mounted_by_the_device_plugin(name):
    stack = rendered(name)
    ours = [o for o in program_objects(stack.rec) if o["kind"] == "ConfigMap"]
    assert [(o["metadata"]["name"], o["metadata"]["namespace"]) for o in ours] == [
        (SHARING_CONFIG_MAP, "nvidia-device-plugin")
    ]
    plugin = stack.one("DaemonSet", "nvidia-device-plugin")
    volumes = {
        v["name"] for v in pod_spec(plugin)["volumes"] if (v.get("configMap") or {}).get("name") == SHARING_CONFIG_MAP
    }
    assert volumes, "no volume of the sharing config map"
    mounted = {
        m["name"]
        for c in pod_spec(plugin)["containers"] + pod_spec(plugin).get("initContainers", [])
        for m in c.get("volumeMounts", [])
    }
    assert volumes <= mounted
    env = {e["name"]: e.get("value") for c in pod_spec(plugin)["containers"] for e in c.get("env", [])}
    assert env.get("DEFAULT_CONFIG") == "default"


@pytest.mark.parametrize("name", with_release("gpu-runtime-gpu-operator"))
def test_the_cluster_policy_has_the_driver_and_toolkit_settings_of_the_cloud(name):
    plan, stack = plan_of(name), rendered(name)
    policy = stack.one("ClusterPolicy")["spec"]
    assert policy["driver"]["enabled"] is False  # the node image (GKE installer, EKS AMI) owns the driver
    assert policy["mig"]["strategy"] == "single"
    assert policy["migManager"]["enabled"] is bool(plan.mig_pools)
    assert tolerates(policy["daemonsets"]["tolerations"], plan.operator_pools) == []
    if plan.cloud == Cloud.GCP:
        assert policy["toolkit"]["enabled"] is True and policy["toolkit"]["installDir"] == GKE_NVIDIA_HOST_DIR
        assert policy["hostPaths"]["driverInstallDir"] == GKE_NVIDIA_HOST_DIR
        assert policy["cdi"]["enabled"] is True
    else:
        assert policy["toolkit"]["enabled"] is False and policy["cdi"]["enabled"] is False
    sharing = any(p.resolved_runtime.device_plugin_config for p in plan.operator_pools)
    config_ref = policy["devicePlugin"].get("config") or {}
    assert (config_ref.get("name"), config_ref.get("default")) == (
        (SHARING_CONFIG_MAP, "default") if sharing else (None, None)
    )


@pytest.mark.parametrize("name", with_release("kueue-chart"))
def test_the_kueue_manager_config_carries_our_settings(name):
    spec, _ = spec_of(name)
    cm = rendered(name).one("ConfigMap", "kueue-manager-config")
    got = yaml.safe_load(cm["data"]["controller_manager_config.yaml"])
    timeout = load_planned(decode_config(config(name)), CAT).plan.kueue.pods_ready_timeout  # raised on rack pools
    want = yaml.safe_load(
        manager_config_yaml(spec.scheduling, pods_ready_timeout_s=timeout.seconds, serving=spec.serving is not None)
    )
    assert {"waitForPodsReady", "integrations"} <= set(want)
    for key in ("waitForPodsReady", "fairSharing", "integrations"):  # fairSharing: only with a cohort to share in
        assert got.get(key) == want.get(key), key
    assert "trainer.kubeflow.org/trainjob" in got["integrations"]["frameworks"]
    deployment = rendered(name).one("Deployment", "kueue-controller-manager")
    assert deployment["spec"]["replicas"] == 2


def test_an_example_turns_fair_sharing_on():
    assert any(
        "fairSharing"
        in yaml.safe_load(
            rendered(n).one("ConfigMap", "kueue-manager-config")["data"]["controller_manager_config.yaml"]
        )
        for n in with_release("kueue-chart")
    )


@pytest.mark.parametrize("name", with_release("slurm-slurm"))
def test_the_slurm_crs_carry_the_plan(name):
    spec, facts = spec_of(name)
    plan, stack = plan_slurm(spec.scheduling, facts), rendered(name)
    controller = stack.one("Controller")["spec"]
    assert [line for line in plan.extra_conf().splitlines() if line not in controller["extraConf"].splitlines()] == []
    assert controller["logfile"]["image"] == f"{LOGFILE_IMAGE['repository']}@{DEPLOY_DIGEST}"  # resolved at deploy
    nodesets = {o["metadata"]["name"]: o["spec"] for o in stack.release("slurm-slurm") if o["kind"] == "NodeSet"}
    assert sorted(nodesets) == sorted(f"slurm-worker-{n.pool}" for n in plan.nodesets)
    for n in plan.nodesets:
        got = nodesets[f"slurm-worker-{n.pool}"]
        assert got["extraConf"] == n.node_conf and any(w.startswith("Gres=gpu:") for w in n.node_conf.split())
        # a pool that follows the queue starts at minNodes; its ResumeProgram scales the NodeSet up to maxNodes
        assert got["replicas"] == (n.min_nodes if n.scales else n.replicas)
        assert got["template"]["spec"]["nodeSelector"] == dict(n.node_selector)
        fabric = pod_fabric(next(f for f in facts if f.name == n.pool))  # EFA, IMEX channel: on top of the plan
        want = (
            n.pod_resources()
            if fabric is None
            else apply_to_container({"resources": n.pod_resources()}, fabric)["resources"]
        )
        assert got["slurmd"]["resources"] == want
        assert tolerates(got["template"]["spec"]["tolerations"], tuple(f for f in facts if f.name == n.pool)) == []
    if plan.accounting:
        storage = stack.one("Accounting")["spec"]["storageConfig"]
        assert (storage["host"], storage["port"], storage["database"], storage["username"]) == (
            "slurm-mariadb",
            3306,
            "slurm_acct_db",
            "slurm",
        )
        assert storage["passwordKeyRef"] == {"name": "slurm-db-password", "key": "password"}


@pytest.mark.parametrize("name", with_release("cluster-autoscaler"))
def test_the_cluster_autoscaler_discovers_exactly_this_clusters_node_groups(name):
    spec, _ = spec_of(name)
    container = pod_spec(rendered(name).one("Deployment", "cluster-autoscaler"))["containers"][0]
    discovery = [a for a in container["command"] if a.startswith("--node-group-auto-discovery=")]
    assert discovery == [
        "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,"
        f"k8s.io/cluster-autoscaler/{spec.cluster.name}"
    ]
    assert "--cloud-provider=aws" in container["command"]
