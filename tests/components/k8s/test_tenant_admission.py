"""Two ways a tenant could escape its lane (root on a node, a host device), on the example stacks as recorded: what the
admission chain (Pod Security + the bound ValidatingAdmissionPolicies, their CEL run by cel-python) decides for the pods
the stack's own runtimes make, and for a tenant's pod that tries to become root on a node or take a host device."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from render.kueue import ADMISSION_ANNOTATION
from tests.support.kube.admission import (
    admission_failures,
    fabric_case,
    fleet_runtime_pods,
    k8s_objects,
    pod_from_template,
    policy_failures,
    runtime_pods,
    team_pools,
)
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS
from tests.support.helm.examples import recording
from tests.support.kube.schema import K8S_VERSION

FABRIC_TEAM_STACKS = ["gke-flex-start-tas", "gke-a3-ultra-rdma", "gke-kueue"]
"""Kueue stacks with a GKE GPUDirect pool (TCPX, RDMA, TCPX): their teams' namespaces get host-access pods."""


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_runtime_pod_is_admitted_in_every_namespace_with_quota_on_its_pool(stack):
    objects = k8s_objects(recording(stack))
    pods = runtime_pods(objects)
    checked = 0
    for ns, pools in team_pools(objects).items():
        for pool in sorted(pools & set(pods)):
            assert admission_failures(objects, pods[pool], ns) == [], (stack, ns, pool)
            checked += 1
    assert checked or not pods, f"{stack}: runtimes but no namespace to run them in"


@pytest.mark.parametrize("stack", ["fleet-gke", "fleet-eks"])
def test_every_fleet_runtime_pod_is_admitted_in_every_team_namespace(stack):
    """A fleet job names ``fleet-<model>`` and runs in its team namespace on whichever pool carries that model."""
    objects = k8s_objects(recording(stack))
    pods = fleet_runtime_pods(objects)
    teams = team_pools(objects)
    assert pods and teams, f"{stack}: no fleet runtime or no team namespace"
    for ns in teams:
        for name, pod in pods.items():
            assert admission_failures(objects, pod, ns) == [], (stack, ns, name)


@pytest.mark.parametrize("stack", FABRIC_TEAM_STACKS)
@pytest.mark.parametrize(
    "change, why",
    [
        ({"privileged": True}, "privileged"),
        ({"hostPID": True}, "host namespaces"),
        ({"hostNetwork": True}, "host namespaces"),
        ({"hostPath": "/"}, "hostPath volumes are refused"),
    ],
)
def test_a_tenant_cannot_become_root_on_a_node_from_a_fabric_team_namespace(stack, change, why):
    """Way in 1: before, these namespaces were Pod Security ``privileged`` with nothing else in the way."""
    objects, ns, pod = fabric_case(stack)
    evil = copy.deepcopy(pod)
    main = evil["spec"]["containers"][0]
    if "privileged" in change:
        main["securityContext"] = {"privileged": True}
    elif "hostPath" in change:
        evil["spec"]["volumes"].append({"name": "root", "hostPath": {"path": "/"}})
        main["volumeMounts"] = [*main.get("volumeMounts", []), {"name": "root", "mountPath": "/host"}]
    else:
        evil["spec"].update(change)
    refusals = admission_failures(objects, evil, ns)
    assert any(why in r for r in refusals), refusals


@pytest.mark.parametrize("stack", FABRIC_TEAM_STACKS)
def test_fabric_team_namespaces_name_the_policy_that_enforces_baseline(stack):
    objects, ns, _ = fabric_case(stack)
    namespace = next(o for o in objects if o["kind"] == "Namespace" and o["metadata"]["name"] == ns)
    assert namespace["metadata"]["annotations"][ADMISSION_ANNOTATION] == "gpu-cluster-fabric-pods"


@pytest.mark.parametrize("stack", [s for s in EXAMPLE_STACKS if s.startswith("gke-")])
def test_admission_objects_are_valid_kubernetes_objects(stack):
    objects = [o for o in k8s_objects(recording(stack)) if o["apiVersion"].startswith("admissionregistration")]
    for obj in objects:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    kinds = sorted({o["kind"] for o in objects})
    assert kinds in ([], ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]), kinds
    assert len([o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]) == len(objects) // 2


@pytest.mark.parametrize("stack", ["gke-flex-start-tas", "gke-kueue", "gke-h100-512"])
def test_a_pod_cannot_take_the_boot_disk_through_the_device_injector(stack):
    """Way in 2: the injector adds whatever ``devices.gke.io/*`` names, in any namespace; the cluster-wide policy
    refuses it (a team namespace without fabric quota, and ``default``)."""
    objects = k8s_objects(recording(stack))
    assert any(o["kind"] == "DaemonSet" and o["metadata"]["name"] == "device-injector" for o in objects)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"annotations": {"devices.gke.io/container.main": "- path: /dev/sda\n"}},
        "spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]},
    }
    for ns in ("default", "kube-public"):
        refusals = admission_failures(objects, pod, ns)
        assert any("gpu-cluster-device-annotations" in r for r in refusals), (ns, refusals)
    pod["metadata"]["annotations"] = {"devices.gke.io/pod": "- path: /dev/sda\n"}
    assert any("devices.gke.io annotations are refused" in r for r in admission_failures(objects, pod, "default"))


def test_the_device_policy_admits_every_fabric_daemonset_of_the_stack():
    """The fabric's own workloads (installers, injector) carry no device annotation and pass the policy even though
    its binding leaves kube-system out."""
    objects = k8s_objects(recording("gke-h100-512"))
    policy = next(
        o
        for o in objects
        if o["kind"] == "ValidatingAdmissionPolicy" and o["metadata"]["name"] == "gpu-cluster-device-annotations"
    )
    daemonsets = [o for o in objects if o["kind"] == "DaemonSet"]
    assert len(daemonsets) >= 2
    for ds in daemonsets:
        assert policy_failures(policy, pod_from_template(ds["spec"]["template"]), ds["metadata"]["namespace"]) == []


@pytest.mark.parametrize("stack", ["gke-flex-start-tas", "gke-kueue"])
def test_no_exec_into_the_fabric_sidecar(stack):
    """``kubectl exec`` is a CONNECT on pods/exec whose object is the PodExecOptions."""
    objects, ns, pod = fabric_case(stack)
    sidecar = next(c["name"] for c in pod["spec"]["initContainers"] if c.get("restartPolicy") == "Always")
    into_sidecar = {"kind": "PodExecOptions", "container": sidecar, "command": ["sh"], "stdin": True}
    refusals = admission_failures(objects, into_sidecar, ns, "CONNECT", "pods/exec")
    assert refusals == [
        "gpu-cluster-fabric-exec: exec and attach must name the container (kubectl exec -c "
        f"<container>), and never the GPU fabric's sidecar ({sidecar}): it holds NET_ADMIN and the "
        "host's /sys"
    ]
    into_main = {**into_sidecar, "container": pod["spec"]["containers"][0]["name"]}
    assert admission_failures(objects, into_main, ns, "CONNECT", "pods/exec") == []
    assert admission_failures(objects, into_sidecar, "default", "CONNECT", "pods/exec") == []  # not bound there
