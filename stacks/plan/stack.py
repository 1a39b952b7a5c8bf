"""The planner: the validated spec + the catalog -> one ``StackPlan``, computed once per run. Everything the
components, the preview, the policy summaries and the what-if read about the stack comes from here: a ``PoolPlan``
per pool (facts, pod start, the GKE node pool or EKS node group inputs, resolved), the cluster, the GPU runtime plan,
the maintenance window, the pre-pull DaemonSets, image mirrors, and the scheduler plans (Kueue placements, the Slurm
plan, what each queue is promised), and the fleet role. Pure: no Pulumi, no rendering (``render/`` turns plans into documents)."""

from __future__ import annotations

import dataclasses

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from catalog import Catalog, Cloud
from stacks.plan.cluster import ClusterPlan, plan_cluster
from stacks.plan.facts import PoolFacts, pool_facts
from stacks.plan.gpu_runtime import operator_in_stack
from stacks.plan.gpu_runtime_plan import GpuRuntimePlan, runtime_plan
from stacks.plan.kueue_topology import Placement, pool_namespaces, pool_placements, spanning_annotations
from stacks.plan.maintenance import maintenance_policy
from stacks.plan.pod_start import PodStartPlan, mirror_repository, pod_start_plan
from stacks.plan.quota import QuotaPlan, quota_plan, slurm_placements
from stacks.plan.start_time import PodsReadyTimeout, pods_ready_timeout_plan
from stacks.spec.scheduling import SchedulingSpec, Workload
from stacks.spec.stack import NodePool, StackSpec

if TYPE_CHECKING:  # planned below only for the stacks that have them: each cloud's pool planner, the Slurm planner,
    # the fleet, the GKE fabric
    from stacks.plan.eks_pool import EksPoolPlan
    from stacks.plan.fleet import FleetPlan
    from stacks.plan.fleet_egress import EgressPlan
    from stacks.plan.gke_fabric import FabricKindPlan
    from stacks.plan.gke_pool import GkePoolPlan
    from stacks.plan.slurm import SlurmPlan


@dataclass(frozen=True)
class PoolPlan:
    """One GPU pool, resolved: its facts, its pod-start plan, and the node pool (GKE) or node group (EKS) inputs."""

    name: str
    facts: PoolFacts
    pod_start: PodStartPlan
    gke: GkePoolPlan | None = None
    eks: EksPoolPlan | None = None


@dataclass(frozen=True)
class MirrorPlan:
    """An Artifact Registry remote repository mirroring an upstream registry (``cluster.imageMirrors``)."""

    upstream: str
    repository: str
    username: str | None
    password_secret_version: str | None


@dataclass(frozen=True)
class KueuePlan:
    scheduling: SchedulingSpec
    """The queues, quotas and policies the renderer writes as Kueue objects (``render/kueue.py``)."""
    placements: dict[str, Placement]
    """Pool name -> how its gangs are placed (topology-aware scheduling), read by Kueue, Trainer and the preview."""
    namespaces: dict[str, list[str]]
    """Pool name -> the team namespaces whose queues have quota on it."""
    katib: bool
    pipelines: bool
    pods_ready_timeout: PodsReadyTimeout | None = None
    """Kueue's waitForPodsReady timeout as rendered (raised for rack-scale pools, ``start_time.py``); None: no gang."""


