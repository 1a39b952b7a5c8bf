"""Team namespaces -> the ValidatingAdmissionPolicy that closes Kueue's side doors there. Pure: no Pulumi.

Kueue (v0.19.2) holds a team's GPUs to its quota by gating pods and suspending jobs until it admits their Workload.
Read in its source at that tag, four ways round that are open to anyone who may create pods and jobs in the
namespace; ``gpu-cluster-quota`` refuses each of them to everyone but the controllers that legitimately do them:

- **a forged owner:** Kueue's pod webhook leaves alone a pod whose controller ``ownerReference`` names a job Kueue
  manages ("same-namespace ownership spoofing is out of scope" upstream), so a pod claiming to be a child of the
  team's own admitted Job is never gated. Kueue walks the owner chain through ReplicaSets and every integration it
  knows (StatefulSet, Deployment, LeaderWorkerSet), so a StatefulSet owned by a forged Job runs ungated pods too.
  Pods, Jobs, JobSets and those workload kinds with ``ownerReferences`` (created, or changed on update) are only
  admitted from the controllers that make children (:func:`child_makers`).
- **the gate removed:** deleting the ``kueue.x-k8s.io/admission`` scheduling gate from a pod starts it on the GPUs;
  only Kueue may.
- **``suspend`` flipped:** unsuspending a Job, JobSet or TrainJob starts its pods; only Kueue, and the controllers
  that pass Kueue's decision down to children (Trainer to the JobSet, JobSet to its Jobs), may.
- **elastic Jobs** (``kueue.x-k8s.io/elastic-job``, Beta, on by default): scaled up without being re-suspended;
  refused.
- **a running Job's ``parallelism`` raised:** Kueue's Job webhook forbids it only under partial admission
  (``validatePartialAdmissionUpdate``, ``pkg/controller/jobs/job/job_webhook.go``); otherwise the Job no longer
  matches its admitted Workload and Kueue stops it (``ensureOneWorkload``: "job with no matching workload,
  suspending", ``pkg/controller/jobframework/reconciler.go``), but only after the Job controller may already have
  started the extra pods on GPUs outside quota. Refused on a running Job but to Kueue (which sets ``parallelism``
  itself under partial admission) and the controllers that pass its decision down.

And when Kueue does reclaim the GPUs (preemption, a gate removed by mistake), the pod keeps them for its own
``terminationGracePeriodSeconds``: capped at :data:`MAX_GRACE_SECONDS`.
"""

from __future__ import annotations

from typing import Any, Sequence

from render.admission import binding, validating_policy
from render.pod_security_cel import cel_list

QUOTA_POLICY = "gpu-cluster-quota"
ORPHAN_POLICY = "gpu-cluster-no-orphans"
GATE = "kueue.x-k8s.io/admission"
GATE_PREFIX = "kueue.x-k8s.io/"
"""Every scheduling gate Kueue sets (admission; topology for TAS) starts with this."""
ELASTIC_ANNOTATION = "kueue.x-k8s.io/elastic-job"
MAX_GRACE_SECONDS = 60
"""Twice the Kubernetes default (30 s): room for a job to write a last checkpoint on SIGTERM, short enough that a
preempted or reclaimed pod frees its GPUs within a minute."""


