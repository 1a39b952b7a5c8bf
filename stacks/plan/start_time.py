"""How long a gang takes from admission to all pods running on a pool, from the catalog's start-path factors
(``catalog/start_path.py``) and the pool's pod-start settings (``pod_start.py``): node provisioning (cold only), the
image pull (full, SOCI parallel, streamed or preloaded; cold nodes only), Kueue admission, scheduling the pods, the
pod start itself and, where a ComputeDomain is used, its start. Each estimate is a range: low / typical / high from
the factors' sourced bounds (a factor with no source for a range adds none). Pure; read by the preview and the
what-if."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from catalog.provisioning import load_provisioning
from catalog.start_path import load_start_path
from stacks.plan.facts import PoolFacts
from stacks.plan.kueue_topology import is_fixed_size
from stacks.plan.pod_start import PodStartPlan, pod_start_summary, streams
from stacks.spec.scheduling import TopologyLevel, TopologyMode, Workload
from stacks.spec.stack import NodePool, StackSpec


@dataclass(frozen=True)
class PoolStart:
    provision_s: float
    pull_s: float
    """A node that never had the image: pull (or stream, or read from the boot disk) before the pod starts."""
    pull_how: str
    prepull: bool


FASTER_WHEN_HIGHER = frozenset({"pull_gb_per_s", "soci_speedup", "schedule_pods_per_s", "admit_workloads_per_s"})
"""Rates and speed-ups: their high bound gives the shortest start (every other factor is a size or a duration)."""
SLURM_MEASURED_NODES = 64
"""The measured Slurm start's gang: 64 nodes x 8 GPUs (bench/slurm_start.py, docs/benchmarks.md)."""


def factors(overrides: Mapping[str, float] | None = None) -> dict[str, float]:
    """The catalog's factor values, with the user's overrides (names must exist)."""
    out = {name: f.value for name, f in load_start_path().items()}
    unknown = sorted(set(overrides or {}) - set(out))
    if unknown:
        raise KeyError(f"unknown start-path factors {unknown}; allowed: {', '.join(sorted(out))}")
    out.update(overrides or {})
    return out


@dataclass(frozen=True)
class FactorBounds:
    """Factor values giving the shortest (``low``), typical and longest (``high``) start, with the node provisioning
    bounds of the pool's cloud and capacity. A factor the user overrides (``--assume``) has no range."""

    low: Mapping[str, float]
    typical: Mapping[str, float]
    high: Mapping[str, float]


def factor_bounds(overrides: Mapping[str, float] | None = None) -> FactorBounds:
    typical = factors(overrides)
    low, high = dict(typical), dict(typical)
    for name, f in load_start_path().items():
        if overrides and name in overrides:
            continue
        fast, slow = (f.high, f.low) if name in FASTER_WHEN_HIGHER else (f.low, f.high)
        low[name], high[name] = fast, slow
    return FactorBounds(low, typical, high)


def span(low: float, typical: float, high: float) -> dict[str, float]:
    return {"low": round(low, 1), "typical": round(typical, 1), "high": round(high, 1)}


def pool_start(plan: PodStartPlan, provision_s: float, image_gb: float | None, f: Mapping[str, float]) -> PoolStart:
    """A size that is not declared (``image_gb`` factor 0) takes the source's pull time itself (4-6 min for 15-20 GB):
    pairing its size extremes with its speed extremes would widen the range beyond what it says."""
    size = image_gb if image_gb is not None else f["image_gb"]
    if plan.boot_disk_image:
        return PoolStart(provision_s, f["boot_disk_pull_s"], "preloaded from the secondary boot disk", plan.prepull)
    if streams(plan):
        return PoolStart(provision_s, f["streaming_s"], "streamed (image streaming)", plan.prepull)
    full, what = (size / f["pull_gb_per_s"], f"{size:g} GB") if size else (f["undeclared_pull_s"], "size undeclared")
    if plan.fast_image_pull:
        return PoolStart(provision_s, full / f["soci_speedup"], f"{what}, SOCI parallel pull", plan.prepull)
    return PoolStart(provision_s, full, f"{what}, full pull", plan.prepull)


def overhead_s(pods: int, f: Mapping[str, float], compute_domain: bool = False) -> float:
    """Admission, scheduling ``pods`` pods, the pod start, and the ComputeDomain where one is used."""
    cd = pods * f["compute_domain_s_per_pod"] if compute_domain else 0.0
    return 1 / f["admit_workloads_per_s"] + pods / f["schedule_pods_per_s"] + f["pod_start_s"] + cd


def gang_seconds(
    start: PoolStart, pods: int, cold: bool, f: Mapping[str, float], compute_domain: bool = False
) -> float:
    """Admission to all ``pods`` running: on new nodes (cold: provisioning and pull) or on nodes that have the image."""
    return (start.provision_s + start.pull_s if cold else 0.0) + overhead_s(pods, f, compute_domain)


