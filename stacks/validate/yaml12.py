"""One YAML 1.2 document -> plain JSON-like Python values, built from parser events, never recursively.

The Pulumi CLI reads stack files as YAML 1.2 (an unquoted ``yes`` or ``on`` is a string, ``2024-01-01`` is a string,
``123456789012`` is a number). ruamel.yaml's parser supplies the events; the values are built here with the YAML 1.2
*core schema* (spec 1.2.2, section 10.3.2) and nothing else: no timestamps, no ``!!python`` or other local tags, no
sets. Building from events (rather than composing a node tree and expanding it) is what makes the reader total:

- depth is counted as the events arrive, so 1,000 nested ``[[[…]]]`` is refused before anything recurses;
- an alias is never copied: its *expanded* size is added up, so an alias bomb (``a: &a [x, x]``, ``b: &b [*a, *a]``,
  …) is refused when the count passes ``MAX_VALUES``, in time linear in the file, before any consumer expands it;
- an alias to a collection that is still open (``labels: &l {self: *l}``) is a cycle no JSON can hold: refused;
- mapping keys must be strings (JSON object keys; the CLI's config is JSON), and unique, as YAML 1.2 requires.

Every refusal is a ``YamlProblem`` with the 1-based line and column of the offending token.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ruamel.yaml import YAML
from ruamel.yaml import events as ev
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError

MAX_DEPTH = 64
"""Nesting levels of lists and mappings (a stack file needs about 6)."""
MAX_VALUES = 100_000
"""Values (scalars, lists, mappings) in the document with every alias expanded (a stack file has a few hundred)."""
MAX_ALIASES = 1_000
"""Aliases (``*name``) in one document."""

CORE = "tag:yaml.org,2002:"
_NULL = re.compile(r"null|Null|NULL|~|")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INF = re.compile(r"([-+]?)\.(inf|Inf|INF)")
_NAN = re.compile(r"\.(nan|NaN|NAN)")


@dataclass(frozen=True)
class YamlProblem(Exception):
    """Where (1-based line and column; 0 when unknown) and what, in the words of the error message."""

    line: int
    column: int
    problem: str
    value: Any = None
    fix: str | None = None

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.problem}"


def resolve_plain(text: str) -> Any:
    """A plain (unquoted, untagged) scalar under the YAML 1.2 core schema."""
    if _NULL.fullmatch(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT10.fullmatch(text):
        return int(text)
    if _INT8.fullmatch(text):
        return int(text[2:], 8)
    if _INT16.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    inf = _INF.fullmatch(text)
    if inf:
        return -math.inf if inf.group(1) == "-" else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text


class _TagMismatch(ValueError):
    """A tagged scalar whose text the tag does not accept (``!!int x``)."""


def _as_null(text: str) -> None:
    if not _NULL.fullmatch(text):
        raise _TagMismatch(text)
    return None


def _as_bool(text: str) -> bool:
    if text not in _BOOL:
        raise _TagMismatch(text)
    return _BOOL[text]


def _as_int(text: str) -> int:
    value = resolve_plain(text)
    if type(value) is not int:
        raise _TagMismatch(text)
    return value


def _as_float(text: str) -> float:
    value = resolve_plain(text)
    if type(value) not in (int, float):
        raise _TagMismatch(text)
    return float(value)


_TAGGED: dict[str, Callable[[str], Any]] = {
    CORE + "str": str,
    CORE + "null": _as_null,
    CORE + "bool": _as_bool,
    CORE + "int": _as_int,
    CORE + "float": _as_float,
}
COLLECTION_TAGS = {"map": CORE + "map", "seq": CORE + "seq"}


@dataclass
class _Open:
    """A list or mapping being built; ``key`` holds a mapping's pending key between its key and value events."""

    value: Any
    line: int
    column: int
    anchor: str | None
    size: int = 1
    key: Any = None
    has_key: bool = False
    merges: list[dict[str, Any]] = field(default_factory=list)
    key_lines: dict[str, int] = field(default_factory=dict)


def _where(event: Any) -> tuple[int, int]:
    mark = getattr(event, "start_mark", None)
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return "a boolean" if isinstance(value, bool) else "a number" if isinstance(value, (int, float)) else "a string"


