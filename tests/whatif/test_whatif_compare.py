"""The pure parts of the real-Slurm validation (no daemons): how jobs become ``sbatch`` arguments, which nodes and
blocks the harness starts, and how the comparison judges order and lag (so a disagreement cannot slip through)."""

from __future__ import annotations

from tests.support.slurm.cluster import chart_values, plan_nodes
from tests.support.slurm.jobs import ScenarioJob
from tests.support.whatif.compare import Comparison, Row, plan_of, tolerance_s
from tests.support.whatif.scenarios import BACKFILL, BLOCKS, FIFO, SCENARIOS, WIDE


def _row(job: str, real: float | None, sim: float | None) -> Row:
    return Row(job, 0.0, real, sim, "", "", 0, 0, None, None)


def _comparison(*rows: Row, tol: float = 2.0, scenario=BACKFILL) -> Comparison:
    return Comparison(scenario, rows, tol, {r.job: 0 for r in rows}, {r.job: 8 for r in rows}, 16)


def test_time_limits_round_up_to_whole_minutes_as_slurm_keeps_them():
    job = ScenarioJob("j", 0, "team", 8, run_s=5, nodes=2, time_limit_s=61, priority="high", pool="h100")
    args = job.sbatch_args(accounting=True)
    assert "--time=2" in args and "-N" in args and "--gres=gpu:8" in args
    assert args[args.index("-A") + 1] == "team" and args[args.index("--qos") + 1] == "high"
    assert "-A" not in ScenarioJob("j", 0, "team", 8, run_s=5).sbatch_args(accounting=False)
    assert "--time=1" in ScenarioJob("j", 0, "team", 8, run_s=5, time_limit_s=30).sbatch_args(False)


def test_nodes_join_the_blocks_in_ordinal_order():
    nodes = plan_nodes(chart_values(plan_of(BLOCKS), "blocks"))
    assert [n.name for n in nodes] == ["h100-0", "h100-1", "h100-2", "h100-3"]
    assert [n.conf.split("Topology=")[1] for n in nodes] == [
        "h100:h100-b0",
        "h100:h100-b0",
        "h100:h100-b1",
        "h100:h100-b1",
    ]
    assert all("Gres=gpu:h100:8" in n.conf and "Features=h100" in n.conf for n in nodes)


def test_the_fifo_arm_replaces_only_the_scheduler_type():
    fifo, backfill = plan_of(FIFO).directives, plan_of(BACKFILL).directives
    assert fifo["SchedulerType"] == "sched/builtin" and backfill["SchedulerType"] == "sched/backfill"
    assert {k: v for k, v in fifo.items() if k != "SchedulerType"} == {
        k: v for k, v in backfill.items() if k != "SchedulerType"
    }


def test_tolerance_is_the_schedulers_own_interval():
    assert tolerance_s(BACKFILL) == 2.0  # bf_interval 1 s + 1 s
    assert tolerance_s(FIFO) == 4.0  # batch_sched_delay 3 s + 1 s


def test_a_swapped_pair_is_a_different_order():
    c = _comparison(_row("A", 0.2, 0.0), _row("B", 5.0, 6.0), _row("C", 4.0, 8.0))
    assert c.order_pairs() == (3, ["B/C"])
    assert not c.same_order and not c.agrees


def test_one_pass_in_the_simulator_may_spread_over_the_tolerance_in_reality():
    ok = _comparison(_row("A", 0.2, 0.0), _row("B", 1.9, 0.0))
    assert ok.order_pairs() == (1, []) and ok.order("sim") == [["A", "B"]] and ok.order("real") == [["A"], ["B"]]
    late = _comparison(_row("A", 0.2, 0.0), _row("B", 2.5, 0.0))
    assert late.order_pairs() == (1, ["A/B"])


def test_a_pair_reality_starts_in_one_pass_has_no_order_to_disagree_with():
    # partition-prio under load: real A1 at 1.12 s, A2 at 1.09 s (one slurmctld pass); the simulator 1 s apart
    one_pass = _comparison(_row("A1", 1.12, 0.0), _row("A2", 1.09, 1.0))
    assert one_pass.order_pairs() == (1, [])
    swapped = _comparison(_row("A1", 1.70, 0.0), _row("A2", 1.09, 1.0))  # 0.61 s apart: two passes, swapped
    assert swapped.order_pairs() == (1, ["A1/A2"])


