"""Slurm-only rules of ``gpu-cluster:scheduling`` (workload ``slurm``): pools, partitions, GRES, topology blocks.

Each check reports into an ``Issues`` scope (config path, value received, what is allowed, the fix) and never
raises; the shared rules (queue names, quotas against pools) live in ``stacks/validate/scheduling.py``. Two families
have modules of their own, run from ``check_slurm``: QOS, preemption and accounts (``slurm_qos.py``) and the Kueue
settings Slurm would ignore (``slurm_ignored_settings.py``).
"""

from __future__ import annotations

import re
from typing import Iterable

from catalog import Catalog, Cloud, MachineType
from stacks.plan.gpu_runtime import effective_runtime
from stacks.spec.gpu_runtime import GpuRuntime, GpuSharing, SharingMode
from stacks.plan.nvlink import default_block_size, nodes_per_nvlink_domain
from stacks.validate.issues import Issues, allowed_list, choice_fix, pool_subject
from stacks.validate.slurm_blocks import check_power_saving_blocks, warn_empty_blocks
from stacks.validate.slurm_ignored_settings import check_kueue_only
from stacks.validate.slurm_qos import check_accounts, check_preemption, check_qos, check_qos_limits
from stacks.spec.scheduling import SchedulingSpec, TopologyLevel, TopologyMode, Workload
from stacks.spec.stack import NodePool

SLURM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
RESERVED_PARTITIONS = ("default", "all")
"""``PartitionName=DEFAULT`` sets defaults for every partition; ``ALL`` is Slinky's "every NodeSet"."""
MIN_FREE_CPUS, MIN_FREE_MEM_MIB = 1, 2048


def check_slurm(
    issues: Issues,
    cat: Catalog,
    cloud: Cloud | None,
    pools: list[tuple[int, NodePool]],
    sched: SchedulingSpec,
    gpu_runtime: GpuRuntime | None = None,
) -> None:
    """Every Slurm-only rule; nothing to check unless ``workload: slurm``. ``gpu_runtime``: the stack's parsed
    ``gpuRuntime`` (None when that section failed its own checks: the sharing rule is then skipped)."""
    scheduling = issues.at("scheduling")
    slurm = scheduling.at("slurm")
    if sched.workload != Workload.SLURM:
        if "slurm" in sched.model_fields_set:
            slurm.error(
                None,
                "Slurm settings apply only to workload slurm",
                sched.slurm.model_dump(by_alias=True, mode="json", exclude_defaults=True),
                allowed="workload: slurm",
                fix="remove scheduling.slurm, or set scheduling.workload: slurm",
            )
        return
    # the Slurm planner's names are imported in the functions that use them, past the line above: a Kueue stack's
    # validation (every preview, every what-if) never loads the Slurm planner
    from stacks.validate.slurm_access import check_slurm_access

    machines: dict[str, tuple[int, NodePool, MachineType]] = {}
    if cloud is not None:
        for i, pool in pools:
            acc = pool.accelerator
            machine = cat.resolve(cloud, pool.machine_type, acc.type if acc else None, acc.count if acc else None)
            if machine is not None and pool.name not in machines:
                machines[pool.name] = (i, pool, machine)
    pool_names = [p.name for _, p in pools]
    check_kueue_only(scheduling, sched)
    _check_accounting(slurm, sched)
    _check_pool_names(issues, pools)
    _check_partitions(slurm, sched, pool_names)
    _check_node_sets(issues, sched, pool_names, machines)
    _check_topology(issues, sched, machines)
    check_qos(scheduling, sched)
    check_qos_limits(scheduling, sched)
    check_preemption(scheduling, sched)
    check_accounts(scheduling, sched)
    _check_sizes(issues, pools, sched.slurm.scaling.enabled)
    check_slurm_access(slurm, sched.slurm.access)
    if cloud is not None and gpu_runtime is not None:
        _check_whole_gpus(issues, cloud, gpu_runtime, pools)
    if cloud == Cloud.AWS:
        from stacks.validate.slurm_fabric import check_efa_slurmd_image

        check_efa_slurmd_image(issues, pools)


