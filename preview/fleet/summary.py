"""The Fleet section of a manager's preview: clusters, GPUs by model, where each fleet queue can run, and the cost
per cluster and of the whole fleet. Pure: reads the manager's spec and cost and the workers' previews."""

from __future__ import annotations

import datetime as dt
from typing import Any, Sequence

from preview.cost import CostReport
from stacks.plan.fleet_egress import EgressPlan
from preview.fleet.resolve import Member
from render.fleet import fleet_runtime_name
from render.trainer import TORCH_IMAGE
from render.fleet_manager import queue_namespace
from stacks.plan.fleet_admission import fleet_verdict, quota_for
from stacks.spec.fleet import FACTS_OUTPUT
from stacks.spec.stack import StackSpec
from stacks.validate.issues import SpecIssue, path_of

ROUND = 4


def cluster_row(
    name: str, role: str, stack: str, cloud: str | None, region: str | None, cost: CostReport, gpus: dict[str, int]
) -> dict[str, Any]:
    return {
        "name": name,
        "role": role,
        "stack": stack,
        "cloud": cloud,
        "region": region,
        "gpus": gpus,
        "maxGpus": sum(gpus.values()),
        "usdPerHourMin": round(cost.usd_per_hour_min, ROUND),
        "usdPerHourMax": round(cost.usd_per_hour_max, ROUND),
        "usdPerMonthMax": round(cost.usd_per_month_max, 2),
        "gpuUsdPerHourMax": round(sum(p.usd_per_hour_max or 0.0 for p in cost.pools), ROUND),
        "complete": not cost.unpriced,
        "unpricedPools": list(cost.unpriced),
    }