def test_allowed_lag_grows_with_each_scheduling_step_and_a_missing_start_disagrees():
    c = _comparison(_row("A", 0.5, 0.0), _row("B", 5.9, 2.0), _row("C", 11.0, 4.0))
    assert [c.allowed_s(r) for r in c.rows] == [2.0, 4.0, 6.0]
    assert c.within_tolerance == 2 and c.same_order and not c.agrees  # C lags 7 s, more than its 3 steps allow
    never = _comparison(_row("A", 0.5, 0.0), _row("B", None, 2.0))
    assert not never.same_order


def test_every_scenario_renders_a_valid_plan():
    for s in SCENARIOS:
        plan = plan_of(s)
        assert plan.nodesets and plan.accounting == s.config["gpu-cluster:scheduling"]["slurm"]["accounting"]


def test_a_requeued_jobs_restart_must_match_the_real_eligible_time():
    row = Row("L", 0.0, 0.2, 0.0, "", "", 1, 1, 125.7, 124.5)
    assert _comparison(row).restart_allowed_s(row) == 5.0  # the step after its own start (2 x 2 s) + 1 s rounding
    assert _comparison(row).restarts_agree
    assert not _comparison(Row("L", 0.0, 0.2, 0.0, "", "", 1, 1, 125.7, 3.5)).restarts_agree  # restarted at once
    assert not _comparison(Row("L", 0.0, 0.2, 0.0, "", "", 1, 1, 125.7, 131.0)).restarts_agree  # 5.3 s late


def test_a_restart_inherits_the_lag_of_the_start_that_preempted_it():
    # CI under load: H started 2.46 s later in the simulator than in reality, so L1's requeue delay began later too
    victim = Row("L1", 0.0, 0.5, 0.0, "", "", 1, 1, 122.44, 125.5)
    rows = (
        victim,
        Row("L2", 0.3, 0.5, 0.3, "", "", 0, 0, None, None),
        Row("H", 1.5, 2.04, 4.5, "", "", 0, 0, None, None),
    )
    c = _comparison(*rows)
    assert c.restart_allowed_s(victim) == 7.0 and c.restarts_agree  # groups [L1 L2], [H] before it: 3 steps + 1 s
    late = (Row("L1", 0.0, 0.5, 0.0, "", "", 1, 1, 122.44, 130.0),) + rows[1:]
    assert not _comparison(*late).restarts_agree


def _wide_row(job: str, real: float, sim: float, run: float = 10.0) -> Row:
    return Row(job, 0.0, real, sim, "", "", 0, 0, None, None, real + run, sim + run)


def test_many_job_scenarios_are_judged_on_order_lag_utilization_and_mean_wait():
    ok = _comparison(
        _wide_row("A", 1.0, 0.0), _wide_row("B", 12.0, 10.0), _wide_row("C", 45.0, 40.0), tol=31.0, scenario=WIDE
    )
    assert ok.wide_order(31.0) == (1, []) and not ok.wide_late
    (ru, rw), (su, sw) = ok.aggregates("real"), ok.aggregates("sim")
    assert (round(rw, 3), round(sw, 3)) == (round(58 / 3, 3), round(50 / 3, 3))
    assert (round(ru, 4), round(su, 4)) == (round(3 * 10 * 8 / (16 * 55), 4), round(3 * 10 * 8 / (16 * 50), 4))
    assert ok.agrees  # Δ utilization 3.0 pts, mean wait 13.8 %
    swapped = _comparison(
        _wide_row("A", 1.0, 0.0), _wide_row("B", 80.0, 10.0), _wide_row("C", 45.0, 50.0), tol=31.0, scenario=WIDE
    )
    assert swapped.wide_order(31.0) == (2, ["B/C"])  # A/B are within one backfill cycle: not judged
    assert not swapped.agrees
    slow = _comparison(
        _wide_row("A", 1.0, 0.0), _wide_row("B", 12.0, 10.0), _wide_row("C", 60.0, 40.0), tol=31.0, scenario=WIDE
    )
    assert not slow.wide_late and not slow.agrees  # C's lag is allowed, but the mean wait is 28 % off
