"""Shape checks: parse one part of the config with its pydantic model and report every failure in the user's words
(path as written, the allowed values or range, 'did you mean', the fix)."""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from stacks.spec.scalars import read_scalar

from stacks.validate.issues import NULL, Issues, Key, allowed_list, choice_fix

_TAG = re.compile(r"(function-[a-z]+|union)\[")
"""How pydantic names a validator or a union in an error location (``function-before[_strict_scalars(), int]``)."""


def parse_part(
    where: Issues, annotation: Any, value: Any, field: FieldInfo | None = None, keep_digits: bool = False
) -> Any:
    """``value`` parsed as ``annotation``, or None after reporting each problem below ``where``. ``field``: the
    top-level setting being parsed, so a plain value (``labels``, ``region``) is read as strictly as a model field."""
    if field is not None and not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        metadata = field.metadata
        annotation = Annotated[
            annotation, BeforeValidator(lambda v: read_scalar(field.annotation, metadata, v, keep_digits=keep_digits))
        ]
    try:
        return TypeAdapter(annotation).validate_python(value, by_alias=True, by_name=False)  # users write camelCase
    except ValidationError as exc:
        for err in exc.errors():
            _report(where, annotation, err)
        return None


def _is_tag(part: Any) -> bool:
    return isinstance(part, str) and _TAG.match(part) is not None


def _report(where: Issues, root: Any, err: ErrorDetails) -> None:
    root = get_args(root)[0] if get_origin(root) is Annotated else root
    # pydantic puts its validators' and unions' tags ("function-before[...]", "union[...]") between the keys; the
    # last part of a missing or unknown key is always the user's own key, whatever it looks like
    parts = list(err["loc"])
    keep_last = err["type"] in ("missing", "extra_forbidden") and bool(parts)
    loc = [p for p in (parts[:-1] if keep_last else parts) if not _is_tag(p)] + (parts[-1:] if keep_last else [])
    field: tuple[Key, ...] = tuple(loc)
    kind, value = err["type"], err.get("input")
    if kind == "missing":
        owner = _model_at(root, loc[:-1])
        allowed = describe(owner.model_fields[_field_name(owner, loc[-1])].annotation) if owner else None
        where.error(field, "required setting is missing", allowed=allowed, fix=f"add {'.'.join(map(str, loc))}")
    elif kind == "extra_forbidden":
        owner = _model_at(root, loc[:-1])
        keys = [f.alias or n for n, f in owner.model_fields.items()] if owner else []
        where.error(
            field,
            "unknown setting",
            loc[-1],
            allowed=allowed_list(keys),
            fix=choice_fix("the key", loc[-1], keys, " (or remove it)"),
        )
    elif kind == "enum":
        owner = _model_at(root, loc[:-1])
        enum = (
            _enum_of(owner, loc[-1]) if owner else (root if isinstance(root, type) and issubclass(root, Enum) else None)
        )
        choices = [m.value for m in enum] if enum else []
        where.error(
            field,
            "not one of the allowed values",
            value,
            allowed=allowed_list(choices),
            fix=choice_fix("it", value, choices),
        )
    elif value is None and "input" in err:
        keyed = bool(loc) and isinstance(loc[-1], str)  # ``taints: [null]`` ends in a list index, not a key
        owner = _model_at(root, loc[:-1]) if keyed else None
        ann = owner.model_fields[_field_name(owner, loc[-1])].annotation if owner else (root if not loc else None)
        if ann is None and len(loc) >= 2 and isinstance(loc[-2], str):  # a list entry: say what the list takes
            lists = _model_at(root, loc[:-2])
            ann = lists.model_fields[_field_name(lists, loc[-2])].annotation if lists else None
        optional = owner is not None and not owner.model_fields[_field_name(owner, loc[-1])].is_required()
        where.error(
            field,
            "no value (null or an empty key)",
            NULL,
            allowed=describe(ann),
            fix="write a value, or remove the key to use its default" if optional else "write a value",
        )
    elif kind in ("model_type", "model_attributes_type", "dict_type") and not isinstance(value, (dict, list)):
        _report_scalar_for_mapping(where, root, loc, field, value)
    elif kind == "list_type" and isinstance(value, (str, int, float)) and loc and isinstance(loc[-1], str):
        where.error(
            field, "must be a list, not a single value", value, allowed="a YAML list", fix=f"write {loc[-1]}: [{value}]"
        )
    else:
        where.error(
            field,
            err["msg"][0].lower() + err["msg"][1:],
            value,
            allowed=_allowed_for(kind, err.get("ctx") or {}),
            fix=_fix_for(kind, where.path, loc, value),
        )


