"""A broken stack file, through the command as CI runs it: a stack file that is no stack file is exit 2 with file, line
and column in every format (JSON strict), never a traceback, nothing registered; a crash is exit 4, said in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import preview.run
from preview.__main__ import main
from preview.engine import PROJECT_ROOT
from preview.render.crash import EXIT_INTERNAL

DEV = (PROJECT_ROOT / "Pulumi.dev.yaml").read_text(encoding="utf-8")


def strict(text: str) -> Any:
    """JSON as RFC 8259 has it: NaN, Infinity and -Infinity are refused."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def write(tmp_path: Path, text: str | bytes, name: str = "Pulumi.t.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


BROKEN = {
    "syntax error": ("config:\n  gpu-cluster:zones: [us-central1-a\n", 3),
    "two documents": ("config: {}\n---\nconfig: {}\n", 2),
    "unknown tag": ("config:\n  gpu-cluster:region: !int 2\n", 2),
    "list as a key": ("config:\n  ? [a]\n  : b\n", 2),
    "not UTF-8": (b"config:\n  gpu-cluster:region: \xff\n", 2),
    "UTF-16 without BOM": ("config: {}\n".encode("utf-16-le"), 1),
    "config is a list": ("config: [a, b]\n", 1),
    "config is a scalar": ("config: gcp\n", 1),
    "1,000 nested lists": ("config:\n  gpu-cluster:zones: " + "[" * 1000 + "]" * 1000 + "\n", 2),
    "key on (YAML 1.1 boolean)": ("config:\n  on: true\n", 2),
    "key 1": ("config:\n  gpu-cluster:labels: {1: x}\n", 2),
    "key ~": ("config:\n  gpu-cluster:labels: {~: x}\n", 2),
    "self-referencing anchor": ("config:\n  gpu-cluster:labels: &l {env: dev, self: *l}\n", 2),
    "alias bomb": (
        "config:\n  x:a: &a [l, l, l, l, l, l, l, l, l]\n"
        + "".join(f"  x:{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(7)),
        7,
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_stack_file_is_exit_2_with_file_line_and_column(tmp_path, capsys, case):
    text, line = BROKEN[case]
    path = write(tmp_path, text)
    code, out, _ = run(capsys, "--stack", "t", "--stack-file", str(path), "--format", "json")
    doc = strict(out)
    assert code == 2 and doc["exitCode"] == 2 and doc["resources"] == []
    [error] = doc["errors"]
    assert error["path"].startswith(f"{path}:{line}:") and error["problem"] and error["fix"], error
    code, out, _ = run(capsys, "--stack", "t", "--stack-file", str(path))  # text: the same error, no crash
    assert code == 2 and f"{path}:{line}:" in out


@pytest.mark.parametrize("where", ["directory", "missing"])
def test_stack_file_that_is_a_directory_or_missing_is_exit_2(tmp_path, capsys, where):
    path = tmp_path if where == "directory" else tmp_path / "Pulumi.none.yaml"
    code, out, _ = run(capsys, "--stack", "t", "--stack-file", str(path), "--format", "json")
    assert code == 2 and strict(out)["errors"][0]["path"] == str(path)


@pytest.mark.parametrize("where", ["directory", "missing"])
def test_base_file_that_is_a_directory_or_missing_is_exit_2(tmp_path, capsys, where):
    path = tmp_path if where == "directory" else tmp_path / "Pulumi.none.yaml"
    code, _, err = run(capsys, "--stack", "dev", "--base-file", str(path), "--format", "json")
    assert code == 2 and str(path) in err and "fix:" in err


def test_a_broken_base_file_is_an_invalid_base_in_the_diff(tmp_path, capsys):
    """The diff reads both sides through the same reader: a broken base is shown invalid; the head is diffed."""
    base = write(tmp_path, DEV.replace("  gpu-cluster:labels:\n    env: dev\n", "  gpu-cluster:labels:\n    1: dev\n"))
    code, out, _ = run(capsys, "--stack", "dev", "--base-file", str(base), "--format", "json", "--no-policies")
    doc = strict(out)
    assert code == 0 and doc["base"]["state"] == "invalid" and doc["head"]["state"] == "ok"
    assert doc["base"]["errors"][0]["path"].startswith(f"{base}:9:")


def test_a_nan_in_the_head_is_strict_json_in_the_diff(tmp_path, capsys):
    head = write(tmp_path, DEV.replace("      maxNodes: 2\n      capacity", "      maxNodes: .nan\n      capacity"))
    code, out, _ = run(
        capsys, "--stack", "dev", "--stack-file", str(head), "--base-file", str(head), "--format", "json"
    )
    doc = strict(out)
    assert code == 2 and doc["head"]["state"] == "invalid"
    assert ".nan" in [e["value"] for e in doc["head"]["errors"]]


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_nan_and_infinity_are_strict_json_in_every_format(tmp_path, capsys, value):
    path = write(tmp_path, DEV.replace("      maxNodes: 2\n      capacity", f"      maxNodes: {value}\n      capacity"))
    for fmt in ("json", "sarif"):
        code, out, _ = run(capsys, "--stack", "t", "--stack-file", str(path), "--format", fmt)
        assert code == 2 and strict(out)
    code, out, _ = run(capsys, "--stack", "t", "--stack-file", str(path), "--format", "json")
    assert value in [e["value"] for e in strict(out)["errors"]]
    for fmt in ("markdown", "text"):
        assert run(capsys, "--stack", "t", "--stack-file", str(path), "--format", fmt)[0] == 2


def test_a_list_for_cloud_is_an_error_not_a_crash_of_the_text_renderer(tmp_path, capsys):
    path = write(tmp_path, DEV.replace("gpu-cluster:cloud: gcp", "gpu-cluster:cloud: [gcp]"))
    code, out, _ = run(capsys, "--stack", "t", "--stack-file", str(path))
    assert code == 2 and "gpu-cluster:cloud" in out
    code, out, _ = run(capsys, "--stack", "t", "--stack-file", str(path), "--format", "markdown")
    assert code == 2 and "gpu-cluster:cloud" in out


def test_a_misspelled_region_names_the_cloud_without_a_none_in_the_header(tmp_path, capsys):
    path = write(tmp_path, DEV.replace("gpu-cluster:region:", "gpu-cluster:regoin:"))
    code, out, _ = run(capsys, "--stack", "t", "--stack-file", str(path), "--color", "never")
    header = out.splitlines()[0]
    assert code == 2 and "GKE (no region)" in header and "None" not in header, header
    assert "did you mean 'region'?" in out


def test_a_date_under_another_namespace_previews(tmp_path, capsys):
    path = write(tmp_path, DEV + "  myorg:reviewed: 2024-01-01\n  myorg:review: {on: 2024-01-01, by: [ops]}\n")
    code, out, _ = run(capsys, "--stack", "t", "--stack-file", str(path), "--format", "json", "--no-policies")
    assert code == 0 and strict(out)["resources"]


def test_an_internal_error_is_exit_4_with_one_line_and_the_traceback_only_with_debug(capsys, monkeypatch):
    def boom(*_: Any, **__: Any) -> Any:
        raise ValueError("unexpected")

    monkeypatch.setattr(preview.run, "preview_file", boom)
    code, out, err = run(capsys, "--stack", "dev", "--format", "json")
    assert code == EXIT_INTERNAL == 4 and out == ""
    [line] = err.splitlines()
    assert "internal error" in line and "bug" in line and "ValueError: unexpected" in line and "--debug" in line
    assert main(["--stack", "dev", "--debug"]) == EXIT_INTERNAL
    assert "Traceback" in capsys.readouterr().err


def test_an_internal_error_in_the_diff_is_exit_4(capsys, monkeypatch):
    import preview.diff.compare

    def boom(*_: Any, **__: Any) -> Any:
        raise KeyError("x")

    monkeypatch.setattr(preview.diff.compare, "diff_configs", boom)
    code, _, err = run(capsys, "--stack", "dev", "--base-file", str(PROJECT_ROOT / "Pulumi.dev.yaml"))
    assert code == EXIT_INTERNAL and "internal error" in err and len(err.splitlines()) == 1


def test_an_internal_error_in_the_pr_comment_is_exit_4(capsys, monkeypatch):
    import preview.diff.comment

    def boom(*_: Any, **__: Any) -> Any:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(preview.diff.comment, "changed_stacks", boom)
    code = preview.diff.comment.main(["--base", "HEAD"])
    err = capsys.readouterr().err
    assert code == EXIT_INTERNAL and "internal error" in err and "Traceback" not in err
