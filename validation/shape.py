"""Shape checks: parse one part of the config with its pydantic model and report every failure in the user's words
(path as written, the allowed values or range, 'did you mean', the fix)."""
from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from validation.issues import Issues, Key, allowed_list, choice_fix


def parse_part(where: Issues, annotation: Any, value: Any) -> Any:
    """``value`` parsed as ``annotation``, or None after reporting each problem below ``where``."""
    try:
        return TypeAdapter(annotation).validate_python(value, by_alias=True, by_name=False)  # users write camelCase
    except ValidationError as exc:
        for err in exc.errors():
            _report(where, annotation, err)
        return None


def _report(where: Issues, root: Any, err: ErrorDetails) -> None:
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "union[")))]
    field: tuple[Key, ...] = tuple(loc)
    kind, value = err["type"], err.get("input")
    if kind == "missing":
        owner = _model_at(root, loc[:-1])
        allowed = describe(owner.model_fields[_field_name(owner, loc[-1])].annotation) if owner else None
        where.error(field, "required setting is missing", allowed=allowed, fix=f"add {'.'.join(map(str, loc))}")
    elif kind == "extra_forbidden":
        owner = _model_at(root, loc[:-1])
        keys = [f.alias or n for n, f in owner.model_fields.items()] if owner else []
        where.error(field, "unknown setting", loc[-1], allowed=allowed_list(keys),
                    fix=choice_fix("the key", loc[-1], keys, " (or remove it)"))
    elif kind == "enum":
        owner = _model_at(root, loc[:-1])
        enum = _enum_of(owner, loc[-1]) if owner else (root if isinstance(root, type) and issubclass(root, Enum) else None)
        choices = [m.value for m in enum] if enum else []
        where.error(field, "not one of the allowed values", value, allowed=allowed_list(choices),
                    fix=choice_fix("it", value, choices))
    else:
        where.error(field, err["msg"][0].lower() + err["msg"][1:], value,
                    allowed=_allowed_for(kind, err.get("ctx") or {}), fix=_fix_for(kind))


def _allowed_for(kind: str, ctx: dict) -> str | None:
    """The range a pydantic bound allows, e.g. ``1 or more`` for ``maxNodes: 0``."""
    return {
        "greater_than_equal": lambda: f"{ctx['ge']} or more",
        "greater_than": lambda: f"more than {ctx['gt']}",
        "less_than_equal": lambda: f"{ctx['le']} or less",
        "less_than": lambda: f"less than {ctx['lt']}",
        "too_short": lambda: f"at least {ctx['min_length']} entr{'y' if ctx['min_length'] == 1 else 'ies'}",
        "too_long": lambda: f"at most {ctx['max_length']} entr{'y' if ctx['max_length'] == 1 else 'ies'}",
    }.get(kind, lambda: None)()


def _fix_for(kind: str) -> str:
    return {
        "int_parsing": "write a whole number without quotes",
        "int_from_float": "write a whole number",
        "bool_parsing": "write true or false",
        "string_type": "write a string (quote it in YAML)",
        "list_type": "write a YAML list",
        "dict_type": "write a YAML mapping",
        "model_type": "write a YAML mapping of settings",
        "greater_than_equal": "raise the value",
        "less_than_equal": "lower the value",
        "too_short": "add at least one entry",
    }.get(kind, "correct the value")


def _field_name(model: type[BaseModel], alias: Any) -> str:
    for name, field in model.model_fields.items():
        if field.alias == alias or name == alias:
            return name
    return str(alias)


def _model_at(root: Any, loc: list) -> type[BaseModel] | None:
    """The pydantic model that owns the field at ``loc`` (list indexes and dict keys are skipped through)."""
    current = root
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        if isinstance(part, int):
            continue
        field = current.model_fields.get(_field_name(current, part))
        if field is None:
            return None
        current = _unwrap(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    """``list[NodePool]`` / ``NodePool | None`` -> ``NodePool``."""
    for arg in getattr(annotation, "__args__", ()) or ():
        if isinstance(arg, type) and issubclass(arg, (BaseModel, Enum)):
            return arg
        inner = _unwrap(arg)
        if inner is not arg:
            return inner
    return annotation


def optional_model(annotation: Any) -> Any:
    """``SchedulingSpec | None`` -> ``SchedulingSpec``: a value that is set is parsed as the model itself, so error
    paths (``scheduling.queues[1].quotas[0].pool``) and the allowed keys and values in messages resolve."""
    args = [a for a in getattr(annotation, "__args__", ()) or () if a is not type(None)]
    if len(args) == 1 and type(None) in annotation.__args__ and isinstance(args[0], type) \
            and issubclass(args[0], BaseModel):
        return args[0]
    return annotation


def _enum_of(model: type[BaseModel], alias: Any) -> type[Enum] | None:
    field = model.model_fields.get(_field_name(model, alias))
    if field is None:
        return None
    ann = _unwrap(field.annotation)
    return ann if isinstance(ann, type) and issubclass(ann, Enum) else None


def describe(annotation: Any) -> str:
    """What a setting takes, in words: ``a whole number``, ``gcp, aws``, ``a mapping with: name, …``."""
    if getattr(annotation, "__origin__", None) is list:
        return "a list; each entry " + describe(annotation.__args__[0])
    ann = _unwrap(annotation)
    if isinstance(ann, type) and issubclass(ann, Enum):
        return allowed_list(m.value for m in ann)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return "a mapping with: " + ", ".join(f.alias or n for n, f in ann.model_fields.items() if f.is_required())
    plain = {int: "a whole number", str: "a string", bool: "true or false", float: "a number"}
    if ann in plain:
        return plain[ann]
    return getattr(ann, "__name__", str(ann))