# -- whole GPUs only ---------------------------------------------------------------------------------------------
def _check_whole_gpus(issues: Issues, cloud: Cloud, runtime: GpuRuntime, pools: list[tuple[int, NodePool]]) -> None:
    """Every pool becomes a NodeSet whose slurmd requests the node's ``nvidia.com/gpu`` and tells Slurm it owns that
    many whole GPUs (``Gres=gpu:<model>:<GPUs>``, device files ``/dev/nvidia0..``). A shared pool advertises
    time-slices or MPS clients (several per GPU) or MIG instances (not the whole device Slurm's gres.conf names) as
    ``nvidia.com/gpu``, so Slurm would hand out slices as whole GPUs. Every pool is in a NodeSet, so such a pool is
    refused rather than left out. One error per place the sharing is written (a stack value several pools inherit
    is reported once, naming them; a pool's own value names the pool)."""
    shared: dict[tuple, list[str]] = {}
    sharing_at: dict[tuple, GpuSharing] = {}
    for i, pool in pools:
        eff = effective_runtime(cloud, runtime, pool, i)
        if eff.sharing.mode != SharingMode.NONE:
            shared.setdefault(eff.origin["sharing"], []).append(pool.name)
            sharing_at[eff.origin["sharing"]] = eff.sharing
    for origin, names in shared.items():
        sh = sharing_at[origin]
        what = {
            SharingMode.TIME_SLICING: f"{sh.replicas} time-slices per GPU",
            SharingMode.MPS: f"{sh.replicas} MPS clients per GPU",
            SharingMode.MIG: f"MIG {sh.mig_profile} instances",
        }[sh.mode]
        pools_text = ", ".join(names)
        stack_wide = origin[0] == "gpuRuntime"
        fix = (
            f"set gpuRuntime.sharing.mode: none (or give {pools_text} nodePools[].gpuRuntime.sharing: {{mode: none}})"
            if stack_wide
            else "set this pool's sharing to {mode: none}"
        )
        where = issues.at(*origin) if stack_wide else issues.at(*origin).about(pool_subject(names[0]))
        where.error(
            "mode",
            f"with workload slurm every pool is a Slurm NodeSet that owns whole GPUs "
            f"(Gres=gpu:<model>:<GPUs per node>), and {pools_text} would advertise {what} as nvidia.com/gpu: "
            "Slurm would hand out slices as whole GPUs",
            sh.mode.value,
            allowed="none (one nvidia.com/gpu per physical GPU)",
            fix=f"{fix}; or run shared GPUs with workload: kubeflow",
        )


# -- accounting and priority ----------------------------------------------------------------------------------
def _check_accounting(slurm: Issues, sched: SchedulingSpec) -> None:
    s, w = sched.slurm, sched.slurm.priority_weights
    needs = [name for name, value in (("fairShare", w.fair_share), ("age", w.age)) if value > 0]
    if s.accounting is False and needs:
        slurm.error(
            "accounting",
            f"fair-share and age priority need accounting (slurmdbd); slurmctld ignores "
            f"priorityWeights {' and '.join(needs)} without it",
            False,
            allowed="true (or omit it) while priorityWeights.fairShare or .age is above 0",
            fix=f"remove accounting: false, or set priorityWeights.{' and .'.join(needs)} to 0",
        )


# -- names ----------------------------------------------------------------------------------------------------
def _check_pool_names(issues: Issues, pools: list[tuple[int, NodePool]]) -> None:
    for i, pool in pools:
        if pool.name.lower() in RESERVED_PARTITIONS:
            issues.pool(i, pool.name).error(
                "name",
                "with workload slurm each pool becomes a partition and NodeSet of the same name, and this "
                "name is reserved",
                pool.name,
                allowed=f"any pool name except {', '.join(RESERVED_PARTITIONS)}",
                fix="rename the pool (and its references in scheduling.queues)",
            )


