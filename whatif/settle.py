"""The end of a run (``engine.Engine``): what the jobs still running used, each pool's bill settled (scale-down
tails, reservations paid over the whole run) and every job's outcome. Takes the engine as ``Any`` so this module
does not import it (no import circle)."""

from __future__ import annotations

from typing import Any

from whatif.core import DONE, RUNNING
from whatif.model import JobOutcome, SimResult
from whatif.nodes import OFF


def settle(eng: Any, end: float, ended: bool) -> SimResult:
    """``ended``: the run was not cut by ``--horizon-hours`` (every job ran, or can never run, before it): it is
    billed to its end plus the autoscaled nodes' scale-down tails after it, whatever the horizon; a run cut by
    the horizon is billed to the horizon (nodes still up are paid until then, no tail)."""
    for js in eng.jobs:
        if js.state == RUNNING and js.pool is not None:
            used = eng.gpus_held(js) * (end - js.start)
            js.pool.usage.allocated_gpu_s += used
            eng.queue_gpu_s[js.job.queue] = eng.queue_gpu_s.get(js.job.queue, 0.0) + used
    for pool in eng.pools.values():
        tail = 0.0
        if eng.autoscaled and ended:  # the bill runs on until scale-down
            tail = eng.autoscaler.unbilled_tail(pool, end)
        elif eng.power_pools and ended:  # the same under Slurm power saving
            tail = eng.scheduler.unbilled_tail(pool, end)
        pool.settle(end)
        pool.commit(end)  # reserved nodes: paid over the whole run, used or not
        committed = pool.model.committed_nodes  # a tail past the end is billed only above the reservation
        if not committed or sum(1 for n in pool.nodes if n.state != OFF) > committed:
            pool.usage.paid_node_s += tail
    outcomes = {}
    for js in eng.jobs:
        done = js.state == DONE
        outcomes[js.job.id] = JobOutcome(
            id=js.job.id,
            start_s=js.starts[0] if js.starts else None,
            end_s=js.end if done else None,
            starts=tuple(js.starts),
            pool=js.pool.model.name if js.pool is not None else None,
            nodes=js.placed_nodes,
            preemptions=js.preempts,
            never_startable=js.never,
            backfilled=js.backfilled,
            running_s=js.running_at if js.starts and js.running_at >= 0 else None,
        )
    kills = time_limit_kills(eng)
    return SimResult(
        scheduler=eng.cluster.scheduler,
        horizon_s=end,
        jobs=outcomes,
        pools={name: p.usage for name, p in eng.pools.items()},
        samples=eng.samples,
        preemptions=eng.preemptions,
        pods_ready_evictions=len(getattr(eng.scheduler, "ready_evicted", ())),
        queue_gpu_s=dict(eng.queue_gpu_s),
        warnings=list(getattr(eng.scheduler, "warnings", list)()) + eng.block_notes + kill_warnings(kills),
        time_limit_kills=kills,
        cut=eng.cut,
    )


def time_limit_kills(eng: Any) -> dict[str, list[str]]:
    """Jobs that ended at their time limit with work left: the scheduler killed them (Slurm: state TIMEOUT), so they
    did not finish although they count as ended. Keyed by the limit that ended them (a QOS ``MaxWall`` given to a job
    submitted without ``--time``, or the job's own limit)."""
    source = getattr(eng.scheduler, "limit_source", None)
    kills: dict[str, list[str]] = {}
    for js in eng.jobs:
        if js.state == DONE and js.job.limit_s + 1e-6 < js.job.run_s - js.saved_s:
            why = (source(js) if source is not None else None) or "their own time limit"
            kills.setdefault(why, []).append(js.job.id)
    return kills


def kill_warnings(kills: dict[str, list[str]]) -> list[str]:
    out = []
    for why, ids in sorted(kills.items()):
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        fix = "a QOS whose MaxWall covers their run" if "MaxWall" in why else "a time limit that covers their run"
        out.append(
            f"{len(ids)} job(s) killed at {why} before their work was done ({shown}): cut off with work left; "
            f"give them {fix}"
        )
    return out
