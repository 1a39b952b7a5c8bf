"""Every JSON the tool prints goes through here: strict JSON (RFC 8259), which has no NaN or Infinity.

YAML 1.2 has ``.nan`` and ``.inf``; a value like that reaches the output only as the value an error message received,
and is shown as the YAML the user wrote (``".nan"``), so `json.loads(..., parse_constant=<refuse>)`, ``jq`` and
every other strict parser read every output.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by its YAML spelling (lists, tuples and dicts walked)."""
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def strict_dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` that can only produce strict JSON (``default=str`` for dates and paths, as before)."""
    return json.dumps(finite(value), allow_nan=False, default=str, **options)