def _check_partitions(slurm: Issues, sched: SchedulingSpec, pool_names: list[str]) -> None:
    from stacks.plan.slurm import ALL_PARTITION

    taken = {n.lower() for n in pool_names} | ({ALL_PARTITION} if sched.slurm.all_pools_partition else set())
    seen: set[str] = set()
    for j, part in enumerate(sched.slurm.partitions):
        where = slurm.at("partitions", j)
        if not SLURM_NAME.fullmatch(part.name) or part.name.lower() in RESERVED_PARTITIONS:
            where.error(
                "name",
                "not a valid Slurm partition name",
                part.name,
                allowed="letters, digits, '-' and '_', at most 63, not default or all",
                fix="rename the partition",
            )
        elif part.name.lower() in taken or part.name.lower() in seen:
            where.error(
                "name",
                "partition name already used (every pool has a partition of its own name, and `all` spans every pool)",
                part.name,
                allowed=f"a name other than {allowed_list(sorted(taken | seen))}",
                fix="rename the partition",
            )
        seen.add(part.name.lower())
        for k, pool in enumerate(part.pools):
            if pool not in pool_names:
                where.error(
                    ("pools", k),
                    "partition names an unknown pool",
                    pool,
                    allowed=allowed_list(pool_names),
                    fix=choice_fix("the pool", pool, pool_names),
                )
        if len(set(part.pools)) != len(part.pools):
            where.error(
                "pools", "a pool is listed twice", part.pools, allowed="each pool once", fix="remove the duplicate"
            )
    defaults = [p.name for p in sched.slurm.partitions if p.default]
    if len(defaults) > 1:
        slurm.error(
            "partitions",
            "more than one default partition",
            defaults,
            allowed="at most one",
            fix=f"keep default: true on one of {', '.join(defaults)}",
        )


# -- NodeSets: GRES, CPUs, memory -------------------------------------------------------------------------------
def _check_node_sets(
    issues: Issues, sched: SchedulingSpec, pool_names: list[str], machines: dict[str, tuple[int, NodePool, MachineType]]
) -> None:
    from stacks.plan.slurm_nodes import default_cpus, default_real_memory_mib, gres_of

    overrides = {}
    for j, ns in enumerate(sched.slurm.node_sets):
        where = issues.at("scheduling", "slurm", "nodeSets", j)
        if ns.pool not in pool_names:
            where.error(
                "pool",
                "NodeSet names an unknown pool",
                ns.pool,
                allowed=allowed_list(pool_names),
                fix=choice_fix("the pool", ns.pool, pool_names),
            )
            continue
        if ns.pool in overrides:
            where.error(
                "pool",
                "pool already has a NodeSet entry",
                ns.pool,
                allowed="one entry per pool",
                fix="merge the two entries",
            )
            continue
        overrides[ns.pool] = ns
        if ns.pool not in machines:
            continue  # the pool's machine type is reported where it is written
        _, _, m = machines[ns.pool]
        expected = gres_of(m)
        if ns.gres is not None and ns.gres != expected:
            where.error(
                "gres",
                f"GRES differs from the catalog's {m.machine_type} ({m.gpus} x {m.gpu_model.value}); "
                "Slurm would never schedule the missing or extra GPUs",
                ns.gres,
                allowed=expected,
                fix=f"set gres: {expected}, or remove it",
            )
        if ns.cpus is not None and m.vcpu is not None and ns.cpus > m.vcpu - MIN_FREE_CPUS:
            where.error(
                "cpus",
                f"more CPUs than {m.machine_type} can give Slurm (it has {m.vcpu} vCPUs; the kubelet "
                "and DaemonSets need some)",
                ns.cpus,
                allowed=f"1 to {m.vcpu - MIN_FREE_CPUS}",
                fix=f"lower it, or omit it for the default {default_cpus(m.vcpu)}",
            )
        if (
            ns.real_memory_mib is not None
            and m.ram_gib is not None
            and ns.real_memory_mib > m.ram_gib * 1024 - MIN_FREE_MEM_MIB
        ):
            where.error(
                "realMemoryMib",
                f"more memory than {m.machine_type} can give Slurm ({m.ram_gib} GiB RAM)",
                ns.real_memory_mib,
                allowed=f"1024 to {m.ram_gib * 1024 - MIN_FREE_MEM_MIB}",
                fix=f"lower it, or omit it for the default {default_real_memory_mib(m.ram_gib)}",
            )
    for name, (i, _, m) in machines.items():
        override = overrides.get(name)
        missing = [
            k
            for k, have, over in (
                ("cpus", m.vcpu, override.cpus if override else None),
                ("realMemoryMib", m.ram_gib, override.real_memory_mib if override else None),
            )
            if have is None and over is None
        ]
        if missing:
            issues.pool(i, name).error(
                "machineType",
                f"the catalog has no vCPU/RAM figure for {m.machine_type}, and a Slurm node needs CPUs and RealMemory",
                m.machine_type,
                allowed="a machine type with vCPU and RAM in the catalog, or explicit values",
                fix=f"add scheduling.slurm.nodeSets: [{{pool: {name}, "
                + ", ".join(f"{k}: ..." for k in missing)
                + "}]",
            )


