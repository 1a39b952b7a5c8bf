"""security-team-namespace-admission proves the tenancy policies by running them: the corpus of hostile requests
(policies/hostile_requests.yaml) through each example's own admission chain, CEL evaluated. The examples refuse
every entry; the policies as they were before the sidecar, exec and quota fixes (their CEL put back into the
recorded objects) and a policy that only names the right fields are violations naming the escapes they admit."""

from __future__ import annotations

import pytest

from policies.hostile import attempts, corpus
from policies.rule import Resource
from tests.support.policy.harness import Pack, example as recorded, wire
from tests.policies.test_policy_tenancy import BINDING, TEAM, VAP, changed, ours, without

FABRIC = "admission-policy-gpu-cluster-fabric-pods"
EXEC = "admission-policy-gpu-cluster-fabric-exec"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def _resources(stack_resources) -> list[Resource]:
    return [Resource(type=r.type, name=r.name, urn=r.urn, props=wire(r)) for r in stack_resources]


def _admitted(pack, resources, namespace="research") -> str:
    found = [d[2] for d in ours(pack.stack(resources), TEAM) if d[2].startswith(f"team namespace '{namespace}'")]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("stack", ["gke-kueue", "gke-flex-start-tas", "fleet-gke", "gke-a3-ultra-rdma", "eks-kueue"])
def test_every_example_refuses_every_hostile_request(stack):
    tried = attempts(_resources(recorded(stack)))
    assert tried and [a for a in tried if a.admitted] == []


def test_every_entry_of_the_corpus_applies_to_a_gpudirect_tcpx_stack():
    """No entry is silently never tried: on gke-kueue (TCPX sidecar, device injector, Kueue) each one is."""
    names = {e["escape"] for e in corpus()["escapes"] if e.get("needs") != "fleet-worker"}
    assert len(names) >= 30
    assert {a.escape for a in attempts(_resources(recorded("gke-kueue")))} == names


def test_the_fleet_tokens_entries_are_tried_and_refused_on_a_fleet_worker_only():
    token = {e["escape"] for e in corpus()["escapes"] if e.get("needs") == "fleet-worker"}
    assert token
    for stack in ("fleet-gke", "fleet-eks"):
        tried = [a for a in attempts(_resources(recorded(stack))) if a.escape in token]
        assert {a.escape for a in tried} == token and all(not a.admitted for a in tried), stack
        assert all(any(r.startswith("gpu-cluster-fleet-token") for r in a.refused_by) for a in tried), tried


def _loose_sidecar(props):
    """The exemption as it was: name, pinned image and command, no args."""
    var = next(v for v in props["spec"]["variables"] if v["name"] == "exactSidecars")
    image = var["expression"].split("c.image == '")[1].split("'")[0]
    command = "[" + var["expression"].split("c.command == [")[1].split("]")[0] + "]"
    var["expression"] = (
        f"variables.containers.filter(c, c.name == 'tcpx-daemon' && c.image == '{image}' && "
        f"has(c.command) && c.command == {command} && !has(c.args)).map(c, c.name)"
    )


def test_the_sidecar_exemption_as_it_was_is_a_violation(pack):
    text = _admitted(pack, changed(recorded("gke-kueue"), VAP, FABRIC, _loose_sidecar))
    for escape in (
        "sidecar startupProbe runs a command",
        "sidecar postStart hook",
        "LD_PRELOAD into the sidecar",
        "envFrom into the sidecar",
        "ConfigMap mounted over the sidecar's binary",
        "sidecar as uid 0 by request",
        "sidecar subPath into host /proc/sys",
    ):
        assert escape in text, escape
    assert "sidecar exemption running a shell" not in text  # the first round's fix still holds


def test_exec_as_it_was_is_a_violation(pack):
    def old(props):
        props["spec"]["validations"][0]["expression"] = (
            "!has(object.container) || !(object.container in ['tcpx-daemon'])"
        )

    text = _admitted(pack, changed(recorded("gke-kueue"), VAP, EXEC, old))
    assert "admitted: exec without a container name (the API server picks one)" in text
    assert "exec into the sidecar;" not in text


