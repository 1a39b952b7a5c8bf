"""Kueue v0.19.2's scheduler table (pkg/scheduler/scheduler_test.go, TestSchedule), ported as data
(tests/whatif/kueue_tables/schedule.yaml): one scheduling cycle of the simulator's Kueue model (``kueue_cycle``
over ``kueue_preempt.choose``) admits, preempts and leaves exactly what Kueue's test expects, case by case. Cases
outside the model are listed with the reason; together they are every case of the Go table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import require_shared
from tests.support.whatif.kueue_schedule import expected, load_schedule_cases, run_schedule_case

CASES, OUT_OF_SCOPE, DOC = load_schedule_cases()
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_one_cycle_of_the_model_does_what_kueues_scheduler_test_expects(case):
    assert run_schedule_case(case) == expected(case), f"{case.source} {case.test}: {case.name!r}"


def test_every_case_of_the_go_table_is_ported_or_listed_out_of_scope_with_a_reason():
    go = require_shared("upstream", "kueue-v0.19.2", "pkg", "scheduler", "scheduler_test.go").read_text()
    body = go[go.index("func TestSchedule(") : go.index("func TestEntryOrdering(")]
    names = re.findall(r'^\t\t"([^"]+)": \{$', body, flags=re.M)
    ours = [c.name for c in CASES] + [o["name"] for o in OUT_OF_SCOPE]
    assert sorted(ours) == sorted(names)
    assert all(o["reason"] for o in OUT_OF_SCOPE)
    assert len(CASES) >= 25


def test_the_docs_report_the_schedule_table_counts():
    doc = (ROOT / "docs" / "contributing" / "whatif-validation.md").read_text(encoding="utf-8")
    n, left = len(CASES), len(OUT_OF_SCOPE)
    assert f"`TestSchedule` | {n + left} | {n} | **{n}** | {left} |" in doc
    overview = (ROOT / "docs" / "whatif.md").read_text(encoding="utf-8")
    assert f"scheduler_test.go` `TestSchedule`: **{n} of {n} in-scope cases agree**, {left} out of scope" in overview
