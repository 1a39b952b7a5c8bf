"""Mutated example stack files for the fuzz tests (tests/preview/test_fuzz_stack_files.py), and the one way to run
the preview command on one and judge the outcome.

Two kinds of mutation, drawn by Hypothesis: *text* (bytes deleted, inserted, lines duplicated, swapped or cut: what a
bad edit or a bad merge does) and *structural* (a value anywhere in the config replaced by one of a palette of awkward
values, a key dropped or added, a value wrapped in a list: what a confused user writes).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from preview.__main__ import main
from preview.engine import PROJECT_ROOT
from preview.engine import read_stack_file

EXAMPLES: dict[str, bytes] = {
    p.name: p.read_bytes() for p in sorted(PROJECT_ROOT.glob("Pulumi.*.yaml")) if p.name != "Pulumi.yaml"
}
CONFIGS: dict[str, dict[str, Any]] = {name: read_stack_file(PROJECT_ROOT / name) for name in EXAMPLES}

AWKWARD: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    7,
    2**31,
    2**63,
    1.5,
    -0.0,
    math.nan,
    math.inf,
    -math.inf,
    "",
    " ",
    "x" * 300,
    "l4\n",
    "a\tb",
    "é",
    "2024-01-01",
    "yes",
    "on",
    "012345678901",
    "123456789012",
    "gcp",
    "aws",
    "spot",
    "us-central1-a",
    "a3-megagpu-8g",
    "p5.48xlarge",
    [],
    {},
    ["a"],
    [None],
    [1, 2],
    {"a": 1},
    {"secure": "v1:abc"},
    {"type": "spot"},
    [{"name": "x"}],
    {"": ""},
]
"""Values a confused user, a script or the Pulumi CLI's own encoding may put anywhere."""

SNIPPETS = [
    b"[",
    b"]",
    b"{",
    b"}",
    b": ",
    b"- ",
    b"&a ",
    b"*a",
    b"!int ",
    b"!!binary ",
    b"---\n",
    b"\t",
    b"\x00",
    b"\x07",
    b"\xff",
    b"\xef\xbb\xbf",
    b"'",
    b'"',
    b"#",
    b"<<: *a\n",
    b"? ",
    b"|\n",
    b"%YAML 1.1\n",
    b"\n  ",
    b"~",
    b".nan",
    b"2024-01-01",
    "é".encode(),
    b"\r\n",
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += _paths(child, (*prefix, i))
    return out


def _set(root: dict[str, Any], path: tuple[Any, ...], op: str, value: Any) -> None:
    parent: Any = root
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if op == "delete":
        del parent[last]
    elif op == "wrap":
        parent[last] = [parent[last]]
    elif op == "add-key" and isinstance(parent[last], dict):
        parent[last]["unexpectedKey"] = value
    else:
        parent[last] = value


def to_yaml(value: Any) -> str:
    """Flow-style YAML 1.2 for any JSON-like value, non-finite floats included (``.nan``, ``.inf``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {to_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(to_yaml(v) for v in value) + "]"
    return json.dumps(value)


@st.composite
def structural_mutation(draw: st.DrawFn) -> bytes:
    name = draw(st.sampled_from(sorted(CONFIGS)))
    config = json.loads(json.dumps(CONFIGS[name]))  # a deep copy
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(config)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        _set(
            config,
            path,
            draw(st.sampled_from(["replace", "replace", "delete", "wrap", "add-key"])),
            copy.deepcopy(draw(st.sampled_from(AWKWARD))),
        )  # a copy: a later mutation must not edit the palette
    return ("config:\n" + "".join(f"  {json.dumps(k)}: {to_yaml(v)}\n" for k, v in config.items())).encode()


@st.composite
def text_mutation(draw: st.DrawFn) -> bytes:
    data = bytearray(EXAMPLES[draw(st.sampled_from(sorted(EXAMPLES)))])
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "duplicate-line", "swap-lines", "cut"]))
        if op == "insert":
            data[at:at] = draw(st.sampled_from(SNIPPETS))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        elif op == "cut":
            del data[at:]
        else:
            lines = bytes(data).split(b"\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if op == "duplicate-line":
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b"\n".join(lines))
    return bytes(data)


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    doc: dict[str, Any]
    json_error: str | None = None

    def problems(self) -> list[str]:
        """What breaks the contract (empty: the outcome is fine)."""
        found = []
        if self.code not in (0, 1, 2):
            found.append(f"exit {self.code}")
        if "Traceback" in self.out + self.err:
            found.append("a traceback")
        if self.json_error:
            found.append(self.json_error)
        if self.code == 2 and (self.doc.get("resources") or not self.doc.get("errors")):
            found.append("exit 2 without an error message, or with resources registered")
        return found


def _refuse(constant: str) -> Any:
    raise ValueError(f"not strict JSON: {constant}")


def run_preview(path: Path, policies: bool = False) -> Outcome:
    """``python -m preview --stack fuzz --stack-file PATH --format json [--no-policies]``, in this process."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["--stack", "fuzz", "--stack-file", str(path), "--format", "json"] + ([] if policies else ["--no-policies"])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    try:
        doc = json.loads(out.getvalue(), parse_constant=_refuse) if code in (0, 1, 2) else {}
    except ValueError as exc:
        return Outcome(code, out.getvalue(), err.getvalue(), {}, f"stdout is not strict JSON: {exc}")
    return Outcome(code, out.getvalue(), err.getvalue(), doc)
