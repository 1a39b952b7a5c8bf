"""Jobs that can never start on a stack, and why, found before the run (they are named up front in every output)."""

from __future__ import annotations

from whatif.cluster import ClusterModel, PoolModel, QueueModel, slices_for
from whatif.model import Job


def candidate_pools(cluster: ClusterModel, job: Job) -> list[PoolModel]:
    """Pools a job may run on: the Slurm partition's pools, or the Kueue queue's flavors (in quota order)."""
    if cluster.slurm is not None:
        part = cluster.slurm.partition(job.pool)
        names = list(part.pools) if part else []  # a pool's own partition, or a partition by name
    else:
        quotas = cluster.queues[job.queue].quotas
        names = [job.pool] if job.pool else list(quotas)
        names = [n for n in names if n in quotas]
    return [cluster.pools[n] for n in names if n in cluster.pools]


def fitting_pools(cluster: ClusterModel, job: Job) -> list[PoolModel]:
    """The candidate pools the job fits (GPUs per node, nodes, topology, quota): where it can ever start."""
    queue = cluster.queues[job.queue]
    return [p for p in candidate_pools(cluster, job) if _why_not(cluster, queue, p, job) is None]


def never_startable(cluster: ClusterModel, job: Job) -> str | None:
    pools = candidate_pools(cluster, job)
    if not pools:
        where = f"pool {job.pool}" if job.pool else "any pool"
        return f"queue {job.queue} has no quota or partition on {where}"
    reasons = [_why_not(cluster, cluster.queues[job.queue], p, job) for p in pools]
    if all(reasons):
        return "; ".join(f"{p.name}: {r}" for p, r in zip(pools, reasons))
    return None


def _why_not(cluster: ClusterModel, queue: QueueModel, pool: PoolModel, job: Job) -> str | None:
    slices = slices_for(pool, job.gpus_per_node, job.gpu_share)
    if slices > pool.slices_per_node:
        return f"{job.gpus_per_node} GPUs per node > {pool.gpus_per_node} per node"
    if job.nodes > pool.max_nodes:
        return f"{job.nodes} nodes > maxNodes {pool.max_nodes}"
    if pool.block_required and pool.block_nodes and job.nodes > pool.block_nodes and cluster.slurm is None:
        if not pool.spans_blocks:
            return f"{job.nodes} nodes > {pool.block_nodes} per topology block (placement required)"
        if job.nodes % pool.block_nodes:  # the block runtime places whole blocks (slices of one NVLink domain)
            return (
                f"{job.nodes} nodes: a gang of several topology blocks is placed in whole blocks of "
                f"{pool.block_nodes} (placement required)"
            )
    per_node = pool.slices_per_node if pool.exclusive else slices
    total = per_node * job.nodes
    if cluster.slurm is not None:
        cap = cluster.slurm.gpu_caps.get(job.queue, {}).get(pool.gpu_type)
        gpus = total / pool.slices_per_gpu
        if cap is not None and gpus > cap:
            return f"{gpus:g} GPUs > account {job.queue} GrpTRES gres/gpu:{pool.gpu_type}={cap}"
        return None
    quota = queue.quotas.get(pool.name)
    if quota is None:
        return "no quota"
    reach = quota.nominal + borrowable(cluster, queue, pool.name, quota.borrowing_limit)
    if total > reach:
        return f"needs {total} of nvidia.com/gpu, quota reaches {reach}"
    return None


def borrowable(cluster: ClusterModel, queue: QueueModel, pool: str, limit: int | None) -> int:
    """Most a queue can borrow in a pool: what the others in the cohort lend, capped by its borrowingLimit."""
    if cluster.kueue is None or cluster.kueue.cohort is None:
        return 0
    lent = 0
    for other in cluster.queues.values():
        if other.name != queue.name and pool in other.quotas:
            q = other.quotas[pool]
            lent += q.nominal if q.lending_limit is None else min(q.lending_limit, q.nominal)
    return lent if limit is None else min(limit, lent)
