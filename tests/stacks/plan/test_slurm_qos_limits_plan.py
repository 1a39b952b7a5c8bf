"""QOS limits from ``slurm.qosLimits`` reach the ``sacctmgr`` script the stack runs after deploy: set on a limited
QOS with ``DenyOnLimit``, cleared (-1) on the others so that removing a limit from the stack removes it in slurmdbd."""

from __future__ import annotations

from stacks.plan.slurm_accounts import plan_qos, sacctmgr_script
from stacks.validate.load import load_spec
from tests.support.spec.edit import edits
from tests.support.spec.slurm_baseline import BASE


def test_the_qos_script_sets_the_declared_limits_and_clears_the_others():
    cfg = edits(
        BASE,
        {("scheduling", "slurm", "qosLimits"): {"low": {"maxWallMinutes": 720, "maxGpusPerUser": 16, "grpGpus": 24}}},
    )
    spec, _ = load_spec(cfg)
    qos = {q.name: q for q in plan_qos(spec.scheduling)}
    script = sacctmgr_script("c", list(qos.values()), [], [])
    low = next(ln for ln in script.splitlines() if "modify qos where name=low" in ln)
    high = next(ln for ln in script.splitlines() if "modify qos where name=high" in ln)
    assert "maxwall=720 maxtresperuser=gres/gpu=16 grptres=gres/gpu=24 flags+=DenyOnLimit" in low
    assert "maxwall=-1 maxtresperuser=gres/gpu=-1 grptres=gres/gpu=-1 flags-=DenyOnLimit" in high