def _report_scalar_for_mapping(where: Issues, root: Any, loc: list, field: tuple[Key, ...], value: Any) -> None:
    """``capacity: spot``: name the keys the mapping takes and show the mapping the user probably meant."""
    if loc and isinstance(loc[-1], int):  # a list entry (``imageMirrors: [false]``): the list's entry model
        model: Any = _model_at(root, loc)
    else:
        owner = _model_at(root, loc[:-1]) if loc else None
        model = _unwrap(owner.model_fields[_field_name(owner, loc[-1])].annotation if owner else root)
    name = str(loc[-1]) if loc and isinstance(loc[-1], str) else "it"
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        where.error(
            field,
            "must be a mapping (key: value pairs), not a single value",
            value,
            allowed="a YAML mapping",
            fix=f"write {name}: {{key: value}}",
        )
        return
    keys = [f.alias or n for n, f in model.model_fields.items()]
    example = _example_key(model, value)
    where.error(
        field,
        "must be a mapping of settings, not a single value",
        value,
        allowed="a mapping with the keys " + allowed_list(keys),
        fix=f"write {name}: {{{example}: {_yaml_scalar(value)}}}" if example else f"write {name}: {{{keys[0]}: …}}",
    )


def _example_key(model: type[BaseModel], value: Any) -> str | None:
    """The key whose allowed values include ``value`` (``spot`` -> ``type``), else the only required key."""
    for n, f in model.model_fields.items():
        ann = _unwrap(f.annotation)
        if isinstance(ann, type) and issubclass(ann, Enum) and value in [m.value for m in ann]:
            return f.alias or n
    required = [f.alias or n for n, f in model.model_fields.items() if f.is_required()]
    return required[0] if len(required) == 1 else None


def _yaml_scalar(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _allowed_for(kind: str, ctx: dict) -> str | None:
    """The range a pydantic bound allows, e.g. ``1 or more`` for ``maxNodes: 0``."""
    return {
        "greater_than_equal": lambda: f"{ctx['ge']} or more",
        "greater_than": lambda: f"more than {ctx['gt']}",
        "less_than_equal": lambda: f"{ctx['le']} or less",
        "less_than": lambda: f"less than {ctx['lt']}",
        "too_short": lambda: f"at least {ctx['min_length']} entr{'y' if ctx['min_length'] == 1 else 'ies'}",
        "too_long": lambda: f"at most {ctx['max_length']} entr{'y' if ctx['max_length'] == 1 else 'ies'}",
        "int_from_bool": lambda: f"a whole number, {ctx['range']}",
        "int_not_finite": lambda: f"a whole number, {ctx['range']}",
        "int_fraction": lambda: f"a whole number, {ctx['range']}",
        "int_out_of_range": lambda: f"a whole number, {ctx['range']}",
        "bool_strict": lambda: "true or false",
    }.get(kind, lambda: None)()


def _fix_for(kind: str, scope: str, loc: list, value: Any) -> str:
    """The fix in YAML and, where the Pulumi CLI's own encoding may be the cause (it writes true/false and integers
    as such under --path), with ``pulumi config set``."""
    suffix = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
    key = scope + (suffix.lstrip(".") if scope.endswith(":") else suffix)
    cli_path = "--path " if any(c in key.partition(":")[2] for c in ".[") else ""
    return {
        "int_parsing": "write a whole number without quotes",
        "int_from_float": "write a whole number",
        "int_from_bool": "write a whole number, not true or false",
        "int_not_finite": "write a whole number",
        "int_fraction": "write a whole number",
        "int_out_of_range": "write a number in the allowed range",
        "bool_parsing": "write true or false",
        "bool_strict": f"write true or false, unquoted in YAML (with the CLI: pulumi config set {cli_path}'{key}' "
        "false; --path stores true/false as booleans)",
        "string_type": f"write a string: quote it in YAML (with the CLI: pulumi config set --type string {cli_path}"
        f"'{key}' VALUE)"
        if isinstance(value, (bool, int))
        else "write a string (quote it in YAML)",
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
    if (
        len(args) == 1
        and type(None) in annotation.__args__
        and isinstance(args[0], type)
        and issubclass(args[0], BaseModel)
    ):
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
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
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
