"""A pod never loses its owner in a team namespace, so it never keeps GPUs outside quota: on the recorded Kueue
stacks the bound admission policies (CEL run by cel-python) refuse a tenant's UPDATE that removes or changes a
pod's ownerReferences or its job labels, a DELETE of a Job, JobSet or TrainJob that orphans its pods (the batch/v1
default included) and the orphan finalizer, and admit the same from the controllers and a cascading delete."""

from __future__ import annotations

import copy

import pytest

from render.quota_admission import GARBAGE_COLLECTOR, ORPHAN_POLICY, QUOTA_POLICY, sa
from tests.support.helm.examples import recording
from tests.support.kube.admission import admission_failures, k8s_objects

JOB_CONTROLLER = sa("kube-system", "job-controller")
OWNER = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "6b1f", "controller": True}
LABELS = {
    "batch.kubernetes.io/controller-uid": "6b1f",
    "batch.kubernetes.io/job-name": "train",
    "controller-uid": "6b1f",
    "job-name": "train",
}


@pytest.fixture(scope="module", params=["gke-kueue", "eks-kueue", "fleet-gke"])
def stack(request):
    objects = k8s_objects(recording(request.param))
    teams = sorted({o["metadata"]["namespace"] for o in objects if o["kind"] == "LocalQueue"})
    return objects, teams


def _refused(objects, obj, ns, **kw) -> list[str]:
    return [r for r in admission_failures(objects, obj, ns, **kw) if r.startswith((QUOTA_POLICY, ORPHAN_POLICY))]


def _running_pod() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train-0", "labels": dict(LABELS), "ownerReferences": [dict(OWNER)]},
        "spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]},
    }


def test_removing_or_changing_a_pods_owner_is_refused_but_to_the_controllers(stack):
    objects, teams = stack
    old = _running_pod()
    ownerless, renamed = copy.deepcopy(old), copy.deepcopy(old)
    del ownerless["metadata"]["ownerReferences"]
    renamed["metadata"]["ownerReferences"][0]["uid"] = "other"
    for ns in teams:
        for new in (ownerless, renamed):
            assert any(
                "changed (or removed) only by those controllers" in r
                for r in _refused(objects, new, ns, operation="UPDATE", old=old)
            ), ns
        # the garbage collector strips the owner when a cascade orphans; the Job controller adopts and releases
        for user in (GARBAGE_COLLECTOR, JOB_CONTROLLER):
            assert _refused(objects, ownerless, ns, operation="UPDATE", old=old, user=user) == []


@pytest.mark.parametrize("key", sorted(LABELS))
def test_a_pods_job_labels_are_changed_only_by_the_controllers(stack, key):
    objects, teams = stack
    old = _running_pod()
    dropped, changed, added = copy.deepcopy(old), copy.deepcopy(old), copy.deepcopy(old)
    del dropped["metadata"]["labels"][key]
    changed["metadata"]["labels"][key] = "freed"
    del old["metadata"]["labels"][key]  # a label the pod did not have before, added
    for before, new in ((_running_pod(), dropped), (_running_pod(), changed), (old, added)):
        refused = _refused(objects, new, teams[0], operation="UPDATE", old=before)
        assert any("job labels" in r for r in refused), (key, refused)
        assert _refused(objects, new, teams[0], operation="UPDATE", old=before, user=JOB_CONTROLLER) == []
    other = _running_pod()
    other["metadata"]["labels"]["team/note"] = "x"  # any other label is the tenant's own
    assert _refused(objects, other, teams[0], operation="UPDATE", old=_running_pod()) == []


@pytest.mark.parametrize(
    "resource, options, admitted",
    [
        ("jobs", {"propagationPolicy": "Orphan"}, False),
        ("jobs", {}, False),  # batch/v1's legacy default through the API orphans the pods
        ("jobs", {"orphanDependents": True}, False),
        ("jobs", {"propagationPolicy": "Background"}, True),  # kubectl delete's default
        ("jobs", {"propagationPolicy": "Foreground"}, True),
        ("jobsets", {"propagationPolicy": "Orphan"}, False),
        ("jobsets", {}, True),  # a custom resource's default is background
        ("trainjobs", {"orphanDependents": True}, False),
        ("trainjobs", {"propagationPolicy": "Background"}, True),
    ],
)
def test_a_delete_that_orphans_a_jobs_pods_is_refused(stack, resource, options, admitted):
    objects, teams = stack
    job = {"kind": "Job", "metadata": {"name": "train"}, "spec": {"suspend": False}}
    for ns in teams:
        refused = _refused(objects, job, ns, operation="DELETE", resource=resource, old=job, options=options)
        assert (refused == []) == admitted, (ns, refused)
    # the garbage collector and the Job controller delete as the cascade they serve asks
    assert (
        _refused(
            objects,
            job,
            teams[0],
            operation="DELETE",
            resource=resource,
            old=job,
            options={"propagationPolicy": "Orphan"},
            user=GARBAGE_COLLECTOR,
        )
        == []
    )


def test_the_orphan_finalizer_is_refused_on_a_job(stack):
    objects, teams = stack
    old = {"kind": "Job", "metadata": {"name": "train"}, "spec": {"suspend": False}}
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["orphan"]
    assert any(
        "orphan finalizer" in r for r in _refused(objects, new, teams[0], operation="UPDATE", resource="jobs", old=old)
    )
    assert _refused(objects, new, teams[0], operation="UPDATE", resource="jobs", old=new) == []
