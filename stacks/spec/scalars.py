"""How one scalar of the stack config is read before its model type checks it (called by ``SpecModel``).

pydantic's lax mode reads ``maxNodes: true`` as 1 and ``deletionProtection: "off"`` as false; both are refused here.
What the Pulumi CLI itself writes is accepted where the meaning is plain: ``pulumi config set --path`` stores
``true``/``false`` as booleans and digit strings as integers, and top-level values always as strings (CLI reference
of ``pulumi config set``; pulumi/pulumi#4393, #17586, #18285). So a count may arrive as ``"4"``, a label value as
``4711`` or ``true``, a flag as ``"true"``: each becomes what the user meant. Every number stays inside int32, the
type of every count the clouds' APIs take.
"""

from __future__ import annotations

import math
import re
import types
from typing import Any, Union, get_args, get_origin

import annotated_types
from pydantic_core import PydanticCustomError

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
DIGITS = re.compile(r"-?[0-9]+")
BOOL_TEXT = {"true": True, "false": False}
"""The strings a flag may be given as (the CLI writes top-level values as strings); ``"off"``, ``"yes"``, ``1`` are
not among them: YAML 1.1 and YAML 1.2 disagree on them, and a flag that silently flips is worse than an error."""


def read_scalar(
    annotation: Any, metadata: list[Any], value: Any, *, text_from_bool: bool = False, keep_digits: bool = False
) -> Any:
    """``value`` as the field's type reads it, or a ``PydanticCustomError`` saying why not (type names in
    ``stacks/validate/shape.py``)."""
    kind = _plain(annotation)
    if value is None:
        return value
    if kind is int:
        return _read_int(value, metadata)
    if kind is bool:
        return _read_bool(value)
    if kind is str:
        return _read_text(value, text_from_bool=text_from_bool, keep_digits=keep_digits)
    if get_origin(kind) is dict and get_args(kind) == (str, str) and isinstance(value, dict):
        return {k: _read_text(v, text_from_bool=True) for k, v in value.items()}
    return value


def int_range(metadata: list[Any]) -> tuple[int, int]:
    """The closed range a whole-number field allows: its own bounds, never past int32."""
    lo, hi = INT32_MIN, INT32_MAX
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            lo = max(lo, math.ceil(item.ge))  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Gt):
            lo = max(lo, math.floor(item.gt) + 1)  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Le):
            hi = min(hi, math.floor(item.le))  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Lt):
            hi = min(hi, math.ceil(item.lt) - 1)  # type: ignore[call-overload]
    return lo, hi


def _read_int(value: Any, metadata: list[Any]) -> Any:
    lo, hi = int_range(metadata)
    ctx = {"range": f"{lo} … {hi}"}
    if isinstance(value, bool):
        raise PydanticCustomError("int_from_bool", "A boolean where a whole number is expected", ctx)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PydanticCustomError("int_not_finite", "Not a finite number", ctx)
        if not value.is_integer():
            raise PydanticCustomError("int_fraction", "A number with a fraction where a whole number is expected", ctx)
        value = int(value)
    elif isinstance(value, str) and DIGITS.fullmatch(value.strip()):
        value = int(value)  # "4": a count set with `--type string`, or a top-level value
    if isinstance(value, int) and not INT32_MIN <= value <= INT32_MAX:
        raise PydanticCustomError("int_out_of_range", "Number out of range", ctx)
    return value


def _read_bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in BOOL_TEXT:
        return BOOL_TEXT[value.strip().lower()]
    raise PydanticCustomError("bool_strict", "Not true or false")


def _read_text(value: Any, *, text_from_bool: bool, keep_digits: bool = False) -> Any:
    if isinstance(value, bool):
        return ("true" if value else "false") if text_from_bool else value
    if isinstance(value, int) and not keep_digits:
        return str(value)  # `pulumi config set --path 'gpu-cluster:labels.cost-center' 4711` writes an integer
    return value


def _plain(annotation: Any) -> Any:
    """``int | None`` -> ``int``; anything else as it is."""
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation
