"""The Slurm section of the preview (``workload: slurm``): what the rendered Slurm cluster will hold, as plain data
(JSON key ``slurm``): partitions, NodeSets with their GRES, topology blocks, QOS, accounts and priority weights."""

from __future__ import annotations

from typing import Any

from stacks.plan.slurm import ALL_NODESETS, SlurmPlan


def slurm_summary(plan: SlurmPlan | None) -> dict[str, Any] | None:
    """``plan``: the stack's Slurm plan (``StackPlan.slurm``), None unless ``workload: slurm``."""
    if plan is None:
        return None
    nodes = {n.pool: n for n in plan.nodesets}
    d = plan.directives
    partitions = []
    for p in plan.partitions:
        members = list(nodes) if p.nodesets == (ALL_NODESETS,) else list(p.nodesets)
        partitions.append(
            {
                "name": p.name,
                "nodeSets": members,
                "nodes": sum(nodes[m].replicas for m in members),
                "gpus": sum(nodes[m].max_gpus for m in members),
                "default": p.options["Default"] == "YES",
                "priorityTier": int(p.options["PriorityTier"]),
                "topology": p.options.get("Topology"),
                "exclusive": p.options.get("OverSubscribe") == "EXCLUSIVE",
            }
        )
    return {
        "accounting": plan.accounting,
        "scheduler": f"{d['SchedulerType']} ({d['SchedulerParameters']})",
        "preemptType": d["PreemptType"],
        "preemptMode": d["PreemptMode"],
        "priorityWeights": {
            "fairShare": int(d.get("PriorityWeightFairshare", 0)),
            "age": int(d.get("PriorityWeightAge", 0)),
            "jobSize": int(d["PriorityWeightJobSize"]),
            "qos": int(d["PriorityWeightQOS"]),
        },
        "partitions": partitions,
        "nodeSets": [
            {
                "pool": n.pool,
                "nodes": n.replicas,
                "nodeNames": n.node_names,
                "gres": n.gres,
                "cpus": n.cpus,
                "realMemoryMib": n.real_memory_mib,
                "scales": n.scales,
                "minNodes": n.pods_at_deploy,
            }
            for n in plan.nodesets
        ],
        "scaling": {
            "pools": [p for p, _, _ in plan.scaling.pools],
            "idleSeconds": plan.scaling.idle_seconds,
            "resumeTimeoutSeconds": plan.scaling.resume_timeout_seconds,
        }
        if plan.scaling.pools
        else None,
        "blocks": [
            {"topology": b.name, "blockSize": b.block_size, "blocks": list(b.blocks), "blockSizes": list(b.sizes)}
            for b in plan.topology.blocks
        ],
        "tree": {
            "topology": plan.topology.tree.name,
            "zones": {z: list(v) for z, v in plan.topology.tree.zones.items()},
        }
        if plan.topology.tree
        else None,
        "qos": [
            {
                "name": q.name,
                "priority": q.priority,
                "preempts": list(q.preempts),
                **({"limits": _qos_limits(q)} if q.limited else {}),  # only a limited QOS: the others stay as they were
            }
            for q in plan.qos
        ],
        "accounts": [
            {
                "name": a.name,
                "fairshare": a.fairshare,
                "qos": list(a.qos),
                "defaultQos": a.default_qos,
                "grpTres": a.grp_tres,
            }
            for a in plan.accounts
        ],
    }


def _qos_limits(q: Any) -> dict[str, int]:
    """The QOS limits the sacctmgr script sets (``slurm.qosLimits``), by their spec names; unset ones left out."""
    named = {"maxWallMinutes": q.max_wall_minutes, "maxGpusPerUser": q.max_gpus_per_user, "grpGpus": q.grp_gpus}
    return {k: v for k, v in named.items() if v is not None}
