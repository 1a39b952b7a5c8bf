"""The trace tables of docs/whatif.md are what ``python -m whatif.study`` computes today: the page holds them between
markers that ``--write`` rewrites, so a change to the simulator that moves a figure fails here until the page (and the
conclusions written under the tables) are brought up to date. The full study takes about 10 s on 2 cores."""

from __future__ import annotations

import pytest

from tests.conftest import require_shared
from whatif import study


def _block(text: str) -> str:
    start, end = text.index(study.BEGIN) + len(study.BEGIN), text.index(study.END)
    return text[start:end].strip("\n")


def test_the_trace_tables_in_the_page_are_what_the_study_computes_today():
    require_shared("traces", "alibaba_gpu_v2023_openb", "openb_pods_14d_window.csv")  # skip or fail as for ../shared
    shown = _block(study.PAGE.read_text(encoding="utf-8"))
    assert shown == study.tables(), "stale: run .venv/bin/python -m whatif.study --write, then reread the conclusions"


def test_write_replaces_only_the_block_between_the_markers():
    page = f"intro\n\n{study.BEGIN}\n\nold table\n\n{study.END}\n\nconclusions\n"
    out = study.page_with(page, "| new |")
    assert out == f"intro\n\n{study.BEGIN}\n\n| new |\n\n{study.END}\n\nconclusions\n"
    assert study.page_with(out, "| new |") == out  # rewriting a current page changes nothing


@pytest.mark.parametrize("page", ["no markers at all", f"{study.END}\nbackwards\n{study.BEGIN}"])
def test_write_refuses_a_page_without_its_markers_and_says_how_to_fix_it(page: str):
    with pytest.raises(ValueError, match="put them back around the trace tables"):
        study.page_with(page, "| new |")


def test_unknown_arguments_are_exit_2_with_the_usage(capsys):
    assert study.main(["--wirte"]) == 2
    assert "usage: python -m whatif.study [--write]" in capsys.readouterr().err
