"""One TrainJob with its own NVLink IMEX domain (GB200 NVL72), the documented practice of the NVIDIA DRA driver: the
objects a user applies with the job. Pure: no Pulumi.

Kubeflow Trainer v2.3's TrainJob cannot add pod resource claims (``runtimePatches`` have no ``resourceClaims``), so a
job's own domain comes with a runtime of its own (``render/compute_domain.py`` ``job_objects``):

1. ``ComputeDomain <job>-imex`` in the job's namespace; its controller creates the ResourceClaimTemplate
   ``<job>-imex-channel`` the pods claim (elastic, ``numNodes: 0``: it follows the pods);
2. ``TrainingRuntime torch-<pool>-<job>``: the pool's ``ClusterTrainingRuntime torch-<pool>`` as the stack deploys it
   (node selector, tolerations, fabric, Kueue placement annotation), its pods claiming that channel;
3. ``TrainJob <job>`` naming it (``runtimeRef: {kind: TrainingRuntime}``), labelled with the queue's LocalQueue, with
   ``trainer.numNodes``; image, command and args are the user's to add under ``spec.trainer``.

The domain's lifetime is the job's: delete the three objects together (``kubectl delete -f``) when the job is done.
"""

from __future__ import annotations

from typing import Any

from stacks.plan.facts import PoolFacts
from render.compute_domain import job_objects
from render.trainer import API_VERSION as TRAINER_API_VERSION

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
JOB_LABEL = "gpu-cluster/job"
TRAINER_GROUP = TRAINER_API_VERSION.split("/")[0]
JOB_NAME_PATTERN = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
"""TrainJob names: RFC 1035 labels of at most 63 characters (the v2.3.0 TrainJob CRD's CEL rules)."""
JOB_NAME_MAX = 63


def train_job(job: str, namespace: str, queue: str, runtime: str, nodes: int) -> dict[str, Any]:
    return {
        "apiVersion": TRAINER_API_VERSION,
        "kind": "TrainJob",
        "metadata": {"name": job, "namespace": namespace, "labels": {QUEUE_LABEL: queue, JOB_LABEL: job}},
        "spec": {
            "runtimeRef": {"apiGroup": TRAINER_GROUP, "kind": "TrainingRuntime", "name": runtime},
            "trainer": {"numNodes": nodes},
        },
    }


def job_domain_objects(
    pool: PoolFacts, runtime: dict[str, Any], job: str, namespace: str, queue: str, nodes: int
) -> list[dict[str, Any]]:
    """ComputeDomain, TrainingRuntime and TrainJob of one job on a rack-scale pool (``runtime``: the pool's
    ClusterTrainingRuntime as rendered for the stack), in the order to apply them."""
    domain, own = job_objects(pool, runtime, job, namespace)
    own["metadata"]["labels"] = {**own["metadata"].get("labels", {}), JOB_LABEL: job}
    return [domain, own, train_job(job, namespace, queue, own["metadata"]["name"], nodes)]