@dataclass(frozen=True)
class StackPlan:
    spec: StackSpec
    """The validated spec the plan was made from (compose reads the cloud-level settings; components never)."""
    cluster: ClusterPlan
    pools: dict[str, PoolPlan]
    """In spec order."""
    runtime: GpuRuntimePlan
    maintenance: dict | None
    """GKE ``maintenance_policy`` (window and exclusions), or None."""
    prepull: tuple[tuple[PoolFacts, tuple[str, ...]], ...]
    """Pools with ``podStart.prepull``: their facts and the images their DaemonSet pulls."""
    streaming_pools: frozenset[str]
    """GKE pools that stream images (they wait for the Container File System API)."""
    mirrors: tuple[MirrorPlan, ...]
    kueue: KueuePlan | None = None
    slurm: SlurmPlan | None = None
    quota: QuotaPlan | None = None
    """What each queue is promised, per pool, with its placement note (the preview's queue section)."""
    gke_fabric: tuple[FabricKindPlan, ...] = ()
    """GKE only: the GPUDirect fabric grouped by kind (networks, managed profiles, installers); empty on EKS."""
    fleet: FleetPlan | None = None
    """The stack's fleet role (MultiKueue manager or worker), or None for a standalone cluster."""
    slurm_block_topologies: dict[str, str] = field(default_factory=dict)
    """EKS Slurm pools whose UltraServer groups are labelled with their block: pool -> block topology name (the
    block annotator's input, ``stacks/plan/slurm_block_nodes.py``); empty: no annotator."""
    facts: tuple[PoolFacts, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", tuple(p.facts for p in self.pools.values()))

    @property
    def cloud(self) -> Cloud:
        return self.spec.cloud

    @property
    def fabric_pools(self) -> list[PoolFacts]:
        return [f for f in self.facts if f.fabric is not None]


def _gpu_hour_rate(f: PoolFacts, pool: NodePool) -> float | None:
    from stacks.plan.billing import pool_billing

    rate = pool_billing(f, pool).usd_per_node_hour
    return None if rate is None or not f.gpus_per_node else rate / f.gpus_per_node


def _scheduler_plans(
    sched: SchedulingSpec | None, facts: list[PoolFacts], rates: dict[str, float | None]
) -> tuple[KueuePlan | None, SlurmPlan | None, QuotaPlan | None]:
    if sched is None:
        return None, None, None
    if sched.workload == Workload.KUBEFLOW:
        placements = pool_placements(sched, facts)
        notes = {name: (f"TAS {p.topology}: {p.note}" if p.topology else p.note) for name, p in placements.items()}
        for f in facts:  # GKE racks: the second runtime, for gangs of whole racks
            if spanning_annotations(f, placements.get(f.name)) is not None and f.nvlink is not None:
                notes[f.name] += (
                    f"; gangs of whole racks: required block, {f.nvlink.domain_nodes}-node slices "
                    "per rack (block runtime)"
                )
        kueue = KueuePlan(
            scheduling=sched,
            placements=placements,
            namespaces=pool_namespaces(sched),
            katib=sched.kubeflow.katib,
            pipelines=sched.kubeflow.pipelines,
        )
        return kueue, None, quota_plan(sched, facts, notes, rates)
    if sched.workload == Workload.SLURM:
        from stacks.plan.slurm import plan_slurm  # lazy: a Kueue stack's run (preview, what-if) never loads it

        slurm = plan_slurm(sched, facts)
        return None, slurm, quota_plan(sched, facts, slurm_placements(slurm), rates)
    return None, None, quota_plan(sched, facts, {}, rates)


def plan_stack(spec: StackSpec, cat: Catalog, now: dt.datetime | None = None) -> StackPlan:
    """The one planner. ``now``: the moment a capacity block's scheduled actions are planned from (default: the
    clock, UTC; actions already past are left out)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    egress: EgressPlan | None = None
    if spec.fleet is not None:  # lazy: the fleet planners load for fleet stacks only (the what-if's import floor)
        from stacks.plan.fleet_egress import egress_plan

        egress = egress_plan(spec.fleet, spec.cloud, spec.cluster)  # a fleet manager's NAT addresses, else None
    cluster = plan_cluster(spec, cat.zones(Cloud.GCP, spec.region) if spec.cloud == Cloud.GCP else (), egress)
    pools: dict[str, PoolPlan] = {}
    # lazy: one cloud's pool planner per run (the what-if's import floor, bench/whatif_bench.py)
    if spec.cloud == Cloud.GCP:
        from stacks.plan.gke_pool import gke_pool_plan
    else:
        from stacks.plan.eks_pool import eks_pool_plan
    operator_used = operator_in_stack(spec)  # a stack-wide fact: once, not once per pool
    for index, pool in enumerate(spec.node_pools):
        facts = pool_facts(spec, pool, cat, index, operator_used)
        pod_start = pod_start_plan(spec.cloud, pool)
        if spec.cloud == Cloud.GCP:
            pools[pool.name] = PoolPlan(
                pool.name, facts, pod_start, gke=gke_pool_plan(pool, facts, pod_start, cluster.project, spec.labels)
            )
        else:
            pools[pool.name] = PoolPlan(
                pool.name, facts, pod_start, eks=eks_pool_plan(pool, facts, pod_start, spec.labels, now)
            )
    facts_list = [p.facts for p in pools.values()]
    sched = spec.scheduling
    if spec.serving is not None and sched is not None and sched.workload == Workload.KUBEFLOW:
        from stacks.plan.serving import with_serving_queue  # serving's ClusterQueue joins the training cohort

        sched = with_serving_queue(sched, spec.serving, spec.cloud, spec.node_pools)
    # one price lookup: a queue's $/h is the pool's billed rate (a capacity block's fee, never its list price)
    rates = {f.name: _gpu_hour_rate(f, pool) for f, pool in zip(facts_list, spec.node_pools)}
    kueue, slurm, quota = _scheduler_plans(sched, facts_list, rates)
    annotated: dict[str, str] = {}
    if slurm is not None and spec.cloud == Cloud.AWS:  # each UltraServer group is one Slurm block: label it
        from stacks.plan.slurm_block_nodes import with_block_labels

        annotated = with_block_labels(pools, slurm.topology)
    if kueue is not None:  # rack-scale gangs wait for their ComputeDomain: the timeout follows their cold start
        # one timeout for every workload: the scheduling section as rendered (serving's ready budget included)
        effective = spec.model_copy(update={"scheduling": sched})
        timeout = pods_ready_timeout_plan(effective, [p.pod_start for p in pools.values()], facts_list)
        kueue = dataclasses.replace(kueue, pods_ready_timeout=timeout)
        if quota is not None and timeout is not None:
            quota.gang_timeout_seconds = timeout.seconds
    return StackPlan(
        spec=spec,
        cluster=cluster,
        pools=pools,
        runtime=runtime_plan(spec, facts_list),
        maintenance=maintenance_policy(spec),
        prepull=tuple(
            (p.facts, tuple(i.text for i in p.pod_start.images)) for p in pools.values() if p.pod_start.prepull
        ),
        streaming_pools=frozenset(p.name for p in pools.values() if p.pod_start.streaming),
        mirrors=tuple(
            MirrorPlan(m.upstream.value, mirror_repository(m), m.username, m.password_secret_version)
            for m in spec.cluster.image_mirrors
        ),
        kueue=kueue,
        slurm=slurm,
        quota=quota,
        gke_fabric=_gke_fabric(spec, facts_list),
        fleet=_fleet(spec, facts_list, egress),
        slurm_block_topologies=annotated,
    )


def _gke_fabric(spec: StackSpec, facts: list[PoolFacts]) -> tuple[FabricKindPlan, ...]:
    if spec.cloud != Cloud.GCP or all(f.fabric is None for f in facts):
        return ()  # EKS (EFA is the node group's), or no pool with a fabric
    from stacks.plan.gke_fabric import gke_fabric_plan  # lazy: GKE stacks with a fabric pool only (the import floor)

    return gke_fabric_plan(facts)


def _fleet(spec: StackSpec, facts: list[PoolFacts], egress: EgressPlan | None) -> FleetPlan | None:
    if spec.fleet is None:
        return None
    from stacks.plan.capacity_block import block_window
    from stacks.plan.fleet import fleet_plan  # lazy: fleet stacks only

    windows = {
        p.name: {"start": w.as_dict()["start"], "end": w.as_dict()["end"]}
        for p in spec.node_pools
        if (w := block_window(p)) is not None
    }
    return fleet_plan(spec.fleet, spec.scheduling, facts, egress, windows)
