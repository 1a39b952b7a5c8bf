"""The one reader of ``Pulumi.<stack>.yaml`` files, for the preview and both sides of the diff: total, like the CLI.

Whatever the bytes, the answer is the stack's ``config:`` map or a ``StackFileError`` naming the file, line and
column, what was received, what is allowed and the fix (exit 2 in every command), never a traceback. The file is read
as the Pulumi CLI reads it: YAML 1.2 (``stacks/validate/yaml12.py``), UTF-8 or UTF-16 with a byte order mark, one document,
``config:`` a mapping of ``<namespace>:<key>`` to values, each plain value handed over as its text (the program
decodes it: ``compose/config.py``), ``{secure: …}`` and objects as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stacks.validate.issues import NAMESPACE, SpecIssue, did_you_mean
from stacks.validate.yaml12 import YamlProblem, parse_document

MAX_BYTES = 1 << 20
"""A stack file is a few KiB; 1 MiB leaves room for any real one and bounds what an untrusted pull request can feed
the PR-diff workflow."""
SHAPE = "one YAML 1.2 document: a mapping with config: <namespace>:<key>: value"
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
STACK_FILE_KEYS = ("config", "environment", "secretsprovider", "encryptedkey", "encryptionsalt")
"""The top-level keys of a Pulumi stack settings file (Pulumi docs, "Pulumi.<stack-name>.yaml" reference)."""
KNOWN_NAMESPACES = (NAMESPACE, "gcp", "aws", "kubernetes")
"""The config namespaces the program reads; any other provider's namespace is fine, one a letter or two away from
these is a misspelling whose settings would otherwise be dropped and reported as missing."""


class StackFileError(Exception):
    """The stack file could not be read as a stack file; ``issue`` says where, what and how to fix it."""

    def __init__(self, issue: SpecIssue):
        self.issue = issue
        super().__init__(str(issue))


def _error(
    where: str,
    line: int,
    column: int,
    problem: str,
    value: Any = None,
    allowed: str | None = SHAPE,
    fix: str | None = None,
) -> StackFileError:
    at = f"{where}:{line}:{column}" if line else where
    return StackFileError(SpecIssue(at, problem, value, allowed, fix))


def read_stack_file(path: Path) -> dict[str, Any]:
    """The ``config:`` map of the stack file at ``path`` (keys keep their namespace); raises ``StackFileError``."""
    where = str(path)
    try:
        if path.is_dir():
            raise _error(
                where,
                0,
                0,
                "is a directory, not a stack file",
                allowed="a Pulumi.<stack>.yaml file",
                fix="pass the path of the stack file itself",
            )
        if not path.is_file():
            problem = "is not a regular file" if path.exists() else "no such file"  # a device or a pipe: not read
            raise _error(
                where,
                0,
                0,
                problem,
                allowed="an existing Pulumi.<stack>.yaml file",
                fix="check the path (and the stack name)",
            )
        if path.stat().st_size > MAX_BYTES:
            raise _error(
                where,
                0,
                0,
                f"the file has {path.stat().st_size:,} bytes, more than a stack file needs",
                allowed=f"at most {MAX_BYTES:,} bytes",
                fix="check that this is the stack file",
            )
        data = path.read_bytes()
    except OSError as exc:
        raise _error(
            where,
            0,
            0,
            f"cannot be read: {exc.strerror or exc}",
            allowed="a readable file",
            fix="check the file's permissions",
        ) from None
    return parse_stack_bytes(data, where)


def parse_stack_bytes(data: bytes, where: str) -> dict[str, Any]:
    """The ``config:`` map of a stack file's bytes (from disk or ``git show``); raises ``StackFileError``."""
    return parse_stack_text(decode_stack_bytes(data, where), where)


def decode_stack_bytes(data: bytes, where: str) -> str:
    """The text of a stack file: UTF-8, or UTF-8/UTF-16 after a byte order mark, as YAML allows."""
    if len(data) > MAX_BYTES:
        raise _error(
            where,
            0,
            0,
            f"the file has {len(data):,} bytes, more than a stack file needs",
            allowed=f"at most {MAX_BYTES:,} bytes",
            fix="check that this is the stack file",
        )
    encoding, start = "utf-8", 0
    for bom, name in _BOMS:
        if data.startswith(bom):
            encoding, start = name, len(bom)
            break
    try:
        return data[start:].decode(encoding)
    except UnicodeDecodeError as exc:
        before = data[start : start + exc.start]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        raise _error(
            where,
            line,
            column,
            f"not {encoding.upper()} text: byte 0x{data[start + exc.start]:02x} cannot be decoded",
            allowed="UTF-8 text (or UTF-16 with a byte order mark)",
            fix="save the file as UTF-8",
        ) from None


