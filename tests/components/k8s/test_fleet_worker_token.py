"""The fleet manager's token on a worker reaches only the mirrored team namespaces: its cluster-wide role only reads,
Roles in those namespaces carry the writes, and the worker's admission policy (CEL run by cel-python on the recorded
objects) refuses the token a pod or a Job in kube-system or any other namespace, whatever RBAC says."""

from __future__ import annotations

import pytest

from render.fleet_worker import TOKEN_POLICY, username
from tests.support.helm.examples import recording
from tests.support.kube.admission import admission_failures, k8s_objects

WORKERS = ["fleet-gke", "fleet-eks"]
WRITES = {"create", "delete", "update", "patch", "*"}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "x"},
    "spec": {"containers": [{"name": "x", "image": "busybox:1.37"}]},
}


@pytest.fixture(scope="module", params=WORKERS)
def worker(request):
    objects = k8s_objects(recording(request.param))
    teams = sorted({o["metadata"]["namespace"] for o in objects if o["kind"] == "LocalQueue"})
    assert teams
    return objects, teams


def _token(objects, obj, ns, **kw):
    return [r for r in admission_failures(objects, obj, ns, user=username(), **kw) if r.startswith(TOKEN_POLICY)]


@pytest.mark.parametrize("namespace", ["kube-system", "default", "kueue-system"])
def test_the_token_may_not_create_a_pod_or_a_job_outside_the_mirrored_namespaces(worker, namespace):
    objects, teams = worker
    assert _token(objects, POD, namespace), namespace
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}, "spec": {}}
    assert _token(objects, job, namespace, resource="jobs")
    assert _token(objects, POD, namespace, operation="CONNECT", resource="pods/exec")


def test_the_token_writes_in_the_mirrored_namespaces_and_others_are_untouched(worker):
    objects, teams = worker
    for ns in teams:
        assert _token(objects, POD, ns) == []
    assert [r for r in admission_failures(objects, POD, "kube-system") if r.startswith(TOKEN_POLICY)] == []


def test_the_cluster_role_only_reads_and_roles_write_only_in_team_namespaces(worker):
    objects, teams = worker
    bound = {
        b["roleRef"]["name"]: b
        for b in objects
        if b["kind"] in ("ClusterRoleBinding", "RoleBinding")
        and any(s.get("name") == "multikueue-sa" for s in b.get("subjects", []))
    }
    cluster_roles = [o for o in objects if o["kind"] == "ClusterRole" and o["metadata"]["name"] in bound]
    assert cluster_roles and all(not WRITES & set(r["verbs"]) for c in cluster_roles for r in c["rules"])
    writers = sorted(
        o["metadata"]["namespace"]
        for o in objects
        if o["kind"] == "RoleBinding" and any(s.get("name") == "multikueue-sa" for s in o["subjects"])
    )
    assert writers == teams


@pytest.mark.parametrize("stack", ["fleet-gke", "fleet-eks", "eks-kueue"])
def test_the_new_admission_objects_are_valid_kubernetes_objects(stack):
    import kubernetes_validate

    from tests.support.kube.schema import K8S_VERSION

    objects = [o for o in k8s_objects(recording(stack)) if o["apiVersion"].startswith("admissionregistration")]
    assert {o["metadata"]["name"] for o in objects} >= {"gpu-cluster-quota"}
    for obj in objects:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


WORKLOAD = {
    "apiVersion": "kueue.x-k8s.io/v1beta2",
    "kind": "Workload",
    "metadata": {"name": "job-x"},
    "spec": {"queueName": "research"},
    "status": {"conditions": []},
}


def _status(conditions: list[dict], admission: dict | None = None) -> dict:
    return dict(WORKLOAD, status={"conditions": conditions, **({"admission": admission} if admission else {})})


