"""cross-layer-slurm-block-size: the block sizes of a Slurm block topology (topology.yaml in the slurm chart's values)
fit the pools of its NodeSets: the base size divides each pool's nodes, equals the NVLink domain when one spans nodes,
and each larger size is the previous one times a power of two."""

from __future__ import annotations

from typing import Any, Iterable

import yaml

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog
from policies.findings import Finding, listing
from policies.pools import PoolView, gpu_pools
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL, HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import NodeSet, conf_pairs, is_slurm_release, nodesets, selected_pool
from policies.values import as_dict, as_int, as_list, dig
from stacks.plan.nvlink import nodes_per_nvlink_domain

ID = "cross-layer-slurm-block-size"
ALL_NODESETS = "ALL"
"""The slurm chart's spelling of "every NodeSet" in a partition's ``nodesets``."""


def block_topologies(r: Resource) -> dict[str, list]:
    """Topology name -> its ``block_sizes`` as written, for every block topology of ``configFiles.topology.yaml``."""
    text = dig(r.props, "values", "configFiles", "topology.yaml")
    if not isinstance(text, str):
        return {}
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}  # slurmctld reports a broken file itself
    out = {}
    for entry in as_list(doc):
        entry = as_dict(entry)
        sizes = as_list(as_dict(entry.get("block")).get("block_sizes"))
        if isinstance(entry.get("topology"), str) and sizes:
            out[entry["topology"]] = sizes
    return out


def members(r: Resource, topology: str, sets: list[NodeSet]) -> list[NodeSet]:
    """NodeSets whose nodes are in ``topology``: the NodeSet of that name (gpu-cluster names a pool's block topology
    after the pool) and the NodeSets of every enabled partition whose options say ``Topology=<topology>``."""
    names = {topology}
    for part in as_dict(dig(r.props, "values", "partitions")).values():
        part = as_dict(part)
        if part.get("enabled") is False or conf_pairs(str(part.get("config") or "")).get("topology") != topology:
            continue
        listed = [str(n) for n in as_list(part.get("nodesets"))]
        names |= {n.name for n in sets} if ALL_NODESETS in listed else set(listed)
    return [n for n in sets if n.name in names]


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    pools = {p.name: p for p in gpu_pools(resources, cat)}
    for r in (r for r in resources if is_slurm_release(r)):
        sets = nodesets(r)
        for topology, written in block_topologies(r).items():
            sizes = [as_int(s) for s in written]
            if not all(isinstance(s, int) and s > 0 for s in sizes):
                continue
            users = members(r, topology, sets)
            subject = f"Slurm topology '{topology}'"
            keys = (
                topology,
                *(n.name for n in users),
                *(p for n in users if (p := selected_pool(n.selector))),
                r.name,
                r.urn,
            )
            shown = ", ".join(map(str, sizes))
            for smaller, larger in zip(sizes, sizes[1:]):
                if not _power_of_two_multiple(smaller, larger):
                    yield Finding(
                        subject,
                        f"{larger} is not {smaller} times a power of two, so slurmctld refuses to "
                        f"start (fatal: Invalid BlockSizes value in topology {topology})",
                        observed=f"block_sizes {shown}",
                        required=f"each size the one before times 2, 4, 8 …: e.g. {smaller}, {smaller * 2}, "
                        f"{smaller * 4}",
                        fix="make each block size double (or quadruple …) the one before it (gpu-cluster "
                        f"renders {smaller}, {smaller * 2}, … up to the pool's nodes)",
                        keys=keys,
                        urn=r.urn,
                    )
                    break
            base = sizes[0]
            for ns in users:
                yield from _fits_pool(subject, keys, r, ns, pools.get(selected_pool(ns.selector) or ""), base, cat)


def _fits_pool(
    subject: str, keys: tuple[str, ...], r: Resource, ns: NodeSet, pool: PoolView | None, base: int, cat: Any
) -> Iterable[Finding]:
    if pool is not None and isinstance(pool.max_nodes, int):
        nodes, counted = pool.max_nodes, f"pool '{pool.name}' (its node pool's max nodes)"
    elif isinstance(ns.replicas, int):
        nodes, counted = ns.replicas, f"NodeSet '{ns.name}' (its replicas)"
    else:
        return  # sizes unknown until deploy
    if nodes % base:
        divisors = [d for d in range(1, nodes + 1) if nodes % d == 0]
        yield Finding(
            subject,
            f"the base block size does not divide the nodes of {counted}, so {nodes % base} "
            f"node{'s form' if nodes % base != 1 else ' forms'} a partial block that never fits a job sized "
            "for a full block",
            observed=f"base block size {base} for {nodes} nodes",
            required=f"a base block size that divides {nodes}: {listing(divisors, 12)}",
            fix=f"start block_sizes at a divisor of {nodes} (gpu-cluster: scheduling.slurm.blockSize), or "
            f"make the pool's max nodes a multiple of {base}",
            keys=keys,
            urn=r.urn,
        )
        return
    machine = pool.machine(cat) if pool is not None else None
    if pool is None or machine is None:
        return
    domain = nodes_per_nvlink_domain(machine)
    if domain > 1 and base != domain:
        yield Finding(
            subject,
            f"the base block size is not one NVLink domain of pool '{pool.name}', so blocks "
            f"{'split' if base < domain else 'span several'} NVLink domains",
            observed=f"base block size {base}; {machine.machine_type}: {domain} nodes share one NVLink domain",
            required=f"a base block size of {domain}",
            fix=f"start block_sizes at {domain} (gpu-cluster: remove scheduling.slurm.blockSize; the base "
            "block is then the NVLink domain)",
            keys=keys,
            urn=r.urn,
        )


def _power_of_two_multiple(smaller: int, larger: int) -> bool:
    if larger <= smaller or larger % smaller:
        return False
    ratio = larger // smaller
    return ratio & (ratio - 1) == 0


RULE = register(
    Rule(
        id=ID,
        title="Slurm topology blocks fit the pool",
        category=Category.CROSS_LAYER,
        description="Each Slurm block topology's base block size divides the nodes of its pools (one NVLink domain when "
        "it spans nodes), and each larger size doubles up.",
        why=(
            "Slurm's topology/block expects every block to hold at least the base block size of nodes: when the base "
            "size does not divide a pool's nodes, the remainder forms a partial block that never fits a job sized for a "
            "full block, GPUs paid for and idle for gangs. When an NVLink domain spans several nodes (GB200/GB300 NVL72 "
            "racks), the base block is that domain, or gangs straddle racks. Each larger block size must be the previous "
            "one times a power of two: slurmctld 26.05 refuses to start otherwise (fatal: Invalid BlockSizes value). "
            "The sizes are read from topology.yaml in the slurm release values, the NodeSets "
            "from the same values (the NodeSet named after the topology and those of partitions with Topology=), and "
            "the node counts from the node pool's autoscaling maximum / the node group's scalingConfig.maxSize."
        ),
        remediation=(
            "1. Start block_sizes at a divisor of each pool's max nodes (gpu-cluster: scheduling.slurm.blockSize, "
            "or leave it out: the base block is then the NVLink domain, else the whole compact placement "
            "pool). 2. Or change the pool's maxNodes to a multiple of the base size. 3. Make each larger size "
            "2, 4, 8 … times the previous one."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(HELM_RELEASE, GKE_NODE_POOL, EKS_NODE_GROUP),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3070,
)
