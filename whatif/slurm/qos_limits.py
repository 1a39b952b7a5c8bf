"""A QOS's limits as slurmctld enforces them (``slurm.qosLimits``, rendered with ``DenyOnLimit``; Slurm 26.05
src/slurmctld/acct_policy.c): a job that can never meet one is refused at submission (``MaxWall`` under its time
limit, more GPUs than ``MaxTRESPerUser`` or ``GrpTRES`` alone); a job that would take its user or its QOS over the
GPU limit with what already runs waits (``QOSMaxGRESPerUser`` / ``QOSGrpGRES``) without blocking its partition,
like an account's GrpTRES."""

from __future__ import annotations

from dataclasses import replace

from whatif.model import Job

Limits = dict[str, tuple[float | None, int | None, int | None]]


def _user(job: Job) -> str:
    return job.user if job.user is not None else f"job:{job.id}"  # no user named: a user of its own


class QosLimits:
    def __init__(self, limits: Limits):
        self.limits = limits
        self.by_qos: dict[str, float] = {}
        self.by_user: dict[tuple[str, str], float] = {}

    def refusal(self, job: Job, qos: str | None) -> str | None:
        """Why slurmctld refuses the job at submission (DenyOnLimit), or None."""
        wall, per_user, grp = self.limits.get(qos or "", (None, None, None))
        if wall is not None and job.time_limit_s is not None and job.time_limit_s > wall:
            return (
                f"time limit {job.time_limit_s / 60:g} min over QOS {qos}'s MaxWall {wall / 60:g} min "
                "(DenyOnLimit: refused at submission)"
            )
        for limit, name in ((per_user, "MaxTRESPerUser"), (grp, "GrpTRES")):
            if limit is not None and job.gpus > limit:
                return (
                    f"{job.gpus:g} GPUs over QOS {qos}'s {name} gres/gpu={limit} (DenyOnLimit: refused at submission)"
                )
        return None

    def with_time_limit(self, job: Job, qos: str | None) -> Job:
        """A job submitted without a time limit gets its QOS's MaxWall as its limit (``_set_time_limit``,
        acct_policy.c l.1219-1235): backfill plans with it and the job is killed at it."""
        wall = self.limits.get(qos or "", (None, None, None))[0]
        if wall is None or job.time_limit_s is not None:
            return job
        return replace(job, time_limit_s=wall)

    def over(self, job: Job, qos: str | None, gpus: float) -> bool:
        """Would ``gpus`` more GPUs take the job's user or its QOS over a GPU limit?"""
        _, per_user, grp = self.limits.get(qos or "", (None, None, None))
        q = qos or ""
        if grp is not None and self.by_qos.get(q, 0.0) + gpus > grp + 1e-9:
            return True
        return per_user is not None and self.by_user.get((q, _user(job)), 0.0) + gpus > per_user + 1e-9

    def account(self, job: Job, qos: str | None, gpus: float) -> None:
        """Add (or, negative, remove) the GPUs a running job holds."""
        q = qos or ""
        if q not in self.limits:
            return
        self.by_qos[q] = self.by_qos.get(q, 0.0) + gpus
        key = (q, _user(job))
        self.by_user[key] = self.by_user.get(key, 0.0) + gpus
