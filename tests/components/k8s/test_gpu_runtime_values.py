"""Real peers for the GPU runtime: every rendered Helm value exists in the pinned chart's default values.yaml
(``../shared/schemas``), every Kubernetes object validates against the Kubernetes OpenAPI schema, and what the node
labels select exists in what the charts read."""

from __future__ import annotations

import kubernetes_validate
import pytest
import yaml

from catalog import load_catalog, load_mig_catalog
from components.charts import AWS_EFA_DEVICE_PLUGIN, GPU_OPERATOR, GPU_RUNTIME_CHARTS, NVIDIA_DEVICE_PLUGIN, ChartPin
from tests.conftest import require_shared
from tests.support.spec.gpu_runtime_matrix import ALL_CONFIGS, recording
from tests.support.helm.values import helm_merge, unknown_keys
from tests.support.kube.schema import K8S_VERSION, unwrap_secrets

RELEASE = "kubernetes:helm.sh/v3:Release"
CHART_PINS = {pin.chart: pin for pin in GPU_RUNTIME_CHARTS}


COMMENTED_KEYS = {"gpu-operator": {("validator", "version"): "", ("operator", "version"): ""}}
"""Keys a chart's values.yaml documents only as a comment, which its templates read: gpu-operator v26.7.0
``#version: ""`` under ``operator`` and ``validator`` ("If version is not specified, then default is to use
chart.AppVersion"; templates/_helpers.tpl ``.Values.validator.version | default .Chart.AppVersion``). gpu-cluster sets
``validator.version`` to pin the image by digest (components/image_digests.py)."""


def chart_defaults(pin: ChartPin) -> dict:
    defaults = yaml.safe_load(require_shared("schemas", pin.default_values).read_text(encoding="utf-8"))
    for (section, key), value in COMMENTED_KEYS.get(pin.chart, {}).items():
        defaults[section].setdefault(key, value)
    return defaults


def releases(config: str):
    return [r for r in recording(config).resources if r.type == RELEASE and r.inputs["chart"] in CHART_PINS]


@pytest.mark.slow
def test_the_matrix_installs_every_pinned_chart():
    installed = {r.inputs["chart"] for c in ALL_CONFIGS for r in releases(c)}
    assert installed == set(CHART_PINS)


@pytest.mark.parametrize("config", ALL_CONFIGS)
def test_release_values_exist_in_the_pinned_chart(config):
    for rel in releases(config):
        pin = CHART_PINS[rel.inputs["chart"]]
        assert rel.inputs["version"] == pin.version
        assert unknown_keys(rel.inputs["values"], chart_defaults(pin)) == [], f"{config}: {pin.chart}"


def test_the_values_check_catches_a_typo_and_a_wrong_shape():
    defaults = chart_defaults(GPU_OPERATOR)
    assert unknown_keys({"driver": {"enabeld": False}}, defaults) == [
        "driver.enabeld: not in the chart's values.yaml (known here: certConfig, enabled, env, hostNetwork, "
        "image, imagePullPolicy, imagePullSecrets, kernelModuleConfig, kernelModuleType, licensingConfig, manager, "
        "nvidiaDriverCRD, rdma, repoConfig, repository, resources, secretEnv, startupProbe, upgradePolicy, "
        "usePrecompiled, version, virtualTopology)"
    ]
    assert unknown_keys({"daemonsets": {"tolerations": {"key": "x"}}}, defaults) == [
        "daemonsets.tolerations: the chart expects a list, got dict"
    ]
    # free-form maps in the chart accept any key
    assert unknown_keys({"nodeSelector": {"anything/at-all": "x"}}, chart_defaults(NVIDIA_DEVICE_PLUGIN)) == []


def test_operator_values_merged_into_the_chart_defaults():
    """What the chart templates see: our overrides win, the chart keeps everything else."""
    rel = next(r for r in releases("gke-operator") if r.inputs["chart"] == "gpu-operator")
    merged = helm_merge(chart_defaults(GPU_OPERATOR), rel.inputs["values"])
    assert merged["driver"]["enabled"] is False and merged["driver"]["version"] == "595.91.07"
    assert merged["toolkit"]["installDir"] == "/home/kubernetes/bin/nvidia" and merged["toolkit"]["enabled"] is True
    assert merged["daemonsets"]["priorityClassName"] == "system-node-critical"
    assert merged["migManager"]["config"]["default"] == "all-disabled"  # pools without a MIG label stay whole


def test_device_plugin_values_merged_replace_the_nfd_affinity():
    rel = next(r for r in releases("eks-device-plugin") if r.inputs["chart"] == "nvidia-device-plugin")
    merged = helm_merge(chart_defaults(NVIDIA_DEVICE_PLUGIN), rel.inputs["values"])
    terms = merged["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert len(terms) == 1, (
        "Helm replaces lists: the chart's three NFD-label terms are gone, only the pool term is left"
    )
    assert merged["priorityClassName"] == "system-node-critical" and merged["devicePlugin"] == {"enabled": True}


