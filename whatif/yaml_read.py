"""YAML files the what-if reads (stack files, workloads), parsed by libyaml when PyYAML has it: the same
``SafeConstructor`` and resolver build the same values as ``yaml.safe_load``, ~5x faster (the stack and workload parse
were ~10 % of a short run, bench/whatif_bench.py). Whatever the C parser refuses, and text where the two parsers are
known to differ (characters the pure reader refuses, a ``%YAML`` directive), goes through ``yaml.safe_load``, so errors
and edge cases read exactly as before."""

from __future__ import annotations

from typing import Any

import yaml
from yaml.reader import Reader

_CSafeLoader = getattr(yaml, "CSafeLoader", None)


def safe_load(text: str) -> Any:
    if _CSafeLoader is None or "%YAML" in text or Reader.NON_PRINTABLE.search(text):
        return yaml.safe_load(text)
    try:
        return yaml.load(text, Loader=_CSafeLoader)  # noqa: S506 (CSafeLoader: the safe constructor)
    except yaml.YAMLError:
        return yaml.safe_load(text)  # the pure parser's own error (or, should the parsers disagree, its value)
