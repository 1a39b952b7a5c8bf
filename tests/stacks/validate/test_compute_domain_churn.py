"""A team's shared ComputeDomain is said plainly: it changes members under running jobs (upstream advises one per
job), a per-job domain printed by job-objects sits next to it in one clique, and Slurm power saving on a paid-for
capacity block only adds that churn."""

from __future__ import annotations

import copy

from preview.__main__ import main
from preview.engine import PROJECT_ROOT, read_stack_file
from tests.support.spec.cases import issues_of
from tests.support.spec.edit import edit


def _stack(name: str) -> dict:
    flat = read_stack_file(PROJECT_ROOT / f"Pulumi.{name}.yaml")
    return {k.removeprefix("gpu-cluster:"): v for k, v in flat.items() if k.startswith("gpu-cluster:")}


P6E, A4X = _stack("eks-p6e-gb200"), _stack("gke-a4x-nvl72")


def _warnings(cfg: dict, field: str) -> list[str]:
    return [str(i) for i in issues_of(copy.deepcopy(cfg)) if i.warning and str(i).startswith(f"warning: {field}")]


def test_a_shared_compute_domain_is_warned_to_move_under_running_jobs():
    for cfg, who in ((P6E, "the slurmd pods of every Slurm job"), (A4X, "every job of the team")):
        (warning,) = [w for w in _warnings(cfg, "gpu-cluster:nodePools[0].multiNode") if "gb200-imex is shared" in w]
        assert f"the team's ComputeDomain gb200-imex is shared by {who}" in warning
        assert "adds and removes nodes under running jobs" in warning
        assert "dra-driver-nvidia-gpu#1245, #1418" in warning
        assert "recommend one ComputeDomain per job" in warning and "job-objects" in warning


def test_slurm_power_saving_on_a_capacity_block_is_warned_as_churn_that_saves_nothing():
    (warning,) = _warnings(P6E, "gpu-cluster:nodePools[0].minNodes")
    assert "Slurm power saving deletes and recreates the pool's slurmd pods on a capacity block" in warning
    assert "paid for its whole window anyway" in warning and "set minNodes: 18" in warning
    assert _warnings(edit(P6E, "nodePools[0].minNodes", 18), "gpu-cluster:nodePools[0].minNodes") == []
    off = edit(P6E, "scheduling.slurm.scaling.enabled", False)
    assert not [w for w in _warnings(off, "gpu-cluster:nodePools[0].minNodes") if "power saving" in w]
    assert not [w for w in _warnings(A4X, "gpu-cluster:nodePools[0].minNodes") if "power saving" in w]


def test_job_objects_warn_that_the_jobs_domain_sits_next_to_the_teams_shared_one(capsys):
    assert main(["job-objects", "--stack", "gke-a4x-nvl72", "--job", "llama", "--nodes", "18"]) == 0
    out = capsys.readouterr()
    assert "kind: ComputeDomain" in out.out
    assert out.err.startswith(
        "warning: --job llama: its ComputeDomain llama-imex runs on pool gb200 next to the team's shared "
        "ComputeDomain gb200-imex in namespace pretraining"
    )
    assert "dra-driver-nvidia-gpu#892" in out.err and "fix:" in out.err
