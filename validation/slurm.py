"""Slurm-only rules of ``gpu-cluster:scheduling`` (workload ``slurm``): pools, partitions, GRES, topology blocks, QOS.

Each check returns SpecIssues (config path, value received, what is allowed, the fix) and never raises; the shared
rules (queue names, quotas against pools) live in ``validation/scheduling.py``.
"""
from __future__ import annotations

import re
from typing import Iterable

from catalog import Catalog, Cloud, MachineType
from stacks.gpu_runtime import effective_runtime
from stacks.gpu_runtime_spec import GpuRuntime, GpuSharing, SharingMode
from scheduling.slurm_nodes import default_cpus, default_real_memory_mib, gres_of
from scheduling.slurm_plan import ALL_PARTITION, SLINKY_MAX_NODE_COUNT, accounting_on
from scheduling.slurm_topology import default_block_size, nodes_per_nvlink_domain
from validation.issues import SpecIssue, allowed_list, choice_fix, path_of
from stacks.scheduling_spec import SchedulingSpec, TopologyLevel, TopologyMode, WithinQueuePreemption, Workload
from stacks.slurm_spec import SlurmPreemptType
from stacks.spec import NodePool

_S = ("scheduling", "slurm")
SLURM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
RESERVED_PARTITIONS = ("default", "all")
"""``PartitionName=DEFAULT`` sets defaults for every partition; ``ALL`` is Slinky's "every NodeSet"."""
RESERVED_ACCOUNTS = ("root",)
QOS_PRIORITY_MAX = 4_294_967_295
MIN_FREE_CPUS, MIN_FREE_MEM_MIB = 1, 2048


def _p(*parts: str | int) -> str:
    return path_of(*_S, *parts)


def check_slurm(cat: Catalog, cloud: Cloud | None, pools: list[tuple[int, NodePool]],
                sched: SchedulingSpec, gpu_runtime: GpuRuntime | None = None) -> list[SpecIssue]:
    """Every Slurm-only rule; nothing to check unless ``workload: slurm``. ``gpu_runtime``: the stack's parsed
    ``gpuRuntime`` (None when that section failed its own checks: the sharing rule is then skipped)."""
    if sched.workload != Workload.SLURM:
        if "slurm" in sched.model_fields_set:
            return [SpecIssue(_p(), "Slurm settings apply only to workload slurm",
                              sched.slurm.model_dump(by_alias=True, mode="json", exclude_defaults=True),
                              "workload: slurm", "remove scheduling.slurm, or set scheduling.workload: slurm")]
        return []
    machines: dict[str, tuple[int, NodePool, MachineType]] = {}
    if cloud is not None:
        for i, pool in pools:
            acc = pool.accelerator
            machine = cat.resolve(cloud, pool.machine_type, acc.type if acc else None, acc.count if acc else None)
            if machine is not None and pool.name not in machines:
                machines[pool.name] = (i, pool, machine)
    pool_names = [p.name for _, p in pools]
    return [*_check_kueue_only(sched), *_check_accounting(sched), *_check_pool_names(pools),
            *_check_partitions(sched, pool_names), *_check_node_sets(sched, pool_names, machines),
            *_check_topology(sched, machines), *_check_qos(sched), *_check_preemption(sched),
            *_check_accounts(sched), *_check_sizes(pools),
            *(_check_whole_gpus(cloud, gpu_runtime, pools) if cloud is not None and gpu_runtime is not None else [])]


# -- settings Slurm would ignore --------------------------------------------------------------------------------
_KUEUE_ONLY = "a Kueue-only setting: with workload slurm nothing reads it"


