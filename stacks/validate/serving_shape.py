"""Rules of one serving service's own shape: its name, model, weights URI, replica bounds, traffic profile and how
its GPUs split over nodes of its pool. Reports through ``Issues``; never raises."""

from __future__ import annotations

import math
import re

from catalog import Cloud
from catalog.serving import load_models
from stacks.validate.issues import Issues, allowed_list, choice_fix
from stacks.spec.serving import Service
from stacks.spec.stack import NodePool

DNS_1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
HF_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
URI_SCHEME = {Cloud.GCP: "gs://", Cloud.AWS: "s3://"}


def label_ok(name: str) -> bool:
    return len(name) <= 63 and DNS_1123_LABEL.fullmatch(name) is not None


def check_shape(at: Issues, cloud: Cloud | None, svc: Service) -> None:
    if (svc.model is None) == (svc.custom_model is None):
        at.error(
            "model",
            "set exactly one of model and customModel",
            {"model": svc.model, "customModel": svc.custom_model is not None},
            allowed=f"model: one of {allowed_list(load_models())}; or customModel with your model's numbers",
            fix="name a catalog model, or describe yours under customModel (parameters, layers, kvHeads, headDim)",
        )
    elif svc.model is not None and svc.model not in load_models():
        at.error(
            "model",
            "not a model in the catalog (catalog/data/models.csv)",
            svc.model,
            allowed=allowed_list(load_models()),
            fix=choice_fix("the model", svc.model, list(load_models()), ", or describe it under customModel"),
        )
    scheme = URI_SCHEME.get(cloud) if cloud is not None else None
    if not (svc.model_uri.startswith(scheme or "\0") or HF_REPO.fullmatch(svc.model_uri)):
        at.error(
            "modelUri",
            "not a place the weights can come from on this cloud",
            svc.model_uri,
            allowed=f"{scheme or 'gs:// or s3://'}<bucket>/<path>, or a Hugging Face repo ID <org>/<name>",
            fix=f"copy the weights to a bucket in the stack's region and give its {scheme or 'URI'} path",
        )
    if svc.replicas.min == 0:
        at.error(
            ("replicas", "min"),
            "scale to zero drops requests: a Service does not buffer them while no replica "
            "is ready, and a cold replica takes minutes",
            0,
            allowed="1 or more",
            fix="keep at least one replica (replicas.min: 1)",
        )
    if svc.replicas.min > svc.replicas.max:
        at.error(
            ("replicas", "min"),
            f"more than replicas.max ({svc.replicas.max})",
            svc.replicas.min,
            allowed=f"0 … {svc.replicas.max}",
            fix="lower replicas.min or raise replicas.max",
        )
    profile = svc.traffic.daily_profile
    if profile and (len(profile) != 24 or any(not 0 <= x <= 1 for x in profile)):
        at.error(
            ("traffic", "dailyProfile"),
            "needs 24 hourly shares of the peak, each 0 … 1",
            profile,
            allowed="a list of 24 numbers in 0 … 1 (hour 0 = 00:00 UTC)",
            fix="give one share per hour, 1 at the peak hour, or leave it out for the peak all day",
        )
    request = svc.traffic.input_tokens + svc.traffic.output_tokens
    if request > svc.max_context_tokens:
        at.error(
            "maxContextTokens",
            f"shorter than a mean request ({svc.traffic.input_tokens} input + "
            f"{svc.traffic.output_tokens} output = {request} tokens)",
            svc.max_context_tokens,
            allowed=f"at least {request}",
            fix=f"raise maxContextTokens to {request} or more",
        )


def check_placement(at: Issues, svc: Service, pool: NodePool, index: int, gpus_per_node: int) -> bool:
    """GPUs per replica must split evenly over its nodes and fit one node each; multi-node replicas take whole
    nodes of a multiNode pool. False: the later checks would rest on an impossible shape."""
    n, g = svc.nodes_per_replica, svc.gpus_per_replica
    ok = True
    if g % n:
        at.error(
            "gpusPerReplica",
            f"does not split evenly over nodesPerReplica ({n})",
            g,
            allowed=f"a multiple of {n}",
            fix=f"use {n * math.ceil(g / n)} GPUs, or change nodesPerReplica",
        )
        ok = False
    elif g // n > gpus_per_node:
        at.error(
            "gpusPerReplica",
            f"{g // n} GPUs per node, and a {pool.machine_type} node has {gpus_per_node}",
            g,
            allowed=f"at most {gpus_per_node * n} with nodesPerReplica {n}",
            fix=f"set nodesPerReplica: {math.ceil(g / gpus_per_node)} (a LeaderWorkerSet), or use a larger machine",
        )
        ok = False
    elif n > 1 and g // n != gpus_per_node:
        at.error(
            "gpusPerReplica",
            f"a replica spanning {n} nodes takes whole nodes ({gpus_per_node} GPUs each)",
            g,
            allowed=f"{gpus_per_node * n}",
            fix=f"set gpusPerReplica: {gpus_per_node * n}",
        )
        ok = False
    if n > 1 and not pool.multi_node:
        at.error(
            "nodesPerReplica",
            f"pool '{pool.name}' is not a multiNode pool: no compact placement or GPU fabric "
            "between its nodes, so tensors crossing nodes would crawl",
            n,
            allowed="1 on this pool",
            fix=f"set nodePools[{index}].multiNode: true, or serve on one node (nodesPerReplica: 1)",
        )
        ok = False
    nodes_max = svc.replicas.max * n if n > 1 else math.ceil(svc.replicas.max * g / gpus_per_node)
    if nodes_max > pool.max_nodes:
        at.error(
            ("replicas", "max"),
            f"{svc.replicas.max} replicas need {nodes_max} nodes, and pool '{pool.name}' has at most {pool.max_nodes}",
            svc.replicas.max,
            allowed=f"at most {pool.max_nodes * gpus_per_node // g if n == 1 else pool.max_nodes // n}",
            fix=f"lower replicas.max, or raise nodePools[{index}].maxNodes to {nodes_max}",
        )
    return ok
