"""docs/benchmarks.md shows current results only: each section is one benchmark with the date and the code it was
measured on, and the figures of earlier runs live in docs/contributing/benchmarks-history.csv, one row per figure, so
the user page never grows a new dated section per run again."""

from __future__ import annotations

import csv
import re
from datetime import date

from preview.engine import PROJECT_ROOT

PAGE = PROJECT_ROOT / "docs" / "benchmarks.md"
HISTORY = PROJECT_ROOT / "docs" / "contributing" / "benchmarks-history.csv"
COLUMNS = ["date", "benchmark", "section", "commit", "load", "case", "measure", "value"]
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def test_each_benchmark_section_names_its_date_and_has_one_table():
    found = sections(PAGE.read_text(encoding="utf-8"))
    assert len(found) >= 4, "one section per benchmark"
    undated = [title for title, body in found.items() if not DATE.search(body)]
    assert undated == [], "say when (and on which code) each table was measured"
    tables = {title: len(re.findall(r"^\|[-:| ]+\|$", body, re.MULTILINE)) for title, body in found.items()}
    assert {title: n for title, n in tables.items() if n != 1} == {}, "one current table per benchmark"


def test_the_page_keeps_no_dated_history_sections():
    headings = re.findall(r"^#{2,6} (.+)$", PAGE.read_text(encoding="utf-8"), re.MULTILINE)
    assert [h for h in headings if DATE.search(h)] == [], "earlier runs go to the history CSV, not a dated heading"


def test_the_history_has_one_well_formed_row_per_figure():
    with HISTORY.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == COLUMNS
    bad = [r for r in rows[1:] if len(r) != len(COLUMNS) or not r[7] or not r[5]]
    assert bad == []
    assert all(date.fromisoformat(r[0]) <= date.today() for r in rows[1:])
    assert {r[1] for r in rows[1:]} >= {"preview", "whatif", "policy", "install"}
