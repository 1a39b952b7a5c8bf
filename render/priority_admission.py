"""Team namespaces -> the ValidatingAdmissionPolicy that keeps serving's priority to serving (and the node's
RuntimeClasses to the platform: last paragraph). Pure: no Pulumi.

The serving PriorityClass (``gpu-cluster-serving``, ``PreemptLowerPriority``) is cluster-scoped and nothing in
Kubernetes limits who names it: a team's pod naming it, once Kueue admits it inside the team's own quota, makes
kube-scheduler preempt other teams' running pods whenever it does not fit, and Kueue takes a workload's priority from
the pod template's PriorityClass or the ``kueue.x-k8s.io/priority-class`` label (``ExtractPriority``, Kueue v0.19.2),
so it also outranks its colleagues' jobs in its own queue. The same holds for ``system-node-critical`` and
``system-cluster-critical`` (GKE admits those outside ``kube-system`` only under a quota, EKS not at all limits them).
``gpu-cluster-priority`` lets a team namespace name no PriorityClass at all (tenants rank their jobs with Kueue's
WorkloadPriorityClasses), and the serving classes only in the serving namespace.

Upstream's other way ("Limit Priority Class consumption by default": ``--admission-control-config-file`` with a
``limitedResources`` PriorityClass scope) is an API server flag a managed control plane does not expose; a
ResourceQuota per namespace would cover pods only, not the Kueue label nor a job's template.

The same policy refuses a ``runtimeClassName`` in team namespaces: the GPU Operator in CDI mode (GKE) creates a
RuntimeClass ``nvidia`` whose runtime injects the GPUs a container's ``NVIDIA_VISIBLE_DEVICES`` names, so a pod that
asks the device plugin for no GPU (Kueue admits it at once: it requests nothing) would get every GPU of the node."""

from __future__ import annotations

from typing import Any, Sequence

from render.admission import binding, validating_policy
from stacks.plan.serving import SERVING_PRIORITY_CLASS

PRIORITY_POLICY = "gpu-cluster-priority"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
RULE = {
    "apiGroups": ["", "apps", "batch", "jobset.x-k8s.io", "leaderworkerset.x-k8s.io", "trainer.kubeflow.org"],
    "apiVersions": ["v1", "v1alpha2", "v1alpha1"],
    "operations": ["CREATE", "UPDATE"],
    "resources": [
        "pods",
        "jobs",
        "jobsets",
        "replicasets",
        "statefulsets",
        "deployments",
        "leaderworkersets",
        "trainjobs",
    ],
}
"""Every kind whose pods (or whose Kueue workload) take a priority from what the tenant writes."""


def _named(path: str, field: str = "priorityClassName") -> str:
    """``[<path>.<field>]`` when every step of ``path`` is set, else ``[]``."""
    steps = path.split(".")
    guards = " && ".join(f"has({'.'.join(steps[: i + 1])})" for i in range(1, len(steps)))
    value = f"{path}.{field}"
    return f"({guards} && has({value}) ? [{value}] : [])"


def _names(field: str = "priorityClassName") -> str:
    """Every ``field`` (a pod spec's) a pod, a pod template (Job, ReplicaSet, StatefulSet, Deployment), a JobSet's
    replicated jobs or a LeaderWorkerSet's templates carry."""
    jobset = (
        "(has(object.spec) && has(object.spec.replicatedJobs) ? object.spec.replicatedJobs.filter(r, "
        f"has(r.template.spec.template.spec.{field})).map(r, "
        f"r.template.spec.template.spec.{field}) : [])"
    )
    parts = [
        _named("object.spec", field),
        _named("object.spec.template.spec", field),
        jobset,
        _named("object.spec.leaderWorkerTemplate.leaderTemplate.spec", field),
        _named("object.spec.leaderWorkerTemplate.workerTemplate.spec", field),
    ]
    return " + ".join(parts)


def priority_policy(serving_namespace: str | None) -> dict[str, Any]:
    here = f"request.namespace == '{serving_namespace}'" if serving_namespace else "false"
    serving = f"'{SERVING_PRIORITY_CLASS}'"
    variables = [
        {"name": "names", "expression": _names()},
        {"name": "runtimes", "expression": _names("runtimeClassName")},
        {"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"},
    ]
    where = f"only in the serving namespace '{serving_namespace}'" if serving_namespace else "nowhere (no serving)"
    checks = [
        {
            "expression": f"variables.names.all(n, n == {serving} && {here})",
            "message": "team namespaces name no PriorityClass (rank jobs with the kueue.x-k8s.io/priority-class label "
            f"and the stack's WorkloadPriorityClasses); {SERVING_PRIORITY_CLASS} is allowed {where}: a pod "
            "at serving's or a system priority preempts other teams' running pods",
        },
        {
            "expression": f"!('{PRIORITY_LABEL}' in variables.labels) || variables.labels['{PRIORITY_LABEL}'] != "
            f"{serving} || {here}",
            "message": f"the {PRIORITY_LABEL} label names {SERVING_PRIORITY_CLASS} {where}: at serving's priority a "
            "job outranks every other job in its queue",
        },
        # the GPU Operator's `nvidia` RuntimeClass (CDI mode) hands a container every GPU its NVIDIA_VISIBLE_DEVICES
        # names, a pod that asks the device plugin for none included: GPUs come only from the device plugin
        {
            "expression": "variables.runtimes.size() == 0",
            "message": "team namespaces name no runtimeClassName: a RuntimeClass such as the GPU Operator's nvidia "
            "runs a container with every GPU of the node its NVIDIA_VISIBLE_DEVICES names, outside quota; "
            "request nvidia.com/gpu instead",
        },
    ]
    return validating_policy(PRIORITY_POLICY, variables, checks, rule=RULE)


def priority_objects(team_namespaces: Sequence[str], serving_namespace: str | None) -> list[dict[str, Any]]:
    """The policy and its binding to the team namespaces (the serving namespace among them where Kueue admits
    serving); none without teams."""
    teams = list(dict.fromkeys(team_namespaces))
    return [priority_policy(serving_namespace), binding(PRIORITY_POLICY, teams)] if teams else []