def test_the_token_may_not_mark_a_workload_admitted_even_in_a_mirrored_namespace(worker):
    # MultiKueue keeps workloads/status on the worker (it deactivates the copy when the manager evicts its job), so
    # RBAC allows the write there: the admission policy is what stops the token from admitting a copy itself
    objects, teams = worker
    ns = teams[0]
    for forged in (
        _status([{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"}]),
        _status([{"type": "Admitted", "status": "True", "reason": "Admitted"}]),
        _status([], {"clusterQueue": "research", "podSetAssignments": []}),
    ):
        assert _token(objects, forged, ns, operation="UPDATE", resource="workloads/status", old=WORKLOAD), forged
    # what MultiKueue writes: the deactivation target of a copy the manager evicted
    evicted = _status([{"type": "DeactivationTarget", "status": "True", "reason": "EvictedOnManagerCluster"}])
    assert _token(objects, evicted, ns, operation="UPDATE", resource="workloads/status", old=WORKLOAD) == []
    admitted = _status([{"type": "Admitted", "status": "True", "reason": "Admitted"}])
    assert _token(objects, admitted, ns, operation="UPDATE", resource="workloads/status", old=admitted) == []
    assert _token(objects, WORKLOAD, ns, operation="DELETE", resource="workloads") == []


def test_the_token_may_not_rewrite_an_admitted_workloads_admission(worker):
    # setting an admission is refused, and so is changing one Kueue gave: another ClusterQueue or other flavors would
    # run the copy on quota it was never given. MultiKueue's own patch (DeactivationTarget, Kueue v0.19.2
    # multikueue/workload.go 590-597) re-applies the admission unchanged and still passes.
    objects, teams = worker
    ns = teams[0]
    admitted = [
        {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
        {"type": "Admitted", "status": "True", "reason": "Admitted"},
    ]
    given = {
        "clusterQueue": "research",
        "podSetAssignments": [{"name": "main", "flavors": {"nvidia.com/gpu": "h100"}, "count": 1}],
    }
    old = _status(admitted, given)
    for forged in (
        {**given, "clusterQueue": "product"},
        {**given, "podSetAssignments": [{"name": "main", "flavors": {"nvidia.com/gpu": "l4"}, "count": 1}]},
    ):
        assert _token(
            objects, _status(admitted, forged), ns, operation="UPDATE", resource="workloads/status", old=old
        ), forged
    deactivated = _status(
        admitted + [{"type": "DeactivationTarget", "status": "True", "reason": "EvictedOnManagerCluster"}], given
    )
    assert _token(objects, deactivated, ns, operation="UPDATE", resource="workloads/status", old=old) == []


def _spec(sa: dict) -> dict:
    return {"containers": [{"name": "x", "image": "busybox:1.37"}], **sa}


def _template(sa: dict) -> dict:
    return {"template": {"spec": _spec(sa)}}


def _jobset(sa: dict) -> dict:
    return {
        "replicatedJobs": [
            {"name": "ok", "template": {"spec": _template({})}},
            {"name": "node", "template": {"spec": _template(sa)}},
        ]
    }


def _writes(sa: dict) -> list[tuple[str, dict]]:
    """A pod, a Job, a JobSet and a TrainJob runtime patch whose pods run under ``sa``."""
    return [
        ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": _spec(sa)}),
        ("jobs", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}, "spec": _template(sa)}),
        (
            "jobsets",
            {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "metadata": {"name": "x"},
                "spec": _jobset(sa),
            },
        ),
        (
            "trainjobs",
            {
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "TrainJob",
                "metadata": {"name": "x"},
                "spec": {
                    "runtimeRef": {"name": "torch-fleet-h100"},
                    "runtimePatches": [{"manager": "x", "trainingRuntimeSpec": {"template": {"spec": _jobset(sa)}}}],
                },
            },
        ),
    ]


@pytest.mark.parametrize("field", ["serviceAccountName", "serviceAccount"])
def test_the_token_may_not_run_pods_under_a_team_service_account_in_a_mirrored_namespace(worker, field):
    # a team's service account may carry its cloud identity (Workload Identity, Pod Identity): a leaked token naming
    # it would act as that team; the token's pods, Jobs, JobSets and TrainJob patches run under default only
    objects, teams = worker
    for resource, obj in _writes({field: "team-cloud-identity"}):
        for op in ("CREATE", "UPDATE"):
            refused = _token(
                objects, obj, teams[0], resource=resource, operation=op, old=obj if op == "UPDATE" else None
            )
            assert any("service account" in r for r in refused), (resource, op)
    assert _token(objects, obj, teams[0], resource="trainjobs", operation="DELETE", old=obj) == []


def test_the_token_runs_pods_under_the_default_service_account_and_tenants_keep_theirs(worker):
    objects, teams = worker
    for sa in ({}, {"serviceAccountName": "default"}):
        for resource, obj in _writes(sa):
            assert _token(objects, obj, teams[0], resource=resource) == [], (resource, sa)
    for resource, obj in _writes({"serviceAccountName": "team-cloud-identity"}):
        assert [
            r for r in admission_failures(objects, obj, teams[0], resource=resource) if r.startswith(TOKEN_POLICY)
        ] == []