def _check_kueue_only(sched: SchedulingSpec) -> list[SpecIssue]:
    """Kueue settings the user wrote (``model_fields_set``; defaults are fine) that the Slurm path would ignore."""
    issues: list[SpecIssue] = []
    other = "or set scheduling.workload: kubeflow"
    if "queueing_strategy" in sched.model_fields_set:
        issues.append(SpecIssue(path_of("scheduling", "queueingStrategy"), f"{_KUEUE_ONLY} (Slurm orders pending "
                                "jobs by multifactor priority and fills gaps with backfill)",
                                sched.queueing_strategy.value, "omit it with workload slurm",
                                f"remove queueingStrategy (Slurm's order: slurm.priorityWeights, slurm.backfill), {other}"))
    if "gang" in sched.model_fields_set:
        issues.append(SpecIssue(path_of("scheduling", "gang"), f"{_KUEUE_ONLY} (Slurm allocates all nodes of a job "
                                "at once, so there is no gang admission or timeout to set)",
                                sched.gang.model_dump(by_alias=True, mode="json", exclude_unset=True),
                                "omit it with workload slurm", f"remove scheduling.gang, {other}"))
    if "reclaim_within_cohort" in sched.preemption.model_fields_set:
        issues.append(SpecIssue(path_of("scheduling", "preemption", "reclaimWithinCohort"), f"{_KUEUE_ONLY} (Slurm "
                                "has no cohort lending to reclaim; preemption is by QOS or partition tier)",
                                sched.preemption.reclaim_within_cohort.value, "omit it with workload slurm",
                                f"remove reclaimWithinCohort (Slurm preemption: preemption.withinQueue and "
                                f"slurm.preemptType), {other}"))
    for i, q in enumerate(sched.queues):
        if "namespace" in q.model_fields_set:
            issues.append(SpecIssue(path_of("scheduling", "queues", i, "namespace"), f"{_KUEUE_ONLY} (a queue is a "
                                    "Slurm account: jobs go to slurmctld, not to a namespace's LocalQueue)",
                                    q.namespace, "omit it with workload slurm",
                                    f"remove namespace, and add users with sacctmgr add user NAME account={q.name}; "
                                    f"{other}"))
        for j, quota in enumerate(q.quotas):
            if "lending_limit" in quota.model_fields_set:
                issues.append(SpecIssue(path_of("scheduling", "queues", i, "quotas", j, "lendingLimit"),
                                        f"{_KUEUE_ONLY} (an account's GPU cap, GrpTRES, is its quota plus "
                                        "borrowingLimit; Slurm has no lending limit)", quota.lending_limit,
                                        "omit it with workload slurm", f"remove lendingLimit, {other}"))
    return issues


# -- whole GPUs only ---------------------------------------------------------------------------------------------
def _check_whole_gpus(cloud: Cloud, runtime: GpuRuntime, pools: list[tuple[int, NodePool]]) -> list[SpecIssue]:
    """Every pool becomes a NodeSet whose slurmd requests the node's ``nvidia.com/gpu`` and tells Slurm it owns that
    many whole GPUs (``Gres=gpu:<model>:<GPUs>``, device files ``/dev/nvidia0..``). A shared pool advertises
    time-slices or MPS clients (several per GPU) or MIG instances (not the whole device Slurm's gres.conf names) as
    ``nvidia.com/gpu``, so Slurm would hand out slices as whole GPUs. Every pool is in a NodeSet, so such a pool is
    refused rather than left out. One error per place the sharing is written (a stack value several pools inherit
    is reported once, naming them)."""
    shared: dict[tuple, list[str]] = {}
    sharing_at: dict[tuple, GpuSharing] = {}
    for i, pool in pools:
        eff = effective_runtime(cloud, runtime, pool, i)
        if eff.sharing.mode != SharingMode.NONE:
            shared.setdefault(eff.origin["sharing"], []).append(pool.name)
            sharing_at[eff.origin["sharing"]] = eff.sharing
    issues = []
    for origin, names in shared.items():
        sh = sharing_at[origin]
        what = {SharingMode.TIME_SLICING: f"{sh.replicas} time-slices per GPU",
                SharingMode.MPS: f"{sh.replicas} MPS clients per GPU",
                SharingMode.MIG: f"MIG {sh.mig_profile} instances"}[sh.mode]
        pools_text = ", ".join(names)
        fix = (f"set gpuRuntime.sharing.mode: none (or give {pools_text} nodePools[].gpuRuntime.sharing: "
               "{mode: none})" if origin[0] == "gpuRuntime" else "set this pool's sharing to {mode: none}")
        issues.append(SpecIssue(
            path_of(*origin, "mode"), f"with workload slurm every pool is a Slurm NodeSet that owns whole GPUs "
            f"(Gres=gpu:<model>:<GPUs per node>), and {pools_text} would advertise {what} as nvidia.com/gpu: Slurm "
            "would hand out slices as whole GPUs", sh.mode.value, "none (one nvidia.com/gpu per physical GPU)",
            f"{fix}; or run shared GPUs with workload: kubeflow"))
    return issues


# -- accounting and priority ----------------------------------------------------------------------------------
def _check_accounting(sched: SchedulingSpec) -> list[SpecIssue]:
    s, w = sched.slurm, sched.slurm.priority_weights
    needs = [name for name, value in (("fairShare", w.fair_share), ("age", w.age)) if value > 0]
    if s.accounting is False and needs:
        return [SpecIssue(_p("accounting"), f"fair-share and age priority need accounting (slurmdbd); "
                          f"slurmctld ignores priorityWeights {' and '.join(needs)} without it", False,
                          "true (or omit it) while priorityWeights.fairShare or .age is above 0",
                          f"remove accounting: false, or set priorityWeights.{' and .'.join(needs)} to 0")]
    return []


