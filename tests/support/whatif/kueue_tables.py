"""Kueue's own preemption test tables, ported as data (tests/whatif/kueue_tables/*.yaml), run through the
simulator's Kueue model: each case becomes a cohort snapshot (``whatif.kueue.cohort``) and the preemptor
(``whatif.kueue.preempt.targets``) names the victims, compared with what Kueue v0.19.2's test expects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from whatif.cluster import KueueModel, QueueModel, QuotaModel
from whatif.kueue.cohort import Admitted, CohortView, Incoming, QueueView
from whatif.kueue.preempt import targets

TABLES = Path(__file__).resolve().parents[2] / "whatif" / "kueue_tables"
SCALE = 1000
"""Kueue's tables use fractional CPUs (0.5, 2.5): milli-CPUs keep the quantities whole."""


@dataclass(frozen=True)
class Case:
    file: str
    source: str
    test: str
    name: str
    body: dict[str, Any]
    fair_sharing: bool
    queue_sets: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"


def _units(v: float) -> int:
    return round(float(v) * SCALE)


def load_cases() -> tuple[list[Case], list[dict[str, str]]]:
    cases, out = [], []
    for path in sorted(TABLES.glob("preemption_*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for c in doc["cases"]:
            cases.append(
                Case(
                    path.name,
                    doc["source"],
                    doc["test"],
                    c["name"],
                    c,
                    doc.get("fairSharing", False),
                    doc.get("queueSets", {}),
                )
            )
        out += [{"file": doc["source"], "test": doc["test"], **o} for o in doc.get("outOfScope", [])]
    return cases, out


def _queue(q: dict[str, Any]) -> QueueModel:
    bwc = q.get("borrowWithinCohort") or {}
    quotas = {
        f: QuotaModel(
            _units(v),
            None if q.get("borrowingLimit", {}).get(f) is None else _units(q["borrowingLimit"][f]),
            None if q.get("lendingLimit", {}).get(f) is None else _units(q["lendingLimit"][f]),
        )
        for f, v in q["quotas"].items()
    }
    return QueueModel(
        q["name"],
        q.get("weight", 1),
        quotas,
        strict_fifo=q.get("strictFifo", False),
        within_queue=q.get("within", "Never"),
        reclaim=q.get("reclaim", "Never"),
        borrow_within_cohort=bwc.get("policy", "Never"),
        borrow_threshold=bwc.get("maxPriorityThreshold"),
    )


def run_case(case: Case) -> list[str]:
    """The victims the simulator's Kueue model picks for the case's incoming workload, by name."""
    b = case.body
    specs = b["queues"] if isinstance(b["queues"], list) else case.queue_sets[b["queues"]]
    target = next(q for q in specs if q["name"] == b["incoming"]["cq"])
    specs = [q for q in specs if q.get("cohort") == target.get("cohort") and (q.get("cohort") or q is target)]
    cohorts = {q.get("cohort") for q in specs}
    assert len(cohorts) == 1, f"{case.id}: one flat cohort (or none) per case"
    strategies = tuple(b.get("strategies") or KueueModel.strategies)
    kueue = KueueModel(cohort=cohorts.pop(), fair_sharing=case.fair_sharing, gang_timeout_s=None, strategies=strategies)
    queues = {q["name"]: QueueView(_queue(q)) for q in specs}
    view = CohortView(kueue, queues, cohort_quota={f: _units(v) for f, v in (b.get("cohortQuota") or {}).items()})
    order = sorted(w["name"] for w in b["admitted"])
    for w in b["admitted"]:
        queues[w["cq"]].add(
            Admitted(
                w["name"],
                w["cq"],
                w.get("flavor", b.get("flavor", "default")),
                _units(w["cpu"]),
                w.get("priority", 0),
                w.get("createdAt", 0.0),
                w.get("admittedAt", 0.0),
                order.index(w["name"]),
                w.get("evicted", False),
            )
        )
    inc = b["incoming"]
    flavor = b.get("flavor", "default")
    incoming = Incoming(inc["cq"], inc.get("priority", 0), inc.get("createdAt", 0.0), {flavor: _units(inc["cpu"])})
    before = {name: dict(q.usage) for name, q in queues.items()}
    victims = targets(view, incoming, flavor, _units(inc["cpu"]))
    assert {name: q.usage for name, q in queues.items()} == before, "the snapshot must be left as it was"
    return sorted(w.key for w in victims)
