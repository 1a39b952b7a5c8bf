"""A job's state under the Slurm model: the engine's ``JobState`` plus Slurm's priority, QOS and queue key."""

from __future__ import annotations

from whatif.core import JobState
from whatif.model import Job
from whatif.nodes import PoolState


class SlurmJob(JobState):
    __slots__ = ("prio", "qos", "key", "pools", "key_shape", "total_cpus")

    def __init__(self, job: Job, n: int):
        super().__init__(job, n)
        self.prio = 0.0
        """Multifactor priority."""
        self.qos: str | None = None
        self.key: tuple = ()
        """Queue order: (-partition tier, -priority, submit, number)."""
        self.pools: list[PoolState] | None = None
        self.key_shape: tuple = ()
        self.total_cpus = 0.0
        """Slurm's ``total_cpus`` while pending: 0 at submission and on requeue (job_mgr.c l.16836), the whole nodes'
        CPUs once a backfill pass has tested it on an exclusive partition (set by ``slurm.backfill``)."""