def parse_stack_text(text: str, where: str) -> dict[str, Any]:
    positions: dict[tuple[str, ...], tuple[int, int]] = {}
    try:
        doc = parse_document(text, raw_under="config", positions=positions)
    except YamlProblem as exc:
        raise _error(where, exc.line, exc.column, exc.problem, exc.value, fix=exc.fix) from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise _error(
            where,
            1,
            1,
            f"the document is {_kind(doc)}, not a stack file",
            _short(doc),
            fix="write the stack settings under a top-level config: mapping",
        )
    _refuse_misspelled_top_level_key(doc, where, positions)
    config = doc.get("config")
    if config is None:
        return {}
    line, column = positions.get(("config",), (1, 1))
    if not isinstance(config, dict):
        raise _error(
            where,
            line,
            column,
            f"config: is {_kind(config)}, not a mapping",
            _short(config),
            fix="write config: as a mapping of <namespace>:<key>: value, one per line",
        )
    for key in config:
        if ":" not in key:
            at_line, at_column = positions.get(("config", key), (line, column))
            raise _error(
                where,
                at_line,
                at_column,
                f"the config key {key!r} has no namespace",
                key,
                allowed="<namespace>:<key>, e.g. gpu-cluster:region (the Pulumi CLI refuses other keys)",
                fix=f"write gpu-cluster:{key} (or the namespace of the provider it configures)",
            )
    _refuse_misspelled_namespaces(config, where, positions, (line, column))
    return dict(config)


def _refuse_misspelled_top_level_key(
    doc: dict[str, Any], where: str, positions: dict[tuple[str, ...], tuple[int, int]]
) -> None:
    """``confg:`` would read as a file without settings: every setting then reported missing, the typo never named."""
    for key in doc:
        near = did_you_mean(str(key), STACK_FILE_KEYS) if key not in STACK_FILE_KEYS else None
        if near is not None and near not in doc:
            line, column = positions.get((str(key),), (1, 1))
            raise _error(
                where,
                line,
                column,
                f"unknown key {key!r} (did you mean {near!r}?)",
                key,
                allowed=", ".join(STACK_FILE_KEYS),
                fix=f"rename {key}: to {near}:",
            )


def _refuse_misspelled_namespaces(
    config: dict[str, Any], where: str, positions: dict[tuple[str, ...], tuple[int, int]], at: tuple[int, int]
) -> None:
    """``gpu-clustr:cloud`` is another namespace to Pulumi: the setting would be dropped, then reported missing."""
    typos: dict[str, list[str]] = {}
    for key in config:
        namespace = key.split(":", 1)[0]
        near = did_you_mean(namespace, KNOWN_NAMESPACES) if namespace not in KNOWN_NAMESPACES else None
        if near is not None:
            typos.setdefault(near, []).append(key)
    if typos:
        near, keys = next(iter(typos.items()))
        line, column = positions.get(("config", keys[0]), at)
        namespace = keys[0].split(":", 1)[0]
        others = "".join(f"; also {', '.join(k)} (did you mean {n!r}?)" for n, k in list(typos.items())[1:])
        raise _error(
            where,
            line,
            column,
            f"unknown key {keys[0]!r}: unknown namespace {namespace!r} (did you mean {near!r}?){others}",
            ", ".join(keys),
            allowed=f"{NAMESPACE}:<key> for this program's settings, or a provider's namespace",
            fix=f"write {', '.join(near + ':' + k.split(':', 1)[1] for k in keys)}",
        )


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return "a string" if isinstance(value, str) else "a boolean" if isinstance(value, bool) else "a number"


def _short(value: Any) -> Any:
    """What the message shows of a value that is not a mapping: scalars as they are, lists by length."""
    return f"a list of {len(value)}" if isinstance(value, list) else value
