"""The tenancy rules (tenants never escape their lane) through the pack, on example stacks as recorded: each passes, a
one-change removal of the control it guards is a mandatory violation with the exact message, and a waiver naming it
silences it."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.support.policy.harness import Pack, example as recorded, with_props, wire

M = "mandatory"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def without(resources, predicate):
    return [r for r in resources if not predicate(r)]


def changed(resources, type_, name, change):
    out = []
    for r in resources:
        if r.type == type_ and r.name == name:
            props = wire(r)
            change(props)
            r = with_props(r, props)
        out.append(r)
    return out


def ours(diags, rule):
    return [d for d in diags if d[0] == rule]


def waived(pack, rule, resource, resources):
    pack.configure({rule: {"waivers": [{"rule": rule, "resource": resource, "reason": "tested on purpose here"}]}})
    try:
        return ours(pack.stack(resources), rule)
    finally:
        pack.configure()


VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
NS = "kubernetes:core/v1:Namespace"


# -- security-team-namespace-admission --------------------------------------------------------------------------
TEAM = "security-team-namespace-admission"


def test_team_namespace_admission_passes_baseline_and_covered_fabric_namespaces(pack):
    for stack in ("gke-flex-start-tas", "gke-kueue", "eks-kueue"):
        assert ours(pack.stack(recorded(stack)), TEAM) == [], stack


def test_a_privileged_team_namespace_without_its_binding_is_a_violation(pack):
    resources = without(
        recorded("gke-flex-start-tas"),
        lambda r: r.type == BINDING and r.name == "admission-binding-gpu-cluster-fabric-pods",
    )
    found = ours(pack.stack(resources), TEAM)
    assert [d[2].split(":")[0] for d in found] == ["team namespace 'product-ml'", "team namespace 'research'"]
    assert found[1][:2] == (TEAM, M)
    assert found[1][2].startswith(
        "team namespace 'research': the stack's admission chain admits requests a tenant makes to escape its lane "
        "(root on a node, GPUs outside quota) · observed: pod-security.kubernetes.io/enforce: privileged; admitted: "
        "privileged container; host PID namespace; host network namespace; host IPC namespace; host / mounted; "
    )
    assert "sidecar startupProbe runs a command with NET_ADMIN and host /proc/sys (as the runtime " in found[1][2]
    assert "Fix: label the namespace pod-security.kubernetes.io/enforce: baseline" in found[1][2]
    assert waived(pack, TEAM, "research", resources) != []  # product-ml is still reported
    pack.configure(
        {
            TEAM: {
                "waivers": [
                    {"rule": TEAM, "resource": n, "reason": "tested on purpose here"}
                    for n in ("research", "product-ml")
                ]
            }
        }
    )
    try:
        assert ours(pack.stack(resources), TEAM) == []
    finally:
        pack.configure()


def test_a_binding_that_only_warns_does_not_cover(pack):
    resources = changed(
        recorded("gke-flex-start-tas"),
        BINDING,
        "admission-binding-gpu-cluster-fabric-pods",
        lambda p: p["spec"].__setitem__("validationActions", ["Warn"]),
    )
    assert len(ours(pack.stack(resources), TEAM)) == 2


def test_a_privileged_label_on_a_plain_team_namespace_is_a_violation(pack):
    resources = changed(
        recorded("eks-kueue"),
        NS,
        "kueue-ns-pretraining",
        lambda p: p["metadata"]["labels"].__setitem__("pod-security.kubernetes.io/enforce", "privileged"),
    )
    assert [d[2].split(":")[0] for d in ours(pack.stack(resources), TEAM)] == ["team namespace 'pretraining'"]


# -- security-device-annotation-policy --------------------------------------------------------------------------
DEVICE = "security-device-annotation-policy"


def test_device_annotation_policy(pack):
    resources = recorded("gke-h100-512")
    assert ours(pack.stack(resources), DEVICE) == []
    bare = without(resources, lambda r: r.type == BINDING)
    assert ours(pack.stack(bare), DEVICE) == [
        (
            DEVICE,
            M,
            (
                "DaemonSet 'device-injector': the NRI device injector adds any host device a pod names in a devices.gke.io "
                "annotation, after admission, so any pod can take the node's boot disk · observed: no Deny-bound "
                "ValidatingAdmissionPolicy on devices.gke.io annotations covers every namespace · required: a cluster-wide "
                "policy admitting only devices.gke.io/container.<fabric sidecar> with GPU device paths, in the namespaces "
                "fabric jobs run in\nFix: keep gpu-cluster-device-annotations and its binding (render/admission.py)"
            ),
        )
    ]
    narrowed = changed(
        resources,
        BINDING,
        "admission-binding-gpu-cluster-device-annotations",
        lambda p: p["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"][0].update(
            operator="In", values=["slurm"]
        ),
    )
    assert len(ours(pack.stack(narrowed), DEVICE)) == 1  # only slurm covered: not cluster-wide
    assert waived(pack, DEVICE, "device-injector", bare) == []


# -- security-unauthenticated-components ------------------------------------------------------------------------
UNAUTH = "security-unauthenticated-components"
NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"


@pytest.mark.parametrize(
    "stack, directory, title",
    [
        ("gke-kueue", "kubeflow-katib-manifests", "Katib"),
        ("eks-kueue", "kubeflow-pipelines-manifests", "Kubeflow Pipelines"),
    ],
)
def test_unauthenticated_components_need_default_deny(pack, stack, directory, title):
    resources = recorded(stack)
    assert ours(pack.stack(resources), UNAUTH) == []
    bare = without(resources, lambda r: r.type == NETPOL and r.name.endswith("default-deny-ingress"))
    found = ours(pack.stack(bare), UNAUTH)
    assert found and found[0][2].startswith(f"{title} ('{directory}'): it authenticates nobody")
    assert "observed: no default-deny ingress NetworkPolicy in namespace kubeflow" in found[0][2]
    names = sorted({d[2].split("'")[1] for d in found})
    pack.configure(
        {UNAUTH: {"waivers": [{"rule": UNAUTH, "resource": n, "reason": "tested on purpose here"} for n in names]}}
    )
    try:
        assert ours(pack.stack(bare), UNAUTH) == []
    finally:
        pack.configure()


# -- security-network-policy-enforcement ------------------------------------------------------------------------
ENFORCED = "security-network-policy-enforcement"


def test_network_policies_must_be_enforced_on_eks(pack):
    resources = recorded("eks-kueue")
    assert ours(pack.stack(resources), ENFORCED) == []
    bare = without(resources, lambda r: r.type == "aws:eks/addon:Addon" and r.name.endswith("vpc-cni"))
    assert ours(pack.stack(bare), ENFORCED) == [
        (
            ENFORCED,
            M,
            (
                "cluster 'llm-shared': the stack's NetworkPolicies are stored but nothing enforces them (the default VPC "
                "CNI ignores them) · observed: no vpc-cni add-on with enableNetworkPolicy · required: an aws.eks.Addon "
                'vpc-cni with configurationValues {"enableNetworkPolicy": "true"}\nFix: keep the vpc-cni add-on gpu-cluster '
                "creates with the cluster; for an existing cluster, turn its network policy agent on"
            ),
        )
    ]
    off = changed(
        resources,
        "aws:eks/addon:Addon",
        "llm-shared-vpc-cni",
        lambda p: p.__setitem__("configurationValues", json.dumps({"enableNetworkPolicy": "false"})),
    )
    assert len(ours(pack.stack(off), ENFORCED)) == 1
    assert waived(pack, ENFORCED, "llm-shared", bare) == []


def test_network_policies_must_be_enforced_on_gke(pack):
    resources = recorded("gke-kueue")
    cluster = next(r for r in resources if r.type == "gcp:container/cluster:Cluster")
    resources = changed(resources, cluster.type, cluster.name, lambda p: p.pop("datapathProvider"))
    found = ours(pack.stack(resources), ENFORCED)
    assert [d[2].split(" · ")[1] for d in found] == ["observed: datapathProvider unset, networkPolicy not enabled"]


# -- security-kueue-unqueued-jobs -------------------------------------------------------------------------------
UNQUEUED = "security-kueue-unqueued-jobs"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _config_edit(change):
    def edit(props):
        text = props["values"]["managerConfig"]["controllerManagerConfigYaml"]
        config = yaml.safe_load(text)
        change(config)
        props["values"]["managerConfig"]["controllerManagerConfigYaml"] = yaml.safe_dump(config)

    return edit


def test_jobs_without_a_queue_name_are_kueues(pack):
    resources = recorded("gke-kueue")
    assert ours(pack.stack(resources), UNQUEUED) == []
    off = changed(resources, RELEASE, "kueue-chart", _config_edit(lambda c: c.pop("manageJobsWithoutQueueName")))
    assert ours(pack.stack(off), UNQUEUED) == [
        (
            UNQUEUED,
            M,
            (
                "Helm release 'kueue-chart' (Kueue): a tenant's Job, JobSet or pod without a queue name runs at once, "
                "outside every quota · observed: manageJobsWithoutQueueName false · required: manageJobsWithoutQueueName: "
                "true with managedJobsNamespaceSelector selecting every team namespace\nFix: keep the manager configuration "
                "gpu-cluster renders (render/kueue_config.py)"
            ),
        )
    ]
    narrow = changed(
        resources,
        RELEASE,
        "kueue-chart",
        _config_edit(
            lambda c: c["managedJobsNamespaceSelector"]["matchExpressions"][0].__setitem__("values", ["research"])
        ),
    )
    assert (
        "team namespaces outside managedJobsNamespaceSelector: product-ml" in ours(pack.stack(narrow), UNQUEUED)[0][2]
    )
    assert waived(pack, UNQUEUED, "kueue-chart", off) == []


# -- security-authorized-network-width --------------------------------------------------------------------------
WIDTH = "security-authorized-network-width"


def test_authorized_networks_wider_than_a_slash_8_are_violations(pack):
    resources = recorded("dev")
    cluster = next(r for r in resources if r.type == "gcp:container/cluster:Cluster")
    assert ours(pack.resource(cluster, resources), WIDTH) == []
    props = wire(cluster)
    props["masterAuthorizedNetworksConfig"]["cidrBlocks"][0]["cidrBlock"] = "64.0.0.0/2"
    wide = with_props(cluster, props)
    assert ours(pack.resource(wide, resources), WIDTH) == [
        (
            WIDTH,
            M,
            (
                "cluster 'gpu-dev': 1,073,741,824 addresses may reach the Kubernetes API · observed: "
                "masterAuthorizedNetworksConfig.cidrBlocks[0].cidrBlock 64.0.0.0/2 · required: /8 or narrower, from "
                "minPrefixLength\nFix: list only the ranges that run kubectl/pulumi in cluster.authorizedNetworks"
            ),
        )
    ]
    pack.configure({WIDTH: {"minPrefixLength": 2}})
    try:
        assert ours(pack.resource(wide, resources), WIDTH) == []
    finally:
        pack.configure()
