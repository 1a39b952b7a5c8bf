"""Kueue v0.19.2's own preemption tables (classical and fair sharing), ported as data, agree with the simulator's
Kueue model case by case; cases outside the model (hierarchical cohorts, several resources per flavor, ...) are listed
with the reason in the YAML and counted in docs/contributing/whatif-validation.md."""

from __future__ import annotations

import pytest

from tests.support.whatif.kueue_tables import load_cases, run_case

CASES, OUT_OF_SCOPE = load_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_simulator_picks_the_victims_kueue_picks(case):
    assert run_case(case) == sorted(case.body["want"]), f"{case.source} {case.test}: {case.name!r}"


def test_the_tables_cover_both_preemption_modes_and_name_what_is_left_out():
    assert sum(c.fair_sharing for c in CASES) >= 20 and sum(not c.fair_sharing for c in CASES) >= 10
    assert all(o["reason"] for o in OUT_OF_SCOPE)


def test_the_validation_doc_reports_the_counts_the_tables_have():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "contributing" / "whatif-validation.md").read_text(
        encoding="utf-8"
    )
    for test in ("TestPreemption", "TestFairPreemptions"):
        ported = sum(c.test == test for c in CASES)
        left = sum(o["test"] == test for o in OUT_OF_SCOPE)
        assert f"`{test}` | {ported + left} | {ported} | **{ported}** | {left} |" in doc, test
    assert f"**Every in-scope case agrees ({len(CASES)} of {len(CASES)}).**" in doc
    overview = (Path(__file__).resolve().parents[3] / "docs" / "whatif.md").read_text(encoding="utf-8")
    assert f"**{len(CASES)} of {len(CASES)} in-scope cases agree**, {len(OUT_OF_SCOPE)} out of scope" in overview
