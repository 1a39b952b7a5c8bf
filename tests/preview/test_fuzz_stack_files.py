"""Fuzz the preview with mutated example stack files (no input crashes the command): every outcome is exit 0, 1 or 2
with a message, never a traceback; exit 2 registers nothing; the JSON output is strict JSON.

The in-suite run has a fixed, derandomized budget (seconds) and skips the policy pack. The long run (random seeds, the
policy pack on, so exit 1 happens too) is marked ``fuzz`` and excluded by default:

    FUZZ_EXAMPLES=2000 .venv/bin/python -m pytest -m fuzz -p no:cacheprovider tests/preview/test_fuzz_stack_files.py
"""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from tests.support.spec.mutations import run_preview, structural_mutation, text_mutation

IN_SUITE = settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LONG = settings(IN_SUITE, max_examples=int(os.environ.get("FUZZ_EXAMPLES", "500")), derandomize=False)


EXITS: Counter[int] = Counter()
"""Exit codes seen in this module's runs, printed at the end (``-s``): how many mutations were valid."""


@pytest.fixture(scope="module", autouse=True)
def _exit_code_summary() -> Iterator[None]:
    yield
    print(f"\nfuzzed stack files: {sum(EXITS.values())}, by exit code: {dict(sorted(EXITS.items()))}")


def check(data: bytes, policies: bool = False) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "Pulumi.fuzz.yaml"
        path.write_bytes(data)
        outcome = run_preview(path, policies)
    EXITS[outcome.code] += 1
    assert not outcome.problems(), (outcome.problems(), data[:2000], outcome.err[-2000:])


@IN_SUITE
@given(text_mutation())
def test_text_mutations_of_the_examples_end_in_exit_0_1_or_2(data):
    check(data)


@IN_SUITE
@given(structural_mutation())
def test_structural_mutations_of_the_examples_end_in_exit_0_1_or_2(data):
    check(data)


@pytest.mark.fuzz
@LONG
@given(text_mutation())
def test_long_text_fuzz(data):
    check(data, policies=True)


@pytest.mark.fuzz
@LONG
@given(structural_mutation())
def test_long_structural_fuzz(data):
    check(data, policies=True)
