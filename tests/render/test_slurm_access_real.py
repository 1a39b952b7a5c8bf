"""What a user who is not an operator sees and may do on the rendered Slurm config, checked by a real slurmctld
26.05 (the Slinky operator's merged slurm.conf, ``tests/support/slurm/slinky_emulation.py``):

- ``PrivateData``: an ordinary user (``nobody``) sees no other user's jobs (``squeue``, ``scontrol show job``) but
  still sees the partitions (``sinfo``); root (as SlurmUser and operators) sees everything;
- per-user JWTs: ``scontrol token`` gives the user a token for slurmrestd up to ``tokens.maxLifespanMinutes`` and
  refuses one second more; the operator's ``jwt_key`` survives next to our ``max_token_lifespan`` (Slinky merges
  the two ``AuthAltParameters`` lines; slurmctld uses the last).
"""

from __future__ import annotations

import re

import pytest

from stacks.plan.slurm import PRIVATE_DATA
from tests.render.test_slurm_real import CONFIGS, _bad_log_lines, _plan_and_values, chroot, slurm_key  # noqa: F401
from tests.support.spec.edit import edit
from tests.support.slurm.real import SlurmController

LIFESPAN_MINUTES = 30


@pytest.fixture(scope="module")
def controller(chroot, slurm_key):
    config = edit(CONFIGS["gke-no-accounting"], "scheduling.slurm.access.tokens.maxLifespanMinutes", LIFESPAN_MINUTES)
    plan, values = _plan_and_values(config)
    ctl = SlurmController(chroot, values, slurm_key, None)
    yield plan, ctl
    ctl.stop()


def _as_nobody(ctl: SlurmController, *args: str):
    return ctl.chroot.run(["runuser", "-u", "nobody", "--", *args], conf=ctl.conf)


def test_slurmctld_loads_private_data_and_the_merged_token_parameters(controller):
    plan, ctl = controller
    assert _bad_log_lines(ctl.log()) == []
    shown = dict(re.findall(r"^(\w+)\s+= (.*)$", ctl.run("scontrol", "show", "config").stdout, re.M))
    assert shown["PrivateData"] == PRIVATE_DATA == plan.directives["PrivateData"]
    options = shown["AuthAltParameters"].split(",")
    assert f"max_token_lifespan={LIFESPAN_MINUTES * 60}" in options
    assert any(o.startswith("jwt_key=") for o in options), options  # the operator's key is still configured


def test_a_user_sees_no_other_users_jobs_but_the_partitions(controller):
    plan, ctl = controller
    submitted = ctl.run("sbatch", "--hold", "-p", plan.nodesets[0].pool, "--wrap", "true")
    assert submitted.returncode == 0, submitted.stderr
    job = submitted.stdout.split()[-1]
    assert job in ctl.run("squeue", "-h", "-o", "%i").stdout.split()  # root sees it
    mine = _as_nobody(ctl, "squeue", "-h", "-o", "%i")
    assert mine.returncode == 0 and mine.stdout.split() == [], mine.stdout
    assert "No jobs in the system" in _as_nobody(ctl, "scontrol", "show", "job").stdout
    parts = _as_nobody(ctl, "sinfo", "-h", "-o", "%P").stdout.split()
    assert {p.rstrip("*") for p in parts} == {p.name for p in plan.partitions}


def test_a_user_gets_a_token_up_to_the_configured_lifespan_and_not_longer(controller):
    _, ctl = controller
    ok = _as_nobody(ctl, "scontrol", "token", f"lifespan={LIFESPAN_MINUTES * 60}")
    assert ok.returncode == 0 and ok.stdout.startswith("SLURM_JWT=ey"), ok.stderr
    too_long = _as_nobody(ctl, "scontrol", "token", f"lifespan={LIFESPAN_MINUTES * 60 + 1}")
    assert too_long.returncode != 0 and "Requested time limit is invalid" in too_long.stderr
    other = _as_nobody(ctl, "scontrol", "token", "username=root", "lifespan=60")
    assert other.returncode != 0, "a user must not get a token for someone else"