def sa(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


KUEUE = sa("kueue-system", "kueue-controller-manager")
"""The pinned Kueue chart (kueue-0.19.2), installed in ``kueue-system``."""
TRAINER = sa("kubeflow-system", "kubeflow-trainer-controller-manager")
JOBSET = sa("kubeflow-system", "jobset-controller")
"""The pinned Trainer chart (kubeflow-trainer-2.3.0, JobSet as its dependency), installed in ``kubeflow-system``."""
KATIB = sa("kubeflow", "katib-controller")
"""Katib v0.18.0 manifests (``manifests/v1beta1/components/controller``): its Trials create the trial Jobs."""
KUBE_CONTROLLERS = tuple(
    sa("kube-system", c)
    for c in (
        "cronjob-controller",
        "daemonset-controller",
        "deployment-controller",
        "job-controller",
        "replicaset-controller",
        "statefulset-controller",
    )
)
"""kube-controller-manager's per-controller identities (``--use-service-account-credentials``, on GKE and EKS)."""
GARBAGE_COLLECTOR = sa("kube-system", "generic-garbage-collector")
"""Removes ``ownerReferences`` when children are orphaned."""
LWS = sa("lws-system", "lws-controller-manager")
"""The pinned LeaderWorkerSet chart (lws-v0.10.0, ``<fullname>-controller-manager``): its groups are StatefulSets it owns."""

OWNED_RULE = {
    "apiGroups": ["", "apps", "batch", "jobset.x-k8s.io", "leaderworkerset.x-k8s.io"],
    "apiVersions": ["v1", "v1alpha2"],
    "operations": ["CREATE", "UPDATE"],
    "resources": ["pods", "jobs", "jobsets", "replicasets", "statefulsets", "deployments", "leaderworkersets"],
}
"""Kueue v0.19.2 follows an owner chain through ReplicaSets and its registered integrations (``isKnownOwner``,
``integrationmanager.go``), enabled or not: each of these kinds can carry a forged owner to an admitted job."""
SUSPEND_RULE = {
    "apiGroups": ["batch", "jobset.x-k8s.io", "trainer.kubeflow.org"],
    "apiVersions": ["v1", "v1alpha2", "v1alpha1"],
    "operations": ["CREATE", "UPDATE"],
    "resources": ["jobs", "jobsets", "trainjobs"],
}


def child_makers(katib: bool) -> tuple[str, ...]:
    """Who may create pods, Jobs and JobSets with an owner in a team namespace."""
    return (*KUBE_CONTROLLERS, GARBAGE_COLLECTOR, JOBSET, TRAINER, KUEUE, LWS, *((KATIB,) if katib else ()))


def quota_policy(katib: bool = False) -> dict[str, Any]:
    makers = cel_list(child_makers(katib))
    resumers = cel_list([KUEUE, TRAINER, JOBSET])
    user = "request.userInfo.username"
    update = "request.operation == 'UPDATE'"
    # a label ties a pod to its Job (the Job controller counts its pods by these): renamed, the pod is the Job's no more
    job_label = "(k in ['controller-uid', 'job-name'] || k.startsWith('batch.kubernetes.io/'))"
    variables = [
        {"name": "owners", "expression": "has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []"},
        {
            "name": "oldOwners",
            "expression": f"{update} && has(oldObject.metadata.ownerReferences) ? "
            "oldObject.metadata.ownerReferences : []",
        },
        {"name": "isPod", "expression": "request.resource.resource == 'pods'"},
        # every gate of Kueue's (admission, and topology: TAS places the pod when it lifts that one), not only one
        {
            "name": "oldKueueGates",
            "expression": f"{update} && has(oldObject.spec.schedulingGates) ? "
            f"oldObject.spec.schedulingGates.filter(g, g.name.startsWith("
            f"'{GATE_PREFIX}')).map(g, g.name) : []",
        },
        {
            "name": "gates",
            "expression": "has(object.spec.schedulingGates) ? object.spec.schedulingGates.map(g, g.name) : []",
        },
        {"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"},
        {
            "name": "oldLabels",
            "expression": f"{update} && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {{}}",
        },
    ]
    checks = [
        # on UPDATE the owners stay as they were, removal included: an ownerless pod keeps its GPUs while its Job
        # starts a replacement inside the same admitted quota
        {
            "expression": f"({update} ? variables.owners == variables.oldOwners : variables.owners.size() == 0) || "
            f"{user} in {makers}",
            "message": "pods, jobs and workload objects with ownerReferences are only created by the controllers that make "
            "children, and their ownerReferences are changed (or removed) only by those controllers (Kueue "
            "skips a pod that claims an owner, and an ownerless pod keeps its GPUs outside quota); submit the "
            "job itself and let its controller create the pods",
        },
        {
            "expression": f"!variables.isPod || !({update}) || {user} in {makers} || "
            f"variables.oldLabels.filter(k, {job_label}).all(k, k in variables.labels && "
            "variables.labels[k] == variables.oldLabels[k]) && "
            f"variables.labels.filter(k, {job_label}).all(k, k in variables.oldLabels)",
            "message": "a pod's job labels (controller-uid, job-name, batch.kubernetes.io/*) are changed only by the "
            "controllers: relabelled, the pod no longer counts as its Job's and keeps its GPUs while the Job "
            "starts another",
        },
        {
            "expression": f"!variables.isPod || {user} == '{KUEUE}' || "
            "variables.oldKueueGates.all(n, n in variables.gates)",
            "message": f"only Kueue removes its scheduling gates ({GATE}, and the topology gate): it does so when the "
            "workload fits the queue's quota and its place in the topology is chosen",
        },
        {
            "expression": f"!variables.isPod || !has(object.spec.terminationGracePeriodSeconds) || "
            f"object.spec.terminationGracePeriodSeconds <= {MAX_GRACE_SECONDS}",
            "message": f"terminationGracePeriodSeconds is at most {MAX_GRACE_SECONDS} in team namespaces: a "
            "preempted pod keeps its GPUs for that long",
        },
    ]
    policy = validating_policy(QUOTA_POLICY, variables, checks, rule=OWNED_RULE)
    policy["spec"]["matchConstraints"]["resourceRules"] = [OWNED_RULE, SUSPEND_RULE]
    policy["spec"]["validations"] += [
        {
            "expression": f"request.resource.resource == 'pods' || !({update}) || !has(oldObject.spec.suspend) || "
            "!oldObject.spec.suspend || (has(object.spec.suspend) && object.spec.suspend) || "
            f"{user} in {resumers}",
            "message": "only Kueue unsuspends a job (and Trainer and JobSet pass its decision to their children): "
            "an unsuspended job runs outside quota",
        },
        {
            "expression": f"request.resource.resource != 'jobs' || !({update}) || "
            "(has(oldObject.spec.suspend) && oldObject.spec.suspend) || "
            "(has(object.spec.parallelism) ? object.spec.parallelism : 1) <= "
            "(has(oldObject.spec.parallelism) ? oldObject.spec.parallelism : 1) || "
            f"{user} in {resumers}",
            "message": "a running Job's parallelism is not raised in team namespaces: the extra pods start before Kueue "
            "notices the Job no longer matches its admitted quota; delete and resubmit the Job, or suspend "
            "it first",
        },
        {
            "expression": "request.resource.resource == 'pods' || !has(object.metadata.annotations) || "
            f"!('{ELASTIC_ANNOTATION}' in object.metadata.annotations)",
            "message": f"elastic Jobs ({ELASTIC_ANNOTATION}) are refused: Kueue does not suspend them again when they "
            "scale up",
        },
    ]
    policy["spec"]["validations"].append(
        {
            "expression": "request.resource.resource == 'pods' || "
            "!has(object.metadata.finalizers) || !('orphan' in object.metadata.finalizers) || "
            f"({update} && has(oldObject.metadata.finalizers) && 'orphan' in oldObject.metadata.finalizers) || "
            f"{user} in {makers}",
            "message": "the orphan finalizer is refused on jobs in team namespaces: deleting the job would leave its "
            "pods running on GPUs outside quota",
        }
    )
    return policy


def orphan_policy(katib: bool = False) -> dict[str, Any]:
    """DELETE of a Job, JobSet, TrainJob or LeaderWorkerSet that orphans its pods: the garbage collector strips their owner, Kueue
    finishes the ownerless Workload to release its quota (``FinishOrphanedWorkloads``, Beta, on by default in
    v0.19.2) and the pods, never gated, keep their GPUs. ``request.options`` is the request's DeleteOptions. A
    batch/v1 Job deleted through the API without a policy orphans its pods (the legacy default kept for that
    group version; ``kubectl`` sends ``Background``), so for Jobs the policy must be named."""
    makers = cel_list(child_makers(katib))
    opts = "request.options"
    orphans = (
        f"(has({opts}.orphanDependents) && {opts}.orphanDependents) || "
        f"(has({opts}.propagationPolicy) && {opts}.propagationPolicy == 'Orphan')"
    )
    cascades = f"has({opts}.propagationPolicy) && {opts}.propagationPolicy in ['Background', 'Foreground']"
    checks = [
        {
            "expression": f"request.userInfo.username in {makers} || (has({opts}) && !({orphans}) && "
            f"(request.resource.resource != 'jobs' || ({cascades})))",
            "message": "jobs and LeaderWorkerSets in team namespaces are deleted with their pods (propagationPolicy Background or "
            "Foreground; a batch/v1 Job deleted without one orphans its pods): orphaned pods keep their "
            "GPUs outside quota; use kubectl delete (cascade background, the default)",
        }
    ]
    # a LeaderWorkerSet owns its Kueue Workload too (Kueue's LWS integration): orphaned, its StatefulSets' pods keep
    # their GPUs while Kueue finishes the ownerless Workload
    rule = {
        "apiGroups": [*SUSPEND_RULE["apiGroups"], "leaderworkerset.x-k8s.io"],
        "apiVersions": SUSPEND_RULE["apiVersions"],
        "operations": ["DELETE"],  # v1 already listed
        "resources": [*SUSPEND_RULE["resources"], "leaderworkersets"],
    }
    return validating_policy(ORPHAN_POLICY, [], checks, rule=rule)


def quota_objects(team_namespaces: Sequence[str], katib: bool = False) -> list[dict[str, Any]]:
    """The policy and its binding to the team namespaces (by their immutable name label); none without teams."""
    teams = list(dict.fromkeys(team_namespaces))
    if not teams:
        return []
    return [quota_policy(katib), binding(QUOTA_POLICY, teams), orphan_policy(katib), binding(ORPHAN_POLICY, teams)]