def egress_summary(egress: EgressPlan | None, facts: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """Where the manager's ``fleetEgressAddresses`` come from, whether they are known before deploy (only declared
    ones are), and which workers admit them by reference (``fleet.manager``) or by listing them."""
    if egress is None:
        return None
    return {
        "source": egress.source.value,
        "reserved": egress.count,
        "addresses": list(egress.declared) if egress.known_offline else None,
        "byReference": [w for w, f in facts.items() if f.get("managerEgressFrom")],
        "listed": [w for w, f in facts.items() if not f.get("managerEgressFrom")],
    }


def fleet_summary(
    spec: StackSpec, stack: str, cost: CostReport, members: Sequence[Member], egress: EgressPlan | None = None
) -> dict[str, Any]:
    fleet = spec.fleet
    assert fleet is not None
    clusters = [cluster_row("manager", "manager", stack, spec.cloud.value, spec.region, cost, _gpus(cost))]
    facts: dict[str, dict[str, Any]] = {}
    for m in members:
        clusters.append(
            cluster_row(m.name, "worker", m.stack, m.report.cloud, m.report.region, m.report.cost, _gpus(m.report.cost))
        )
        facts[m.name] = m.report.outputs.get(FACTS_OUTPUT) or {}
    queues = []
    for queue in fleet.queues:
        ns = queue_namespace(queue)
        runs_on: dict[str, list[str]] = {}
        for quota in queue.quotas:
            model = quota.gpu_model.value
            # Kueue's flavor assignment as ported (the pack's cross-layer-fleet-admissible decides the same way)
            runs_on[model] = [
                w
                for w, f in facts.items()
                if any(g["model"] == model for g in f.get("gpus", []))
                and quota_for(f, queue.name, ns, model) > 0
                and fleet_verdict(w, f, queue.name, model).admissible
            ]
        queues.append(
            {
                "name": queue.name,
                "namespace": ns,
                "windows": _only_inside(runs_on, facts),
                "quotas": {q.gpu_model.value: q.gpus for q in queue.quotas},
                "runtimes": {q.gpu_model.value: fleet_runtime_name(q.gpu_model) for q in queue.quotas},
                "runsOn": runs_on,
            }
        )
    by_model: dict[str, int] = {}
    for c in clusters:
        for model, n in c["gpus"].items():
            by_model[model] = by_model.get(model, 0) + n
    gpu_usd = sum(c["gpuUsdPerHourMax"] for c in clusters)
    max_gpus = sum(by_model.values())
    complete = all(c["complete"] for c in clusters)
    unpriced = [f"{c['name']}/{p}" for c in clusters for p in c["unpricedPools"]]
    # the sums are of the priced items only: with a pool of unknown price they are lower bounds ("+ unknown"), and a
    # blended $/GPU-h over GPUs some of which have no price would be a made-up number, so it is unknown too
    totals = {
        "usdPerHourMin": round(sum(c["usdPerHourMin"] for c in clusters), ROUND),
        "usdPerHourMax": round(sum(c["usdPerHourMax"] for c in clusters), ROUND),
        "usdPerMonthMax": round(sum(c["usdPerMonthMax"] for c in clusters), 2),
        "maxGpus": max_gpus,
        "gpusByModel": by_model,
        "blendedUsdPerGpuHour": round(gpu_usd / max_gpus, ROUND) if max_gpus and complete else None,
        "complete": complete,
        "unpricedPools": unpriced,
    }
    notes = (
        [f"{c['name']}: {n}" for c, r in zip(clusters, [cost, *(m.report.cost for m in members)]) for n in r.notes]
        + not_counted(egress)
        + runtime_image_note(fleet.runtime_image)
    )
    return {
        "dispatcher": fleet.dispatcher.value,
        "stepSize": fleet.incremental_step_size if fleet.dispatcher.value == "Incremental" else None,
        "workers": [w.name for w in fleet.workers],
        "clusters": clusters,
        "queues": queues,
        "totals": totals,
        "egress": egress_summary(egress, facts),
        "notes": notes,
    }


def _only_inside(runs_on: dict[str, list[str]], facts: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Model -> worker -> the capacity block window its pools of that model live in, where every such pool is a block
    (outside it the node group is at 0 nodes: the worker's Kueue still admits by quota, and the pods wait for nodes
    that never come until the pods-ready timeout evicts the job; docs/fleet.md)."""
    out: dict[str, dict[str, Any]] = {}
    for model, workers in runs_on.items():
        for w in workers:
            entry: dict[str, Any] = next((g for g in facts[w].get("gpus", []) if g["model"] == model), {})
            windows = entry.get("windows") or {}
            if entry.get("pools") and all(p in windows for p in entry["pools"]):
                out.setdefault(model, {})[w] = {
                    "start": min(v["start"] for v in windows.values()),
                    "end": max(v["end"] for v in windows.values()),
                }
    return out


def runtime_image_note(pinned_image: str | None) -> list[str]:
    """Workers take the manager's ``fleetRuntimeImage`` at their own deploy: a digest the manager re-resolves moves
    under them until they are deployed again (Kueue then finds the copies out of sync and dispatches them again)."""
    if pinned_image is not None:
        return [f"fleet runtime image pinned in the fleet file: {pinned_image} (a manager deploy never moves it)"]
    return [
        f"fleet runtime image: {TORCH_IMAGE} is resolved to its digest at every manager deploy; when the tag has "
        "moved, deploy every worker again after the manager (round 3), or pin it once in fleet.runtimeImage"
    ]


def not_counted(egress: EgressPlan | None) -> list[str]:
    """What the fleet pays that no figure above includes (no sourced price in the catalog for either)."""
    out = []
    if egress is not None and egress.count:
        out.append(
            f"not counted: the manager's {egress.count} reserved static external address"
            f"{'es' if egress.count != 1 else ''} (in use by its Cloud NAT; GCP bills NAT addresses per hour)"
        )
    out.append(
        "not counted: traffic between clouds and regions (the manager's calls to each worker's API, and job "
        "data a worker fetches across clouds) is billed as internet or inter-region egress by the sender"
    )
    return out


COST_RULES = ("cost-stack-budget", "cost-gpu-hour-limit")
"""The pack's fail-closed cost rules: a GPU pool without a price violates them (unknown is not $0)."""


def unpriced_worker_violations(members: Sequence[Member]) -> list[dict[str, Any]]:
    """A worker whose price is unknown fails the fleet's preview as it fails its own: its mandatory cost findings
    (from its own pack run), carried into the manager's under the worker's name."""
    out = []
    for m in members:
        if m.report.cost is None or not m.report.cost.unpriced:
            continue
        out += [
            {
                **v,
                "resource": f"{m.name}: {v.get('resource', '')}",
                "message": f"worker '{m.name}' (stack {m.stack}): {v['message']}",
            }
            for v in m.report.violations
            if v.get("policy") in COST_RULES and v.get("enforcement") == "mandatory"
        ]
    return out


def _gpus(cost: CostReport) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in cost.pools:
        out[p.gpu_model] = out.get(p.gpu_model, 0) + p.gpus_per_node * p.max_nodes
    return out


def outside_window_warnings(summary: dict[str, Any], workers: Sequence[str], now: dt.datetime) -> list[SpecIssue]:
    """A worker whose only pools of a GPU model are a capacity block, previewed outside that block's window: its Kueue
    still admits the model's copies by quota (MultiKueue may pick it), and their pods wait for nodes that do not
    exist until the pods-ready timeout evicts them, then the manager dispatches them again (docs/fleet.md)."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for queue in summary["queues"]:
        for model, by_worker in (queue.get("windows") or {}).items():
            for worker, window in by_worker.items():
                seen.setdefault((worker, model), window)
    out = []
    for (worker, model), window in seen.items():
        start, end = (dt.datetime.fromisoformat(window[k].replace("Z", "+00:00")) for k in ("start", "end"))
        if start <= now < end:
            continue
        when = "before" if now < start else "after"
        out.append(
            SpecIssue(
                path_of("fleet", "workers", workers.index(worker) if worker in workers else 0),
                f"worker '{worker}' has "
                f"{model} only in a capacity block, from {window['start']} to {window['end']}, and now "
                f"({now.strftime('%Y-%m-%dT%H:%MZ')}) is {when} it: its Kueue still admits {model} copies by quota, so "
                f"each {model} fleet job it wins waits out the pods-ready timeout (its gang.timeoutSeconds) for nodes "
                "that do not exist, is evicted there and dispatched again by the manager",
                worker,
                allowed=f"dispatch {model} jobs to '{worker}' inside its window",
                fix=f"submit {model} fleet jobs meant for '{worker}' inside the window, or take '{worker}' out of "
                "fleet.workers until the window opens (docs/fleet.md, A capacity-block worker outside its window)",
                warning=True,
            )
        )
    return out