# -- names ----------------------------------------------------------------------------------------------------
def _check_pool_names(pools: list[tuple[int, NodePool]]) -> list[SpecIssue]:
    issues = []
    for i, pool in pools:
        if pool.name.lower() in RESERVED_PARTITIONS:
            issues.append(SpecIssue(path_of("nodePools", i, "name"), "with workload slurm each pool becomes a "
                                    "partition and NodeSet of the same name, and this name is reserved", pool.name,
                                    f"any pool name except {', '.join(RESERVED_PARTITIONS)}",
                                    "rename the pool (and its references in scheduling.queues)"))
    return issues


def _check_partitions(sched: SchedulingSpec, pool_names: list[str]) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    taken = {n.lower() for n in pool_names} | ({ALL_PARTITION} if sched.slurm.all_pools_partition else set())
    seen: set[str] = set()
    for j, part in enumerate(sched.slurm.partitions):
        where = ("partitions", j)
        if not SLURM_NAME.match(part.name) or part.name.lower() in RESERVED_PARTITIONS:
            issues.append(SpecIssue(_p(*where, "name"), "not a valid Slurm partition name", part.name,
                                    "letters, digits, '-' and '_', at most 63, not default or all",
                                    "rename the partition"))
        elif part.name.lower() in taken or part.name.lower() in seen:
            issues.append(SpecIssue(_p(*where, "name"), "partition name already used (every pool has a partition "
                                    "of its own name, and `all` spans every pool)", part.name,
                                    f"a name other than {allowed_list(sorted(taken | seen))}", "rename the partition"))
        seen.add(part.name.lower())
        for k, pool in enumerate(part.pools):
            if pool not in pool_names:
                issues.append(SpecIssue(_p(*where, "pools", k), "partition names an unknown pool", pool,
                                        allowed_list(pool_names), choice_fix("the pool", pool, pool_names)))
        if len(set(part.pools)) != len(part.pools):
            issues.append(SpecIssue(_p(*where, "pools"), "a pool is listed twice", part.pools,
                                    "each pool once", "remove the duplicate"))
    defaults = [p.name for p in sched.slurm.partitions if p.default]
    if len(defaults) > 1:
        issues.append(SpecIssue(_p("partitions"), "more than one default partition", defaults, "at most one",
                                f"keep default: true on one of {', '.join(defaults)}"))
    return issues


# -- NodeSets: GRES, CPUs, memory -------------------------------------------------------------------------------
def _check_node_sets(sched: SchedulingSpec, pool_names: list[str],
                     machines: dict[str, tuple[int, NodePool, MachineType]]) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    overrides = {}
    for j, ns in enumerate(sched.slurm.node_sets):
        where = ("nodeSets", j)
        if ns.pool not in pool_names:
            issues.append(SpecIssue(_p(*where, "pool"), "NodeSet names an unknown pool", ns.pool,
                                    allowed_list(pool_names), choice_fix("the pool", ns.pool, pool_names)))
            continue
        if ns.pool in overrides:
            issues.append(SpecIssue(_p(*where, "pool"), "pool already has a NodeSet entry", ns.pool,
                                    "one entry per pool", "merge the two entries"))
            continue
        overrides[ns.pool] = ns
        if ns.pool not in machines:
            continue  # the pool's machine type is reported where it is written
        _, _, m = machines[ns.pool]
        expected = gres_of(m)
        if ns.gres is not None and ns.gres != expected:
            issues.append(SpecIssue(_p(*where, "gres"), f"GRES differs from the catalog's {m.machine_type} "
                                    f"({m.gpus} x {m.gpu_model.value}); Slurm would never schedule the missing or "
                                    "extra GPUs", ns.gres, expected, f"set gres: {expected}, or remove it"))
        if ns.cpus is not None and m.vcpu is not None and ns.cpus > m.vcpu - MIN_FREE_CPUS:
            issues.append(SpecIssue(_p(*where, "cpus"), f"more CPUs than {m.machine_type} can give Slurm (it has "
                                    f"{m.vcpu} vCPUs; the kubelet and DaemonSets need some)", ns.cpus,
                                    f"1 to {m.vcpu - MIN_FREE_CPUS}",
                                    f"lower it, or omit it for the default {default_cpus(m.vcpu)}"))
        if ns.real_memory_mib is not None and m.ram_gib is not None and \
                ns.real_memory_mib > m.ram_gib * 1024 - MIN_FREE_MEM_MIB:
            issues.append(SpecIssue(_p(*where, "realMemoryMib"), f"more memory than {m.machine_type} can give Slurm "
                                    f"({m.ram_gib} GiB RAM)", ns.real_memory_mib,
                                    f"1024 to {m.ram_gib * 1024 - MIN_FREE_MEM_MIB}",
                                    f"lower it, or omit it for the default {default_real_memory_mib(m.ram_gib)}"))
    for name, (i, _, m) in machines.items():
        override = overrides.get(name)
        missing = [k for k, have, over in (("cpus", m.vcpu, override.cpus if override else None),
                                           ("realMemoryMib", m.ram_gib, override.real_memory_mib if override else None))
                   if have is None and over is None]
        if missing:
            issues.append(SpecIssue(path_of("nodePools", i, "machineType"), f"the catalog has no vCPU/RAM figure "
                                    f"for {m.machine_type}, and a Slurm node needs CPUs and RealMemory", m.machine_type,
                                    "a machine type with vCPU and RAM in the catalog, or explicit values",
                                    f"add scheduling.slurm.nodeSets: [{{pool: {name}, "
                                    + ", ".join(f"{k}: ..." for k in missing) + "}]"))
    return issues