def compute_domain_on_path(spec: StackSpec, facts: PoolFacts) -> tuple[bool, bool]:
    """(cold, warm): whether a ComputeDomain start is on the largest gang's path (the plan's
    ``NvlinkPlan.compute_domains``). A job's pods start only once every IMEX daemon of their ComputeDomain is Ready
    (the kubelet plugin's PrepareResourceClaims waits for them: dra-driver-nvidia-gpu#1107), so on a rack-scale pool
    every TrainJob's start includes it, on new nodes or not. A Slinky NodeSet's slurmd pods claim the channel once, as
    the nodes join: cold only."""
    if facts.nvlink is None or not facts.nvlink.compute_domains:
        return False, False
    slurm = spec.scheduling is not None and spec.scheduling.workload == Workload.SLURM
    return True, not slurm


def largest_gang(
    spec: StackSpec,
    pool: NodePool,
    plan: PodStartPlan,
    facts: PoolFacts,
    f: Mapping[str, float] | None = None,
    timeout: int | None = None,
    bounds: FactorBounds | None = None,
) -> dict[str, Any]:
    """The preview's estimate for the pool's largest gang (every node of a multi-node pool, else one pod): admission
    to all pods running on new nodes (cold) and on nodes that already hold the image (warm); on rack-scale NVLink
    pools with the ComputeDomain start (``computeDomainS``, the ``compute_domain_s_per_pod`` factor). ``coldS`` /
    ``warmS`` are typical; ``coldRangeS`` / ``warmRangeS`` the low / typical / high from the sourced bounds
    (``bounds``; the catalog's when None). ``timeout``: Kueue's pods-ready timeout the cold start is judged against
    (None: no gang admission)."""
    f = factors() if f is None else f
    b = factor_bounds() if bounds is None else bounds
    prov = load_provisioning()[(spec.cloud, pool.capacity.type)]
    ps = pool.pod_start
    size = ps.image_size_gb if ps else None
    start = pool_start(plan, prov.provision_seconds, size, f)
    pods = gang_pods(spec, pool, facts)
    cd_cold, cd_warm = compute_domain_on_path(spec, facts)
    slurm = spec.scheduling is not None and spec.scheduling.workload == Workload.SLURM
    cold = gang_seconds(start, pods, True, f, cd_cold)
    cold_low = gang_seconds(pool_start(plan, prov.low_seconds, size, b.low), pods, True, b.low, cd_cold)
    cold_high = gang_seconds(pool_start(plan, prov.high_seconds, size, b.high), pods, True, b.high, cd_cold)
    out: dict[str, Any] = {
        "pods": pods,
        "coldS": round(cold, 1),
        "coldRangeS": span(min(cold_low, cold), cold, max(cold_high, cold)),
    }
    if slurm:
        out.update(slurm_warm(pods, f, b))
    else:
        warm = gang_seconds(start, pods, False, f, cd_warm)
        out["warmS"] = round(warm, 1)
        out["warmRangeS"] = span(
            gang_seconds(start, pods, False, b.low, cd_warm), warm, gang_seconds(start, pods, False, b.high, cd_warm)
        )
    out.update({"image": start.pull_how, "provisionS": start.provision_s, "pullS": round(start.pull_s, 1)})
    if cd_cold:
        out["computeDomainS"] = round(pods * f["compute_domain_s_per_pod"], 1)
        out["computeDomainWarm"] = cd_warm
    if timeout is not None and out["coldS"] > timeout:
        # Kueue's waitForPodsReady covers every admitted workload, one pod too: it is evicted at the timeout
        out["overPodsReadyTimeoutS"] = timeout
    return out


def slurm_warm(pods: int, f: Mapping[str, float], b: FactorBounds) -> dict[str, Any]:
    """A Slurm job on slurmd pods already up: sbatch to all tasks running, measured for a 64-node x 8-GPU job
    (bench/slurm_start.py). Shown only for multi-node gangs, labelled with the size it was measured at; a 1-node job
    has no measured figure (``warmS`` None)."""
    if pods <= 1:
        return {"warmS": None, "warmMeasured": "not measured for a 1-node Slurm job (the benchmark is 64 nodes)"}
    size = (
        "at this size"
        if pods == SLURM_MEASURED_NODES
        else f"at {SLURM_MEASURED_NODES} nodes, not at this gang's {pods}"
    )
    name = "slurm_warm_start_s"
    return {
        "warmS": round(f[name], 1),
        "warmRangeS": span(b.low[name], f[name], b.high[name]),
        "warmMeasured": f"measured sbatch to all tasks running, 64 nodes x 8 GPUs on real Slurm, median of 10 "
        f"(range: min-p95), {size}",
    }


