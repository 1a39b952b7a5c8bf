"""Kueue's own scheduler test table (pkg/scheduler/scheduler_test.go, TestSchedule), ported as data
(tests/whatif/kueue_tables/schedule.yaml), run through the simulator's Kueue model: one scheduling cycle
(``whatif.kueue.cycle``) over every cohort of the case, each ClusterQueue's head assigned a flavor and victims by
``whatif.kueue.preempt.choose``. The result is compared with what Kueue's test expects: the workloads admitted this
cycle with their flavor, the workloads preempted, and the pending ones left in the active queues (``wantLeft``) or
set aside as inadmissible (``wantInadmissibleLeft``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.whatif.kueue_tables import _queue, _units
from whatif.cluster import KueueModel
from whatif.kueue.cohort import Admitted, CohortView, Incoming, QueueView
from whatif.kueue.cycle import FIT, NO_FIT, PREEMPTING, Cycle, Entry
from whatif.kueue.preempt import choose

TABLE = Path(__file__).resolve().parents[2] / "whatif" / "kueue_tables" / "schedule.yaml"


@dataclass(frozen=True)
class ScheduleCase:
    source: str
    test: str
    name: str
    body: dict[str, Any]
    queue_sets: dict[str, Any]

    @property
    def id(self) -> str:
        return self.name


def load_schedule_cases() -> tuple[list[ScheduleCase], list[dict[str, str]], dict[str, Any]]:
    doc = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    cases = [ScheduleCase(doc["source"], doc["test"], c["name"], c, doc.get("queueSets", {})) for c in doc["cases"]]
    out = [{"file": doc["source"], "test": doc["test"], **o} for o in doc.get("outOfScope", [])]
    return cases, out, doc


class _Record:
    """Applies the cycle's decisions to the snapshot, as Kueue's cache would once they land."""

    def __init__(self, view: CohortView, names: dict[int, str]):
        self.view, self.names = view, names
        self.preempted: list[str] = []

    def focus(self, entry: Entry) -> None:
        pass

    def admit(self, entry: Entry) -> None:
        c = entry.choice
        assert c is not None
        q = self.view.queues[entry.inc.queue]
        q.usage[c.pool] += entry.inc.need[c.pool]

    def preempt(self, entry: Entry) -> None:
        c = entry.choice
        assert c is not None
        for w in c.victims:
            self.view.queues[w.queue].remove(w)
            self.preempted.append(w.key)
        self.admit(entry)


def run_schedule_case(case: ScheduleCase) -> dict[str, Any]:
    """{"admitted": {workload: flavor}, "preempted": [...], "left": [...], "inadmissible": [...]}: one cycle."""
    b = case.body
    specs = [
        *(case.queue_sets[b["queues"]] if isinstance(b.get("queues"), str) else b.get("queues") or []),
        *b.get("extraQueues", []),
    ]
    by_name = {q["name"]: q for q in specs}
    pending = b.get("pending", [])
    admitted_in = b.get("admitted", [])
    used = {w["cq"] for w in [*pending, *admitted_in]}
    groups: dict[str, list[dict]] = {}
    for q in specs:  # the cohorts (and cohort-less queues) the case touches; queues of one cohort stay together
        if q["name"] not in used and not any(by_name[u].get("cohort") == q.get("cohort") is not None for u in used):
            continue
        groups.setdefault(q.get("cohort") or f"(none) {q['name']}", []).append(q)
    result: dict[str, Any] = {"admitted": {}, "preempted": [], "left": [], "inadmissible": []}
    order = sorted(w["name"] for w in admitted_in)
    for group, qspecs in groups.items():
        cohort = None if group.startswith("(none) ") else group
        kueue = KueueModel(cohort=cohort, fair_sharing=bool(b.get("fairSharing")), gang_timeout_s=None)
        queues = {q["name"]: QueueView(_queue(q)) for q in qspecs}
        view = CohortView(kueue, queues, cohort_quota={f: _units(v) for f, v in (b.get("cohortQuota") or {}).items()})
        for w in admitted_in:
            if w["cq"] in queues:
                queues[w["cq"]].add(
                    Admitted(
                        w["name"],
                        w["cq"],
                        w["flavor"],
                        _units(w["cpu"]),
                        w.get("priority", 0),
                        w.get("createdAt", 0.0),
                        w.get("admittedAt", 0.0),
                        order.index(w["name"]),
                    )
                )
        heads, rest = [], []
        for name, q in queues.items():
            mine = sorted(
                (w for w in pending if w["cq"] == name),
                key=lambda w: (-w.get("priority", 0), w.get("createdAt", 0.0), w["name"]),
            )
            if mine:
                heads.append(mine[0])
                rest += mine[1:]
        entries = []
        for i, w in enumerate(heads):
            q = queues[w["cq"]]
            need = {f: _units(w["cpu"]) for f in q.model.quotas}
            inc = Incoming(w["cq"], w.get("priority", 0), w.get("createdAt", 0.0), need)
            entries.append(Entry(w["name"], inc, choose(view, inc, lambda pool: True), i))
        record = _Record(view, {})
        for e in Cycle(view, record).run(entries):
            if e.outcome == FIT:
                assert e.choice is not None
                result["admitted"][e.key] = e.choice.pool
            elif e.outcome == NO_FIT and not queues[e.inc.queue].model.strict_fifo:
                result["inadmissible"].append(e.key)
            else:  # skipped, preempting (admitted once its victims are gone), StrictFIFO heads that do not fit
                result["left"].append(e.key)
            if e.outcome == PREEMPTING:
                assert e.choice is not None
        result["preempted"] += record.preempted
        result["left"] += [w["name"] for w in rest]
    for k in ("preempted", "left", "inadmissible"):
        result[k] = sorted(result[k])
    return result


def expected(case: ScheduleCase) -> dict[str, Any]:
    want = case.body["want"]
    return {
        "admitted": dict(want.get("admitted") or {}),
        "preempted": sorted(want.get("preempted") or []),
        "left": sorted(want.get("left") or []),
        "inadmissible": sorted(want.get("inadmissible") or []),
    }