def parse_document(
    text: str, raw_under: str | None = None, positions: dict[tuple[str, ...], tuple[int, int]] | None = None
) -> Any:
    """The one document of ``text`` (None when empty); raises ``YamlProblem``.

    ``raw_under``: scalars that are values directly in the top-level mapping's entry of that name keep their source
    text as a string (``config:`` entries: the Pulumi CLI reads each config value as a string first, objects aside).
    ``positions``: filled with the 1-based (line, column) of every value at most two mappings deep, by key path.
    """
    try:
        return _build(YAML(typ="safe", pure=True).parse(text), raw_under, positions if positions is not None else {})
    except ReaderError as exc:  # a character YAML does not allow (control characters, most C1 codes)
        line, column = _position(text, exc.position)
        raise YamlProblem(
            line,
            column,
            f"character U+{exc.character:04X} is not allowed in YAML"
            if isinstance(exc.character, int)
            else "a character is not allowed in YAML",
            fix="remove the character or write it as an escape inside a double-quoted string",
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        opened = exc.context_mark if exc.context_mark is not None and exc.problem_mark is not None else None
        context = (
            f"{exc.context} (from line {opened.line + 1}, column {opened.column + 1})"
            if (exc.context and opened is not None)
            else exc.context
        )
        what = ": ".join(p for p in (context, exc.problem) if p)
        raise YamlProblem(
            mark.line + 1 if mark else 0,
            mark.column + 1 if mark else 0,
            f"not valid YAML: {what}",
            fix="repair the YAML syntax at that line",
        ) from None
    except YAMLError as exc:
        raise YamlProblem(0, 0, f"not valid YAML: {exc}", fix="repair the YAML syntax") from None


def _position(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def _build(
    events: Any,
    raw_under: str | None,  # noqa: C901 - one state machine reads best in one place
    positions: dict[tuple[str, ...], tuple[int, int]],
) -> Any:
    stack: list[_Open] = []
    anchors: dict[str, tuple[Any, int]] = {}
    open_anchors: dict[str, _Open] = {}
    """Anchors on lists and mappings not yet closed: an alias to one of them is a cycle."""
    aliases = 0
    documents = 0
    result: Any = None

    def add(value: Any, size: int, line: int, column: int, plain_merge: bool = False) -> None:
        nonlocal result
        if not stack:
            result = value
            return
        top = stack[-1]
        top.size += size
        if top.size > MAX_VALUES:
            raise YamlProblem(
                line,
                column,
                f"the document expands to more than {MAX_VALUES:,} values (aliases "
                f"included): refused before expanding it",
                fix="write the values out, or use fewer and smaller aliases (*name)",
            )
        if isinstance(top.value, list):
            top.value.append(value)
        elif not top.has_key:
            if isinstance(value, (dict, list)):
                raise YamlProblem(
                    line,
                    column,
                    f"{_kind(value)} cannot be a key: keys are strings",
                    fix="use a plain string as the key",
                )
            if plain_merge:
                top.key, top.has_key = _MERGE, True
                return
            if not isinstance(value, str):
                raise YamlProblem(
                    line,
                    column,
                    f"the key {_scalar_text(value)} is {_kind(value)}: keys are strings "
                    f"(YAML 1.2, like the Pulumi CLI)",
                    value,
                    fix=f"quote the key: '{_scalar_text(value)}'",
                )
            if value in top.key_lines:
                raise YamlProblem(
                    line,
                    column,
                    f"duplicate key {value!r} (first at line {top.key_lines[value]})",
                    value,
                    fix="remove one of the two, or merge them",
                )
            top.key, top.has_key = value, True
            top.key_lines[value] = line
        else:
            top.has_key = False
            if len(stack) <= 2 and all(isinstance(s.value, dict) for s in stack) and top.key is not _MERGE:
                positions[tuple(s.key for s in stack)] = (line, column)
            if top.key is _MERGE:
                sources = value if isinstance(value, list) else [value]
                if not all(isinstance(s, dict) for s in sources):
                    raise YamlProblem(
                        line,
                        column,
                        "a merge (<<) takes a mapping or a list of mappings",
                        fix="merge an anchored mapping: <<: *name",
                    )
                top.merges.extend(sources)
            else:
                top.value[top.key] = value

    for event in events:
        line, column = _where(event)
        if isinstance(event, ev.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise YamlProblem(
                    line,
                    column,
                    "a second YAML document (---): a stack file holds one",
                    fix="remove the second document, or move it into its own file",
                )
        elif isinstance(event, ev.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise YamlProblem(
                    line,
                    column,
                    f"more than {MAX_ALIASES:,} aliases (*name) in one document",
                    fix="write the values out instead of aliasing them",
                )
            if event.anchor in open_anchors:
                raise YamlProblem(
                    line,
                    column,
                    f"the alias *{event.anchor} refers to a value that contains it: "
                    f"a cycle that no configuration can hold",
                    f"*{event.anchor}",
                    fix=f"remove *{event.anchor} from inside &{event.anchor}",
                )
            if event.anchor not in anchors:
                raise YamlProblem(
                    line,
                    column,
                    f"the alias *{event.anchor} has no anchor &{event.anchor} before it",
                    f"*{event.anchor}",
                    fix=f"define &{event.anchor} before using *{event.anchor}",
                )
            value, size = anchors[event.anchor]
            add(value, size, line, column)
        elif isinstance(event, ev.ScalarEvent):
            value = _scalar(event, line, column)
            if event.anchor:
                anchors[event.anchor] = (value, 1)
                open_anchors.pop(event.anchor, None)  # redefined: the name now means this scalar
            if (
                raw_under is not None
                and value is not None
                and len(stack) == 2
                and stack[0].key == raw_under
                and isinstance(stack[1].value, dict)
                and stack[1].has_key
            ):
                value = event.value  # a config value as the CLI reads it: its text
            plain_merge = event.value == "<<" and event.tag is None and bool(event.implicit[0])
            add(value, 1, line, column, plain_merge)
        elif isinstance(event, (ev.SequenceStartEvent, ev.MappingStartEvent)):
            is_map = isinstance(event, ev.MappingStartEvent)
            if event.tag not in (None, "!", COLLECTION_TAGS["map" if is_map else "seq"]):
                raise YamlProblem(
                    line,
                    column,
                    f"unknown tag {event.tag}",
                    event.tag,
                    fix="remove the tag: a stack file uses plain YAML mappings, lists and scalars",
                )
            if len(stack) >= MAX_DEPTH:
                raise YamlProblem(
                    line,
                    column,
                    f"nested more than {MAX_DEPTH} levels deep",
                    fix="flatten the value: a stack file needs a handful of levels",
                )
            stack.append(_Open({} if is_map else [], line, column, event.anchor))
            if event.anchor:
                anchors.pop(event.anchor, None)
                open_anchors[event.anchor] = stack[-1]
        elif isinstance(event, (ev.SequenceEndEvent, ev.MappingEndEvent)):
            done = stack.pop()
            for source in done.merges:  # keys written in the mapping win over merged ones
                for key, value in source.items():
                    done.value.setdefault(key, value)
            if done.anchor and open_anchors.get(done.anchor) is done:  # not redefined inside itself
                del open_anchors[done.anchor]
                anchors[done.anchor] = (done.value, done.size)
            add(done.value, done.size, done.line, done.column)
    return result


_MERGE = object()
"""The pending key of a ``<<`` merge (YAML 1.1 merge keys; the CLI's YAML library honours them too)."""


def _scalar(event: Any, line: int, column: int) -> Any:
    text = event.value
    if event.tag is None:
        return resolve_plain(text) if event.implicit[0] else text
    if event.tag == "!":
        return text  # the non-specific tag: a string
    convert = _TAGGED.get(event.tag)
    if convert is None:
        raise YamlProblem(
            line,
            column,
            f"unknown tag {event.tag}",
            event.tag,
            fix="remove the tag (quote the value if it must stay a string)",
        )
    try:
        return convert(text)
    except _TagMismatch:
        raise YamlProblem(
            line,
            column,
            f"{text!r} is not a valid {event.tag.removeprefix(CORE)}",
            text,
            fix="fix the value or remove the tag",
        ) from None


def _scalar_text(value: Any) -> str:
    if value is None:
        return "~"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
