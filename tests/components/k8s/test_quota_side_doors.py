"""Kueue's quota has no side doors in team namespaces: on the recorded stacks, the bound admission policies (their
CEL run by cel-python, as the API server would, with the requesting user and the object before an update) refuse a
tenant's forged-owner pod, the removal of Kueue's scheduling gates, unsuspending a job, raising a running Job's
parallelism, an elastic Job and a long termination grace period, and admit the same requests from the controllers that make them legitimately."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from render.quota_admission import GATE, JOBSET, KATIB, KUEUE, QUOTA_POLICY, TRAINER, sa
from tests.support.helm.examples import recording, rendered
from tests.support.kube.admission import admission_failures, k8s_objects

KUEUE_STACKS = ["gke-kueue", "eks-kueue", "gke-flex-start-tas", "fleet-gke"]
JOB_CONTROLLER = sa("kube-system", "job-controller")


@pytest.fixture(scope="module", params=KUEUE_STACKS)
def stack(request):
    objects = k8s_objects(recording(request.param))
    teams = sorted({o["metadata"]["namespace"] for o in objects if o["kind"] == "LocalQueue"})
    assert teams, request.param
    return request.param, objects, teams


def _pod(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "main", "image": "busybox:1.37", "resources": {"limits": {"nvidia.com/gpu": "8"}}}],
            **spec,
        },
    }


def _refused(objects, obj, ns, **kw) -> list[str]:
    return [r for r in admission_failures(objects, obj, ns, **kw) if r.startswith(QUOTA_POLICY + ":")]


OWNER = {"apiVersion": "batch/v1", "kind": "Job", "name": "admitted-job", "uid": "6b1f", "controller": True}


def test_a_pod_with_a_forged_owner_is_refused_in_every_team_namespace(stack):
    _, objects, teams = stack
    pod = _pod()
    pod["metadata"]["ownerReferences"] = [OWNER]
    for ns in teams:
        assert any("only created by the controllers" in r for r in _refused(objects, pod, ns)), ns
        assert _refused(objects, pod, ns, user=JOB_CONTROLLER) == []
    assert _refused(objects, _pod(), teams[0]) == []  # no owner: Kueue gates it


def test_owners_added_on_update_are_refused(stack):
    _, objects, teams = stack
    old, new = _pod(), _pod()
    new["metadata"]["ownerReferences"] = [OWNER]
    assert _refused(objects, new, teams[0], operation="UPDATE", old=old)
    assert _refused(objects, new, teams[0], operation="UPDATE", old=new) == []  # unchanged owners: any update


def test_only_kueue_removes_its_scheduling_gate(stack):
    _, objects, teams = stack
    for gate in (GATE, "kueue.x-k8s.io/topology"):  # the topology gate too: lifting it places the pod (TAS)
        old, new = _pod(schedulingGates=[{"name": gate}, {"name": "example.com/other"}]), _pod()
        for ns in teams:
            refused = _refused(objects, new, ns, operation="UPDATE", old=old)
            assert any("only Kueue removes its scheduling gates" in r for r in refused), (gate, refused)
            assert _refused(objects, new, ns, operation="UPDATE", old=old, user=KUEUE) == []
            kept = _pod(schedulingGates=[{"name": gate}])  # removing someone else's gate is not Kueue's business
            assert _refused(objects, kept, ns, operation="UPDATE", old=old) == []


@pytest.mark.parametrize("kind, resource", [("Job", "jobs"), ("JobSet", "jobsets"), ("TrainJob", "trainjobs")])
def test_only_kueue_unsuspends_a_job(stack, kind, resource):
    _, objects, teams = stack
    old = {"kind": kind, "metadata": {"name": "j"}, "spec": {"suspend": True}}
    new = copy.deepcopy(old)
    new["spec"]["suspend"] = False
    for ns in teams:
        refused = _refused(objects, new, ns, operation="UPDATE", resource=resource, old=old)
        assert any("only Kueue unsuspends a job" in r for r in refused), refused
        assert _refused(objects, new, ns, operation="UPDATE", resource=resource, old=old, user=KUEUE) == []
    # suspending is anyone's right (it gives the GPUs back)
    assert _refused(objects, old, teams[0], operation="UPDATE", resource=resource, old=new) == []


def test_a_running_jobs_parallelism_is_raised_only_by_kueue(stack):
    """Kueue stops a Job that no longer matches its admitted Workload, but the Job controller may start the extra
    pods first: a raise on a running Job is refused; a suspended Job may change, and lowering gives GPUs back."""
    _, objects, teams = stack
    running = {"kind": "Job", "metadata": {"name": "j"}, "spec": {"suspend": False, "parallelism": 2}}
    raised = copy.deepcopy(running)
    raised["spec"]["parallelism"] = 16
    unset = {"kind": "Job", "metadata": {"name": "j"}, "spec": {}}  # parallelism 1, not suspended
    for ns in teams:
        for old, new in ((running, raised), (unset, {**unset, "spec": {"parallelism": 2}})):
            refused = _refused(objects, new, ns, operation="UPDATE", resource="jobs", old=old)
            assert any("a running Job's parallelism is not raised" in r for r in refused), refused
            assert _refused(objects, new, ns, operation="UPDATE", resource="jobs", old=old, user=KUEUE) == []
    suspended = {"kind": "Job", "metadata": {"name": "j"}, "spec": {"suspend": True, "parallelism": 2}}
    more = {"kind": "Job", "metadata": {"name": "j"}, "spec": {"suspend": True, "parallelism": 16}}
    assert _refused(objects, more, teams[0], operation="UPDATE", resource="jobs", old=suspended) == []
    assert _refused(objects, running, teams[0], operation="UPDATE", resource="jobs", old=raised) == []


def test_elastic_jobs_are_refused(stack):
    _, objects, teams = stack
    job = {
        "kind": "Job",
        "metadata": {"name": "j", "annotations": {"kueue.x-k8s.io/elastic-job": "true"}},
        "spec": {"parallelism": 1},
    }
    refused = _refused(objects, job, teams[0], resource="jobs")
    assert any("elastic Jobs (kueue.x-k8s.io/elastic-job) are refused" in r for r in refused), refused


@pytest.mark.parametrize("seconds, admitted", [(30, True), (60, True), (61, False), (86400, False)])
def test_termination_grace_is_capped(stack, seconds, admitted):
    _, objects, teams = stack
    refused = _refused(objects, _pod(terminationGracePeriodSeconds=seconds), teams[0])
    assert (refused == []) == admitted, refused


def test_the_policy_is_not_bound_outside_team_namespaces(stack):
    _, objects, _ = stack
    pod = _pod()
    pod["metadata"]["ownerReferences"] = [OWNER]
    assert _refused(objects, pod, "kube-system") == []


@pytest.mark.parametrize("identity", [KUEUE, TRAINER, JOBSET])
def test_the_controller_identities_are_the_pinned_charts_service_accounts(identity):
    """The names the policy trusts are the ServiceAccounts the pinned Kueue and Trainer charts create, in the
    namespaces the stack installs them in (a typo would refuse the controllers and admit nobody's jobs)."""
    _, _, namespace, name = identity.split(":")
    accounts = {
        (o["metadata"].get("namespace"), o["metadata"]["name"])
        for o in rendered("gke-kueue").objects
        if o["kind"] == "ServiceAccount"
    }
    assert (namespace, name) in accounts, sorted(accounts)


def test_katib_trials_may_create_their_jobs_only_where_katib_runs():
    objects = k8s_objects(recording("gke-kueue"))
    policy = next(o for o in objects if o["metadata"]["name"] == QUOTA_POLICY and o["kind"].endswith("Policy"))
    assert KATIB in str(policy["spec"]["validations"][0]["expression"])
    objects = k8s_objects(recording("gke-flex-start-tas"))
    policy = next(o for o in objects if o["metadata"]["name"] == QUOTA_POLICY and o["kind"].endswith("Policy"))
    assert KATIB not in str(policy["spec"]["validations"][0]["expression"])
