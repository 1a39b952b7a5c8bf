"""Recorded test durations: the tests a full run measured at ``SLOW_S`` or more are marked ``slow``, so the quick loop
(``scripts/test.sh --quick``) leaves them out without anyone deciding test by test.

``tests/durations.json`` maps a test id to the seconds (setup + call) one run measured for it; only tests at or over
the bar are kept. ``pytest --record-durations`` adds what a run measured (a test's larger figure wins, so a test
slowed by a shared fixture it sets up stays recorded); a test that got faster is dropped by deleting its line.
"""

from __future__ import annotations

import json
from pathlib import Path

SLOW_S = 0.1
"""CPU-seconds of setup + call at which a test leaves the quick loop: about 500 of 6,000 tests, which together take
most of the suite's time (the loop then runs in under a minute on 2 cores)."""

FILE = Path(__file__).resolve().parents[1] / "durations.json"


def recorded(path: Path = FILE) -> dict[str, float]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def is_slow(test_id: str, record: dict[str, float]) -> bool:
    """Did a recorded full run measure ``test_id`` at ``SLOW_S`` or more?"""
    return record.get(test_id, 0.0) >= SLOW_S


def merged(old: dict[str, float], measured: dict[str, float], bar: float = SLOW_S) -> dict[str, float]:
    """``old`` plus every measured test at or over ``bar``; the larger figure wins, sorted by test id."""
    out = dict(old)
    for test, seconds in measured.items():
        if seconds >= bar:
            out[test] = round(max(seconds, out.get(test, 0.0)), 2)
    return dict(sorted(out.items()))


def write(durations: dict[str, float], path: Path = FILE) -> None:
    path.write_text(json.dumps(durations, indent=0, sort_keys=True) + "\n", encoding="utf-8")