def gang_pods(spec: StackSpec, pool: NodePool, facts: PoolFacts) -> int:
    """Pods of the largest gang the placement allows: every node of a multi-node pool, but no more than one NVLink
    domain when the stack requires gangs inside one (``topology: {mode: required, level: nvlink}``)."""
    if not pool.multi_node:
        return 1
    topo = spec.scheduling.topology if spec.scheduling is not None else None
    nv = facts.nvlink
    if (
        nv is not None
        and topo is not None
        and topo.mode == TopologyMode.REQUIRED
        and topo.level == TopologyLevel.NVLINK
    ):
        if nv.racks > 1 and nv.block_label and is_fixed_size(pool.min_nodes, pool.max_nodes):
            return pool.max_nodes  # the torch-<pool>-block runtime takes gangs of every rack (render/trainer.py)
        return min(pool.max_nodes, nv.domain_nodes)
    return pool.max_nodes


def pods_ready_timeout(spec: StackSpec) -> int | None:
    """Kueue's ``waitForPodsReady`` timeout where gangs are admitted all-or-nothing (Kubeflow with gang on)."""
    s = spec.scheduling
    if s is None or s.workload != Workload.KUBEFLOW or not s.gang.enabled:
        return None
    return s.gang.timeout_seconds


TIMEOUT_MARGIN = 1.5
"""Rack-scale pools: Kueue's pods-ready timeout is the largest cold gang estimate times this, so a cold start a
little slower than the estimate (the ComputeDomain factor is extrapolated, not measured) is not evicted."""
TIMEOUT_ROUND_S = 60


@dataclass(frozen=True)
class PodsReadyTimeout:
    """Kueue's ``waitForPodsReady.timeout`` as rendered, and where it comes from."""

    seconds: int
    estimate_s: float | None = None
    """The largest cold gang estimate of the stack's rack-scale (ComputeDomain) pools; None: there are none."""
    pool: str | None = None
    """The pool of that estimate."""
    derived: bool = False
    """True: raised from the spec's default to the estimate x ``TIMEOUT_MARGIN``; False: the spec's value."""
    configured: bool = False
    """``scheduling.gang.timeoutSeconds`` is set in the stack (never raised then; below the estimate it is refused)."""

    @property
    def suggested_s(self) -> int | None:
        if self.estimate_s is None:
            return None
        return math.ceil(self.estimate_s * TIMEOUT_MARGIN / TIMEOUT_ROUND_S) * TIMEOUT_ROUND_S

    def as_dict(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "estimateS": self.estimate_s,
            "pool": self.pool,
            "derived": self.derived,
            "configured": self.configured,
            "margin": TIMEOUT_MARGIN,
        }


def pods_ready_timeout_plan(
    spec: StackSpec, plans: Sequence[PodStartPlan], facts: Sequence[PoolFacts], f: Mapping[str, float] | None = None
) -> PodsReadyTimeout | None:
    """The timeout Kueue runs with (None: no gang admission). Every rack-scale gang waits for its ComputeDomain's IMEX
    daemons before a pod runs, so on a stack with such pools the default (600 s) is raised to the largest cold gang
    estimate x 1.5, rounded up to a minute; a timeout the stack sets is kept as set."""
    base = pods_ready_timeout(spec)
    if base is None or spec.scheduling is None:
        return None
    configured = "timeout_seconds" in spec.scheduling.gang.model_fields_set
    f = factors() if f is None else f
    worst: tuple[float, str] | None = None
    for pool, plan, pool_facts in zip(spec.node_pools, plans, facts, strict=True):
        if not compute_domain_on_path(spec, pool_facts)[0]:
            continue
        cold = largest_gang(spec, pool, plan, pool_facts, f)["coldS"]
        if worst is None or cold > worst[0]:
            worst = (cold, pool.name)
    if worst is None:
        return PodsReadyTimeout(base, configured=configured)
    out = PodsReadyTimeout(base, worst[0], worst[1], configured=configured)
    suggested = out.suggested_s or base
    if configured or suggested <= base:
        return out
    return PodsReadyTimeout(suggested, worst[0], worst[1], derived=True)


def pod_start_rows(spec: StackSpec, plans: Sequence[PodStartPlan], facts: Sequence[PoolFacts]) -> list[dict[str, Any]]:
    """``pod_start_summary`` with the largest gang's cold and warm estimate on every row (``plans`` and ``facts``: the
    pools' pod-start plans and facts from the StackPlan, in spec order)."""
    rows = pod_start_summary(spec, plans)
    f = factors()
    bounds = factor_bounds()
    timeout = pods_ready_timeout_plan(spec, plans, facts, f)
    for row, pool, plan, pool_facts in zip(rows, spec.node_pools, plans, facts, strict=True):
        seconds = timeout.seconds if timeout else None
        row["largestGang"] = largest_gang(spec, pool, plan, pool_facts, f, seconds, bounds)
        if timeout is not None and timeout.derived and timeout.pool == pool.name:
            row["largestGang"]["podsReadyTimeout"] = timeout.as_dict()
    return rows