# -- topology blocks --------------------------------------------------------------------------------------------
def _check_topology(sched: SchedulingSpec, machines: dict[str, tuple[int, NodePool, MachineType]]) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    topo, size = sched.topology, sched.slurm.block_size
    blocks_on = topo.mode != TopologyMode.NONE and topo.level == TopologyLevel.BLOCK
    multi = [(name, i, p, m) for name, (i, p, m) in machines.items() if p.multi_node]
    if size is not None and not blocks_on:
        issues.append(SpecIssue(_p("blockSize"), "blockSize only applies to topology-aware placement by block",
                                size, "topology.level: block with topology.mode required or preferred",
                                "remove blockSize, or set scheduling.topology.level: block"))
        return issues
    if size is not None and not multi:
        issues.append(SpecIssue(_p("blockSize"), "no multi-node pool to split into blocks", size,
                                "a pool with multiNode: true", "remove blockSize, or set multiNode: true on a pool"))
        return issues
    if not blocks_on:
        return issues
    for name, i, pool, m in multi:
        block = size or default_block_size(m, pool.max_nodes)
        if pool.max_nodes % block:
            divisors = [d for d in range(1, pool.max_nodes + 1) if pool.max_nodes % d == 0]
            if size is not None:
                issues.append(SpecIssue(_p("blockSize"), f"pool {name}'s maxNodes ({pool.max_nodes}) is not a "
                                        "multiple of the block size: the last block would be partial", size,
                                        f"a divisor of {pool.max_nodes}: {allowed_list(map(str, divisors))}",
                                        f"set blockSize to a divisor of {pool.max_nodes}, or nodePools[{i}].maxNodes "
                                        f"to a multiple of {size}"))
            else:
                per = nodes_per_nvlink_domain(m)
                issues.append(SpecIssue(path_of("nodePools", i, "maxNodes"), f"{m.machine_type} shares one NVLink "
                                        f"domain per {per} nodes, and maxNodes is not a multiple of it",
                                        pool.max_nodes, f"a multiple of {per}",
                                        f"set maxNodes to {pool.max_nodes - pool.max_nodes % per or per}"))
    return issues


# -- QOS and preemption -----------------------------------------------------------------------------------------
def _check_qos(sched: SchedulingSpec) -> list[SpecIssue]:
    issues: list[SpecIssue] = []
    classes = {c.name: c.value for c in sched.priority_classes}
    names = list(classes)
    for j, c in enumerate(sched.priority_classes):
        if not 0 <= c.value <= QOS_PRIORITY_MAX:
            issues.append(SpecIssue(path_of("scheduling", "priorityClasses", j, "value"), "a Slurm QOS priority "
                                    "is an unsigned 32-bit number", c.value, f"0 to {QOS_PRIORITY_MAX}",
                                    "use a value of 0 or more (only the order between classes matters)"))
    for qos, targets in sched.slurm.qos_preempts.items():
        if qos not in classes:
            issues.append(SpecIssue(_p("qosPreempts", qos), "not a priority class", qos, allowed_list(names),
                                    choice_fix("the key", qos, names) if names else "add it to scheduling.priorityClasses"))
            continue
        for k, target in enumerate(targets):
            if target == qos:
                issues.append(SpecIssue(_p("qosPreempts", qos, k), "a QOS cannot preempt itself (Slurm refuses it; "
                                        "jobs of one class never preempt each other)", target,
                                        allowed_list([n for n in names if classes[n] < classes[qos]]) or "none",
                                        f"remove {target} from qosPreempts.{qos}"))
            elif target not in classes:
                issues.append(SpecIssue(_p("qosPreempts", qos, k), "not a priority class", target,
                                        allowed_list(names), choice_fix("it", target, names)))
            elif classes[target] > classes[qos]:
                issues.append(SpecIssue(_p("qosPreempts", qos, k), f"{qos} (value {classes[qos]}) would preempt the "
                                        f"higher class {target} (value {classes[target]})", target,
                                        allowed_list([n for n in names if classes[n] < classes[qos]]) or "none",
                                        f"remove {target}, or raise {qos}'s value above {classes[target]}"))
    if sched.slurm.default_qos is not None and sched.slurm.default_qos not in classes:
        issues.append(SpecIssue(_p("defaultQos"), "not a priority class", sched.slurm.default_qos,
                                allowed_list(names) or "none (no priorityClasses)",
                                choice_fix("it", sched.slurm.default_qos, names) if names else "remove defaultQos"))
    return issues


