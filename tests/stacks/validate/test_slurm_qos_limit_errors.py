"""QOS limits (``slurm.qosLimits``) that Slurm could not apply are refused with the message a user reads, all at once:
a limit on a class that is no priority class (no such QOS), limits without accounting (slurmdbd holds them), and
values out of range."""

from __future__ import annotations

import copy

from stacks.validate.load import load_spec
from tests.support.spec.cases import errors_of
from tests.support.spec.edit import edits
from tests.support.spec.slurm_baseline import BASE


def test_qos_limits_on_a_priority_class_are_accepted_and_planned():
    cfg = edits(BASE, {("scheduling", "slurm", "qosLimits"): {"low": {"maxWallMinutes": 60, "maxGpusPerUser": 8}}})
    spec, warnings = load_spec(copy.deepcopy(cfg))
    lim = spec.scheduling.slurm.qos_limits["low"]
    assert (lim.max_wall_minutes, lim.max_gpus_per_user, lim.grp_gpus) == (60, 8, None) and warnings == []


def test_every_bad_qos_limit_is_reported_at_once_with_path_value_and_fix():
    cfg = edits(
        BASE,
        {
            ("scheduling", "slurm", "qosLimits"): {"lw": {"grpGpus": 16}, "high": {"maxWallMinutes": 0}},
            ("scheduling", "slurm", "accounting"): False,
            ("scheduling", "slurm", "priorityWeights"): {"fairShare": 0, "age": 0},
        },
    )
    errors = errors_of(cfg)
    assert any(
        e.startswith("error: gpu-cluster:scheduling.slurm.qosLimits.high.maxWallMinutes") and "received: 0" in e
        for e in errors
    ), errors
    if len(errors) == 1:  # the shape error stops the spec before the cross-field rules: check those alone
        cfg["scheduling"]["slurm"]["qosLimits"]["high"]["maxWallMinutes"] = 60
        errors = errors_of(cfg)
    unknown = next(e for e in errors if "qosLimits.lw" in e)
    assert "not a priority class" in unknown and "received: 'lw'" in unknown and "did you mean 'low'?" in unknown
    no_dbd = next(e for e in errors if e.startswith("error: gpu-cluster:scheduling.slurm.accounting"))
    assert "QOS limits live in slurmdbd" in no_dbd and "fix:      set accounting: true, or remove" in no_dbd


def test_a_maxwall_longer_than_the_backfill_window_is_a_warning_naming_the_fix():
    cfg = edits(
        BASE,
        {
            ("scheduling", "slurm", "qosLimits"): {"low": {"maxWallMinutes": 4320}},
            ("scheduling", "slurm", "backfill"): {"windowMinutes": 2880},
        },
    )
    _, warnings = load_spec(cfg)
    (w,) = warnings
    assert w.path == "gpu-cluster:scheduling.slurm.qosLimits.low.maxWallMinutes"
    assert "raise backfill.windowMinutes to 4320" in str(w)