# -- topology blocks --------------------------------------------------------------------------------------------
def _check_topology(
    issues: Issues, sched: SchedulingSpec, machines: dict[str, tuple[int, NodePool, MachineType]]
) -> None:
    slurm = issues.at("scheduling", "slurm")
    topo, size = sched.topology, sched.slurm.block_size
    multi = [(name, i, p, m) for name, (i, p, m) in machines.items() if p.multi_node]
    if size is not None and not (topo.mode != TopologyMode.NONE and topo.level == TopologyLevel.BLOCK):
        slurm.error(
            "blockSize",
            "blockSize only applies to topology-aware placement by block",
            size,
            allowed="topology.level: block with topology.mode required or preferred",
            fix="remove blockSize, or set scheduling.topology.level: block",
        )
        return
    if size is not None and not multi:
        slurm.error(
            "blockSize",
            "no multi-node pool to split into blocks",
            size,
            allowed="a pool with multiNode: true",
            fix="remove blockSize, or set multiNode: true on a pool",
        )
        return
    if topo.mode != TopologyMode.NONE and topo.level in (TopologyLevel.BLOCK, TopologyLevel.NVLINK) and multi:
        check_power_saving_blocks(issues, sched, multi)
    if topo.mode != TopologyMode.NONE and topo.level == TopologyLevel.NVLINK and multi:
        warn_empty_blocks(issues, sched, multi)  # level block: documented in docs/slurm.md, no NVLink domain at stake
    if topo.mode == TopologyMode.NONE or topo.level != TopologyLevel.BLOCK:
        return
    for name, i, pool, m in multi:
        block = size or default_block_size(m, pool.max_nodes)
        if not pool.max_nodes % block:
            continue
        if size is not None:
            divisors = [d for d in range(1, pool.max_nodes + 1) if pool.max_nodes % d == 0]
            slurm.error(
                "blockSize",
                f"pool {name}'s maxNodes ({pool.max_nodes}) is not a multiple of the block size: "
                "the last block would be partial",
                size,
                allowed=f"a divisor of {pool.max_nodes}: {allowed_list(map(str, divisors))}",
                fix=f"set blockSize to a divisor of {pool.max_nodes}, or nodePools[{i}].maxNodes to a multiple "
                f"of {size}",
            )
        else:
            per = nodes_per_nvlink_domain(m)
            issues.pool(i, name).error(
                "maxNodes",
                f"{m.machine_type} shares one NVLink domain per {per} nodes, and maxNodes is not a multiple of it",
                pool.max_nodes,
                allowed=f"a multiple of {per}",
                fix=f"set maxNodes to {pool.max_nodes - pool.max_nodes % per or per}",
            )


def _check_sizes(issues: Issues, pools: Iterable[tuple[int, NodePool]], scaling: bool) -> None:
    from stacks.plan.slurm import SLINKY_MAX_NODE_COUNT

    pools = list(pools)
    total = sum(p.max_nodes for _, p in pools)
    if total > SLINKY_MAX_NODE_COUNT:
        issues.error(
            "nodePools",
            "Slinky declares MaxNodeCount=1024 dynamic Slurm nodes, and the pools' maxNodes add up to more",
            total,
            allowed=f"at most {SLINKY_MAX_NODE_COUNT} nodes over all pools",
            fix="lower maxNodes, or split the pools over two clusters",
        )
    for i, p in pools:
        if p.min_nodes < p.max_nodes and not scaling:  # with scaling on, the pool follows the queue
            issues.pool(i, p.name).warn(
                "minNodes",
                f"with workload slurm and slurm.scaling.enabled: false the pool "
                f"runs one slurmd pod per node up to maxNodes ({p.max_nodes}), so it scales "
                "to maxNodes and stays there: cost at max applies",
                p.min_nodes,
                allowed=f"{p.max_nodes} (= maxNodes)",
                fix=f"remove slurm.scaling.enabled: false, or set minNodes: {p.max_nodes} to say so",
            )
