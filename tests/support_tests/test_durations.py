"""The durations record that keeps slow tests out of the quick loop: what it keeps and how a run marks from it."""

from __future__ import annotations

from tests.support.durations import SLOW_S, is_slow, merged, recorded, write


def test_only_tests_at_or_over_the_bar_are_kept_and_the_larger_figure_wins(tmp_path):
    old = {"a::slow": 2.0}
    out = merged(old, {"a::slow": 0.5, "b::fast": SLOW_S / 2, "c::new": SLOW_S}, bar=SLOW_S)
    assert out == {"a::slow": 2.0, "c::new": SLOW_S}
    write(out, tmp_path / "d.json")
    assert recorded(tmp_path / "d.json") == out and recorded(tmp_path / "absent.json") == {}


def test_a_recorded_test_is_slow_only_at_or_over_the_bar():
    record = {"x::slow": SLOW_S, "x::quick": SLOW_S / 3}
    assert [is_slow(t, record) for t in ("x::slow", "x::quick", "x::unrecorded")] == [True, False, False]


def test_the_record_names_tests_that_exist_in_the_tree():
    """A recorded id whose file is gone marks nothing: keep the record to files that exist (rerun the recording)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    files = {test.split("::")[0] for test in recorded()}
    assert files and all((root / f).exists() for f in files), sorted(f for f in files if not (root / f).exists())
