"""Rules of ``gpu-cluster:serving``: names, models, pools and replica shapes; then the checks a reviewer asks for
before deploy, each in numbers: the model fits (weights + KV cache ≤ GPU memory × GPUs × the server's share), the SLO
is reachable at peak from a measured throughput row (or flagged "no evidence"), a replica starts before the traffic
ramp is over, and serving is protected from training (not on spot, priority above training, its own Kueue quota that
training may borrow but never take, never inside Slurm's NodeSets). Reports through ``Issues``; never raises.

This module walks the services; the rules live in ``serving_shape``, ``serving_sizing`` and ``serving_protection``."""

from __future__ import annotations

from typing import Any

from catalog import Catalog, Cloud
from stacks.plan.serving import model_card, unrendered_metrics_source
from stacks.validate.issues import Issues, allowed_list, choice_fix
from stacks.validate.scheduling import LABEL_RULE, RESERVED_NAMESPACES, pool_capacities
from stacks.validate.serving_protection import check_priority, check_protected, check_queue, check_reclaim
from stacks.validate.serving_resources import check_resources
from stacks.validate.serving_shape import check_placement, check_shape, label_ok
from stacks.validate.serving_sizing import check_cold_start, check_fit, check_slo, check_weights_per_rank
from stacks.spec.scheduling import SchedulingSpec
from stacks.spec.serving import ServingSpec
from stacks.spec.stack import NodePool

SERVICE_NAME_MAX = 40
"""Objects are named ``<service>-<role>`` (``-epp``, ``-pool``, ``-route``): room for the suffixes in 63."""


def check_serving(
    issues: Issues,
    cat: Catalog,
    cloud: Cloud | None,
    raw_pools: Any,
    pools: list[tuple[int, NodePool]],
    serving: ServingSpec,
    sched: SchedulingSpec | None,
    project: str | None = None,
    region: str | None = None,
    account: str | None = None,
) -> None:
    where = issues.at("serving")
    known = (
        [p["name"] for p in raw_pools if isinstance(p, dict) and isinstance(p.get("name"), str)]
        if isinstance(raw_pools, list)
        else []
    )
    by_name = {pool.name: pool for _, pool in pools}
    caps = pool_capacities(cat, cloud, pools)
    if (
        not label_ok(serving.namespace)
        or serving.namespace in RESERVED_NAMESPACES
        or serving.namespace.startswith("kube-")
    ):
        where.error(
            "namespace",
            "not a namespace serving may use",
            serving.namespace,
            allowed=f"{LABEL_RULE}, except {', '.join(RESERVED_NAMESPACES)} and kube-*",
            fix="use a namespace of its own, e.g. serving",
        )
    seen: dict[str, int] = {}
    for i, svc in enumerate(serving.services):
        at = where.at("services", i)
        if not label_ok(svc.name) or len(svc.name) > SERVICE_NAME_MAX:
            at.error(
                "name",
                "not a valid service name",
                svc.name,
                allowed=f"{LABEL_RULE}, at most {SERVICE_NAME_MAX} characters",
                fix="rename the service, e.g. 'chat'",
            )
        if svc.name in seen:
            at.error(
                "name",
                f"duplicate service name (same as services[{seen[svc.name]}])",
                svc.name,
                allowed="unique service names",
                fix="rename one of the services",
            )
        seen.setdefault(svc.name, i)
        check_shape(at, cloud, svc)
        if svc.pool not in known:
            at.error(
                "pool",
                "no GPU pool with this name",
                svc.pool,
                allowed=allowed_list(known) or "no pools",
                fix=choice_fix("the pool", svc.pool, known, " (a name from nodePools)"),
            )
            continue
        cap, pool = caps.get(svc.pool), by_name.get(svc.pool)
        if cap is None or pool is None or cloud is None:
            continue  # the pool's own error says why
        machine = cat.resolve(
            cloud,
            pool.machine_type,
            pool.accelerator.type if pool.accelerator else None,
            pool.accelerator.count if pool.accelerator else None,
        )
        if machine is None:
            continue
        if not check_placement(at, svc, pool, cap.index, machine.gpus):
            continue
        check_resources(at, svc, machine)
        card = model_card(svc)
        if card is not None:
            check_fit(at, svc, card, machine.gpu_memory_gib_per_gpu, machine.machine_type, machine.gpu_model)
            check_slo(at, svc, machine.gpu_model)
            check_cold_start(
                at, cloud, svc, card, pool, machine.gpu_model, serving.autoscaling.polling_interval_seconds
            )
            check_weights_per_rank(at, svc, card)
        check_protected(at, svc, pool, cap.index)
    if cloud == Cloud.AWS and serving.autoscaling.prometheus_url is None:
        where.error(
            ("autoscaling", "prometheusUrl"),
            "EKS has no Prometheus KEDA can query by default, so the services could not scale on vLLM's queue depth",
            None,
            allowed="https://aps-workspaces.<region>.amazonaws.com/workspaces/<id> (or any PromQL URL)",
            fix="create an Amazon Managed Service for Prometheus workspace scraping the serving namespace "
            "and give its URL",
        )
    elif serving.autoscaling.prometheus_url is not None and not serving.autoscaling.prometheus_url.startswith(
        "https://"
    ):
        where.error(
            ("autoscaling", "prometheusUrl"),
            "not an https URL",
            serving.autoscaling.prometheus_url,
            allowed="https://…",
            fix="give the PromQL endpoint's https URL",
        )
    _check_metrics_source(where, cloud, serving, project, region, account)
    check_priority(where, serving, sched)
    if sched is not None:
        check_queue(where, serving, sched, caps)
        check_reclaim(issues.at("scheduling", "preemption"), serving, sched)


def _check_metrics_source(
    where: Issues,
    cloud: Cloud | None,
    serving: ServingSpec,
    project: str | None,
    region: str | None,
    account: str | None,
) -> None:
    if cloud is None or region is None:
        return
    why = unrendered_metrics_source(cloud, serving, project, region, account)
    if why is None or (cloud == Cloud.AWS and serving.autoscaling.prometheus_url is None):
        return  # the missing EKS URL is an error above
    where.warn(
        ("autoscaling", "prometheusUrl"),
        f"KEDA's metric source is not one gpu-cluster fills and grants: "
        f"{why}; if it holds no vLLM metrics, or KEDA may not read it, every service stays at replicas.min "
        "(the what-if runs them fixed at min)",
        serving.autoscaling.prometheus_url,
        allowed="GKE: omitted (Managed Service for Prometheus); EKS: https://aps-workspaces.<region>.amazonaws.com"
        "/workspaces/<id> with accountId set",
        fix="leave prometheusUrl out on GKE, or give an AMP workspace of the stack's region on EKS (the "
        "collector and KEDA's grant are then created)",
    )