def test_efa_values_merged_select_pools_not_instance_types():
    rel = next(r for r in releases("eks-p5-efa") if r.inputs["chart"] == "aws-efa-k8s-device-plugin")
    merged = helm_merge(chart_defaults(AWS_EFA_DEVICE_PLUGIN), rel.inputs["values"])
    assert merged["supportedInstanceLabels"] == {"keys": ["gpu-cluster/pool"], "values": ["p5-block", "p5-ondemand"]}
    assert merged["image"]["tag"].startswith("v0.5.20@sha256:")  # the chart's tag, pinned (components/image_digests.py)


@pytest.mark.parametrize("pin", GPU_RUNTIME_CHARTS, ids=lambda p: p.chart)
def test_pins_match_the_upstream_chart_files(pin):
    chart_yaml = yaml.safe_load(require_shared("schemas", pin.default_values).with_name("Chart.yaml").read_text())
    assert chart_yaml["name"] == pin.chart
    if pin is GPU_OPERATOR:  # the git Chart.yaml holds a placeholder; the release is the tag (see shared README)
        assert chart_yaml["version"] == "v1.0.0-devel" and pin.default_values.split("/")[1] == pin.version
    else:
        assert chart_yaml["version"] == pin.version


@pytest.mark.slow
@pytest.mark.parametrize("config", ALL_CONFIGS)
def test_every_kubernetes_object_validates(config):
    objects = [r for r in recording(config).resources if r.type.startswith("kubernetes:core/v1:")]
    for obj in objects:
        kubernetes_validate.validate(unwrap_secrets(obj.inputs), K8S_VERSION, strict=True)
    kinds = {o.inputs["kind"] for o in objects}
    if any(r.type == RELEASE for r in recording(config).resources):
        assert "Namespace" in kinds, "every chart gets its own namespace"


def test_kubernetes_validation_would_catch_a_bad_quota():
    quota = next(r.inputs for r in recording("gke-operator").resources if r.type == "kubernetes:core/v1:ResourceQuota")
    bad = {**quota, "spec": {**quota["spec"], "scopeSelector": {"matchExpression": []}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S_VERSION, strict=True)


def _pool_labels(config: str) -> dict[str, dict]:
    out = {}
    for r in recording(config).resources:
        if r.type == "gcp:container/nodePool:NodePool":
            out[r.name] = r.inputs["nodeConfig"].get("labels", {})
        elif r.type == "aws:eks/nodeGroup:NodeGroup" and "labels" in r.inputs:
            out[r.name] = r.inputs["labels"]
    return out


@pytest.mark.parametrize("config", ALL_CONFIGS)
def test_node_labels_select_entries_that_exist(config):
    """A device-plugin.config label must name a config-map entry in the namespace of the chart serving that pool;
    a mig.config label must be an all-<profile> layout valid for the pool's GPU."""
    rec = recording(config)
    maps = {
        r.inputs["metadata"]["namespace"]: r.inputs["data"]
        for r in rec.resources
        if r.type == "kubernetes:core/v1:ConfigMap"
    }
    served_by = {}
    for rel in releases(config):
        values = rel.inputs["values"]
        if rel.inputs["chart"] == "nvidia-device-plugin":
            terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            for pool in terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"]:
                served_by[pool] = rel.inputs["namespace"]
    operator_ns = next((r.inputs["namespace"] for r in releases(config) if r.inputs["chart"] == "gpu-operator"), None)
    cat, mig = load_catalog(), load_mig_catalog()
    for pool, labels in _pool_labels(config).items():
        entry = labels.get("nvidia.com/device-plugin.config")
        if entry is not None:
            namespace = served_by.get(pool, operator_ns)
            assert entry in maps[namespace], f"{config}: {pool} selects missing entry {entry}"
        layout = labels.get("nvidia.com/mig.config")
        if layout is not None:
            assert operator_ns is not None, "only the operator's MIG manager reads nvidia.com/mig.config"
            machine = next(m for (c, name), m in cat.machines.items() if name in _machine_of(config, pool))
            assert layout.startswith("all-") and mig.profile(machine.gpu_model, layout[4:]) is not None


def _machine_of(config: str, pool: str) -> set[str]:
    for r in recording(config).resources:
        if r.type == "gcp:container/nodePool:NodePool" and r.name == pool:
            return {r.inputs["nodeConfig"]["machineType"]}
        if r.type == "aws:eks/nodeGroup:NodeGroup" and r.name == pool:
            return set(r.inputs["instanceTypes"])
    raise AssertionError(f"{pool} not recorded in {config}")
