"""Serving's priority stays serving's: on the serving stacks the bound admission policies (CEL run by cel-python)
admit serving's own vLLM pods at ``gpu-cluster-serving`` in the serving namespace and refuse that PriorityClass, a
system-critical one, or the Kueue label naming serving's WorkloadPriorityClass in every other team namespace (a pod
at serving's priority preempts other teams' running pods)."""

from __future__ import annotations

import pytest

from render.priority_admission import PRIORITY_POLICY
from stacks.plan.serving import SERVING_PRIORITY_CLASS
from tests.support.helm.examples import recording
from tests.support.kube.admission import admission_failures, k8s_objects, pod_from_template


@pytest.fixture(scope="module", params=["gke-serving", "eks-serving"])
def stack(request):
    objects = k8s_objects(recording(request.param))
    teams = sorted({o["metadata"]["namespace"] for o in objects if o["kind"] == "LocalQueue"})
    return objects, [t for t in teams if t != "serving"]


def _refused(objects, obj, ns, **kw) -> list[str]:
    return [r for r in admission_failures(objects, obj, ns, **kw) if r.startswith(PRIORITY_POLICY)]


def _serving_pods(objects) -> list[dict]:
    out = []
    for o in objects:
        if o["kind"] == "Deployment" and o["metadata"].get("namespace") == "serving":
            out.append(pod_from_template(o["spec"]["template"]))
        if o["kind"] == "LeaderWorkerSet" and o["metadata"].get("namespace") == "serving":
            lwt = o["spec"]["leaderWorkerTemplate"]
            out += [pod_from_template(lwt[k]) for k in ("leaderTemplate", "workerTemplate") if k in lwt]
    return out


def test_servings_own_pods_are_admitted_in_serving_and_refused_elsewhere(stack):
    objects, teams = stack
    pods = _serving_pods(objects)
    assert pods and all(p["spec"]["priorityClassName"] == SERVING_PRIORITY_CLASS for p in pods)
    assert teams
    for pod in pods:
        assert _refused(objects, pod, "serving") == []
        for ns in teams:
            assert any("name no PriorityClass" in r for r in _refused(objects, pod, ns)), ns


@pytest.mark.parametrize("name", ["system-node-critical", "system-cluster-critical", "anything-else"])
def test_team_namespaces_name_no_priority_class(stack, name):
    objects, teams = stack
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"priorityClassName": name, "containers": [{"name": "m", "image": "x"}]},
    }
    for ns in [*teams, "serving"]:
        assert _refused(objects, pod, ns), ns
    assert _refused(objects, {**pod, "spec": {"containers": [{"name": "m", "image": "x"}]}}, teams[0]) == []


@pytest.mark.parametrize("where", ["template", "jobset", "lws"])
def test_a_priority_class_in_a_workload_template_is_refused(stack, where):
    objects, teams = stack
    spec = {"priorityClassName": SERVING_PRIORITY_CLASS, "containers": [{"name": "m", "image": "x"}]}
    obj, resource = {
        "template": ({"kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": spec}}}, "jobs"),
        "jobset": (
            {
                "kind": "JobSet",
                "metadata": {"name": "j"},
                "spec": {"replicatedJobs": [{"name": "w", "template": {"spec": {"template": {"spec": spec}}}}]},
            },
            "jobsets",
        ),
        "lws": (
            {
                "kind": "LeaderWorkerSet",
                "metadata": {"name": "l"},
                "spec": {"leaderWorkerTemplate": {"workerTemplate": {"spec": spec}}},
            },
            "leaderworkersets",
        ),
    }[where]
    assert _refused(objects, obj, teams[0], resource=resource)
    assert _refused(objects, obj, "serving", resource=resource) == []


def test_the_kueue_label_naming_servings_class_is_refused_outside_serving(stack):
    objects, teams = stack
    job = {
        "kind": "Job",
        "metadata": {"name": "j", "labels": {"kueue.x-k8s.io/priority-class": SERVING_PRIORITY_CLASS}},
        "spec": {"suspend": True},
    }
    assert any("outranks every other job" in r for r in _refused(objects, job, teams[0], resource="jobs"))
    assert _refused(objects, job, "serving", resource="jobs") == []
    other = {**job, "metadata": {"name": "j", "labels": {"kueue.x-k8s.io/priority-class": "high"}}}
    assert _refused(objects, other, teams[0], resource="jobs") == []  # the stack's own classes are the teams'