def test_team_namespaces_without_the_quota_policy_are_violations(pack):
    resources = without(
        recorded("eks-kueue"), lambda r: r.type == BINDING and r.name == "admission-binding-gpu-cluster-quota"
    )
    text = _admitted(pack, resources, "pretraining")
    assert text.split("admitted: ")[1].split(" · ")[0] == (
        "pod with a forged controller owner (Kueue leaves it ungated); StatefulSet with a forged controller owner "
        "(Kueue walks the chain and leaves its pods ungated); Deployment with a forged controller owner (its "
        "ReplicaSet's pods ungated); ReplicaSet with a forged controller owner; LeaderWorkerSet with a forged "
        "controller owner; Kueue's scheduling gate removed; Kueue's topology gate removed (the pod lands outside its "
        "assigned topology domain); Job "
        "unsuspended by its owner; JobSet unsuspended by its owner; TrainJob unsuspended by its owner; elastic Job "
        "(never suspended again when it scales up); GPUs held for a day after preemption; a running Job's "
        "parallelism raised (extra pods start before Kueue stops the out-of-sync Job); a running Job's parallelism "
        "raised (suspend and parallelism left unset); a running pod's ownerReferences removed (it keeps its GPUs; "
        "the Job starts another in the same quota); a running pod relabelled away from its Job (the Job no longer "
        "counts it and starts another); orphan finalizer on a running Job (a later delete orphans its pods)"
    )


def test_team_namespaces_without_the_orphan_policy_are_violations(pack):
    resources = without(
        recorded("eks-kueue"), lambda r: r.type == BINDING and r.name == "admission-binding-gpu-cluster-no-orphans"
    )
    text = _admitted(pack, resources, "pretraining")
    assert text.split("admitted: ")[1].split(" · ")[0] == (
        "Job deleted with orphan propagation (its pods keep running after Kueue releases the quota); Job deleted "
        "through the API without a propagation policy (batch/v1 orphans by default); JobSet deleted with "
        "orphanDependents; TrainJob deleted with orphan propagation; LeaderWorkerSet deleted with orphan propagation "
        "(Kueue finishes its Workload; its pods keep their GPUs)"
    )


def test_a_policy_that_only_names_the_fields_is_a_violation(pack):
    """The old rule accepted any Deny-bound policy whose CEL text contained these four words."""

    def keywords(props):
        props["spec"]["validations"] = [
            {"expression": "['privileged', 'hostPID', 'hostNetwork', 'hostPath'].size() == 4", "message": "baseline"}
        ]

    text = _admitted(pack, changed(recorded("gke-flex-start-tas"), VAP, FABRIC, keywords))
    assert "privileged container; host PID namespace; host network namespace" in text


# -- security-fleet-worker-token ----------------------------------------------------------------------------------
TOKEN = "security-fleet-worker-token"
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"


@pytest.mark.parametrize("stack", ["fleet-gke", "fleet-eks"])
def test_the_worker_token_rule_passes_on_the_workers(pack, stack):
    assert ours(pack.stack(recorded(stack)), TOKEN) == []


def test_a_worker_token_that_may_create_pods_in_kube_system_is_a_violation(pack):
    """The token as it was: the sample's ClusterRole (create, delete ...) and no worker-side policy."""
    resources = without(
        recorded("fleet-gke"), lambda r: r.type == BINDING and r.name.startswith("fleet-worker-token-policy")
    )
    resources = changed(
        resources, CLUSTER_ROLE, "fleet-worker-role", lambda p: p["rules"][0]["verbs"].extend(["create", "delete"])
    )
    (found,) = ours(pack.stack(resources), TOKEN)
    assert (
        "observed: ClusterRole multikueue-sa-role grants create, delete cluster-wide; a pod created with the token "
        "in kube-system is admitted" in found[2]
    )
