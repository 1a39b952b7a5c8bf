"""Control characters: refused in every string of the stack config (values and keys), in one place.

A name pattern checked with ``re.match(r"…$")`` let ``name: "l4\\n"`` through (``$`` matches before a trailing
newline) and the node label became ``gpu-cluster/pool: "l4\\n"``. Every pattern now uses ``fullmatch``; this check
makes sure no string carries a line break, a terminal escape or an invisible direction override into a resource
name, a label, a rendered config file or a message, whatever field it sits in.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from stacks.validate.issues import Issues, is_control


def control_character(text: str) -> str | None:
    """The first control character of ``text``, described (``U+000A LINE FEED``), or None."""
    for ch in text:
        if is_control(ch):
            name = unicodedata.name(ch, "") or {
                "\n": "LINE FEED",
                "\t": "TAB",
                "\r": "CARRIAGE RETURN",
                "\x1b": "ESCAPE",
                "\x00": "NULL",
                "\x7f": "DELETE",
            }.get(ch, "")
            return f"U+{ord(ch):04X} {name}".rstrip()
    return None


def check_control_characters(issues: Issues, raw: dict[str, Any]) -> set[str]:
    """Report each string (or key) of ``raw`` that holds a control character; return the paths reported, so other
    checks' complaints about the same value can be dropped (one message per cause)."""
    before = len(issues)
    for key, value in raw.items():
        scope = issues.at(key)
        if key == "nodePools" and isinstance(value, list):
            for i, pool in enumerate(value):
                name = pool.get("name") if isinstance(pool, dict) else None
                _walk(issues.pool(i, name) if isinstance(name, str) else scope.at(i), pool)
        else:
            _walk(scope, value)
    return {issue.path for issue in issues.found[before:]}


def _walk(where: Issues, value: Any) -> None:
    if isinstance(value, str):
        _check(where, None, value)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                _check(where, k, k, key=True)
            _walk(where.at(k) if isinstance(k, (str, int)) else where, v)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _walk(where.at(i), item)


def _check(where: Issues, field: str | None, text: str, key: bool = False) -> bool:
    found = control_character(text)
    if found is None:
        return False
    what = "key" if key else "value"
    where.error(
        field,
        f"the {what} contains a control character ({found})",
        text,
        allowed="printable characters only: no line breaks, tabs, escape codes or invisible direction marks",
        fix=f"retype the {what} without it (in YAML a trailing newline comes from a `|` block or a \\n "
        "escape in double quotes)",
    )
    return True