def _check_preemption(sched: SchedulingSpec) -> list[SpecIssue]:
    s = sched.slurm
    issues = []
    if s.preempt_type == SlurmPreemptType.QOS and len(sched.priority_classes) < 2:
        issues.append(SpecIssue(_p("preemptType"), "QOS preemption needs at least two priority classes",
                                s.preempt_type.value, "qos with two or more priorityClasses; partition_prio; none",
                                "add scheduling.priorityClasses, or set preemptType: none"))
    if s.preempt_type == SlurmPreemptType.PARTITION_PRIO:
        tiers = {p.priority_tier for p in s.partitions} | ({1, 2} if s.all_pools_partition else {2})
        if len(tiers) < 2:
            issues.append(SpecIssue(_p("preemptType"), "partition_prio needs partitions of different priorityTier; "
                                    "every partition here has the same tier", s.preempt_type.value,
                                    "allPoolsPartition: true (tier 1 under the pools' tier 2), or partitions with "
                                    "another priorityTier", "set allPoolsPartition: true, or preemptType: qos"))
    if sched.preemption.within_queue == WithinQueuePreemption.LOWER_OR_NEWER_EQUAL_PRIORITY and \
            s.preempt_type in (SlurmPreemptType.AUTO, SlurmPreemptType.QOS):
        issues.append(SpecIssue(path_of("scheduling", "preemption", "withinQueue"), "Slurm cannot preempt jobs of "
                                "the same QOS: rendered as LowerPriority", sched.preemption.within_queue.value,
                                "LowerPriority or Never for Slurm", "set withinQueue: LowerPriority", warning=True))
    return issues


def _check_accounts(sched: SchedulingSpec) -> list[SpecIssue]:
    issues = []
    for j, q in enumerate(sched.queues):
        if q.name.lower() in RESERVED_ACCOUNTS:
            issues.append(SpecIssue(path_of("scheduling", "queues", j, "name"), "Slurm's root account already "
                                    "exists and holds every other account", q.name, "any name except root",
                                    "rename the queue"))
    if sched.queues and not accounting_on(sched) and any(q.fair_share_weight != 1 for q in sched.queues):
        issues.append(SpecIssue(_p("accounting"), "queues declare fairShareWeight, but accounts (and so their "
                                "shares) need accounting", False, "true (or omit it)",
                                "remove accounting: false", warning=True))
    return issues


def _check_sizes(pools: Iterable[tuple[int, NodePool]]) -> list[SpecIssue]:
    pools = list(pools)
    issues = []
    total = sum(p.max_nodes for _, p in pools)
    if total > SLINKY_MAX_NODE_COUNT:
        issues.append(SpecIssue(path_of("nodePools"), "Slinky declares MaxNodeCount=1024 dynamic Slurm nodes, and "
                                "the pools' maxNodes add up to more", total, f"at most {SLINKY_MAX_NODE_COUNT} nodes "
                                "over all pools", "lower maxNodes, or split the pools over two clusters"))
    for i, p in pools:
        if p.min_nodes < p.max_nodes:
            issues.append(SpecIssue(path_of("nodePools", i, "minNodes"), f"with workload slurm the pool runs one "
                                    f"slurmd pod per node up to maxNodes ({p.max_nodes}), so it scales to maxNodes "
                                    "and stays there: cost at max applies", p.min_nodes, f"{p.max_nodes} (= maxNodes)",
                                    f"set minNodes: {p.max_nodes} to say so, or lower maxNodes", warning=True))
    return issues
