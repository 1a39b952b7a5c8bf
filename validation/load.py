"""Raw stack config -> StackSpec, or one SpecError listing every problem (shape and meaning) at once."""
from __future__ import annotations

import json
from enum import Enum
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from catalog import Catalog, Cloud, load_catalog, load_mig_catalog
from validation import stack_checks as v
from stacks.gpu_runtime_spec import GpuRuntime
from validation.fabric import check_fabric
from validation.maintenance import check_maintenance
from validation.node_storage import check_local_ssd
from validation.gpu_runtime import check_gpu_runtime
from validation.scheduling import check_scheduling
from validation.slurm import check_slurm
from validation.issues import NAMESPACE, SpecError, SpecIssue, allowed_list, choice_fix, path_of, sort_key
from stacks.spec import TOP_LEVEL_KEYS, ClusterSpec, NodePool, StackSpec


def decode_config(flat: dict[str, Any]) -> dict[str, Any]:
    """``{"gpu-cluster:nodePools": "[...]"}`` -> ``{"nodePools": [...]}``; values may be JSON strings or objects."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        namespace, _, name = key.partition(":")
        if namespace != NAMESPACE:
            continue
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass  # a plain string such as a region name
            if isinstance(value, (int, float)) and not isinstance(value, bool) and name in ("accountId", "project"):
                value = flat[key]  # keep IDs as typed: "012345678901" must not lose its zero
        out[name] = value
    return out


def load_spec(raw: dict[str, Any], catalog: Catalog | None = None) -> tuple[StackSpec, list[SpecIssue]]:
    """Validate everything; return the spec and its warnings, or raise SpecError with every error and warning."""
    cat = catalog or load_catalog()
    issues: list[SpecIssue] = []
    for key in raw:
        if key not in TOP_LEVEL_KEYS:
            issues.append(SpecIssue(path_of(key), "unknown setting", key, allowed_list(TOP_LEVEL_KEYS),
                                    choice_fix("the key", key, TOP_LEVEL_KEYS, " (or remove it)")))
    parts: dict[str, Any] = {}
    unparsed: set[str] = set()
    parsed_pools: list[tuple[int, NodePool, set[str]]] = []
    for name, field in StackSpec.model_fields.items():
        alias = field.alias or name
        if alias not in raw:
            if field.is_required():
                issues.append(SpecIssue(path_of(alias), "required setting is missing", None,
                                        _describe(field.annotation), f"add {NAMESPACE}:{alias} to the stack config"))
            continue
        if name == "node_pools":
            parsed_pools = _parse_pools(raw[alias], issues)
            continue
        annotation = field.annotation if raw[alias] is None else _optional_model(field.annotation)
        parsed = _parse_part(annotation, raw[alias], (alias,), issues)
        if parsed is not None:
            parts[name] = parsed
        elif raw[alias] is not None:
            unparsed.add(name)  # already reported; later checks must not also call it "missing"

    pools = [(i, pool) for i, pool, dropped in parsed_pools if not dropped]  # cross-section checks: whole pools only
    cloud: Cloud | None = parts.get("cloud")
    region: str | None = parts.get("region")
    cluster: ClusterSpec | None = parts.get("cluster")
    if cloud is not None:
        issues += v.check_account(cloud, parts.get("project"), parts.get("account_id"),
                                  project_given="project" in unparsed)
        if region is not None:
            issues += v.check_region(cat, cloud, region)
            if not cat.zones(cloud, region):
                region = None
        if cluster is not None:
            issues += v.check_cluster(cat, cloud, region, cluster) + check_maintenance(cloud, cluster)
        for i, pool, dropped in parsed_pools:
            issues += [x for x in v.check_pool(cat, cloud, region, cluster, i, pool) if _independent(x, i, dropped)]
        if "gpu_runtime" not in unparsed:  # a section that failed its shape check would only add noise here
            issues += check_gpu_runtime(cat, load_mig_catalog(), cloud, parts.get("gpu_runtime") or GpuRuntime(), pools)
        issues += check_fabric(cloud, pools) + check_local_ssd(cloud, pools)
    issues += v.check_labels(parts.get("labels", {}), ("labels",), resource_labels=True)
    issues += v.check_pool_names(pools)
    if parts.get("scheduling") is not None:
        issues += check_scheduling(cat, cloud, raw.get("nodePools"), pools, parts["scheduling"])
        issues += check_slurm(cat, cloud, pools, parts["scheduling"],
                              None if "gpu_runtime" in unparsed else parts.get("gpu_runtime") or GpuRuntime())

    issues.sort(key=sort_key)
    if any(not i.warning for i in issues):
        raise SpecError(issues)
    spec = StackSpec.model_validate(raw, by_alias=True, by_name=False)
    return spec, [i for i in issues if i.warning]


# Pool-level checks that also read another field: when that field failed its shape check, the check is skipped
# for the pool (its answer would rest on a default the user did not choose).
POOL_CHECK_INPUTS = {"machineType": {"accelerator"}, "accelerator": {"machineType"},
                     "zones": {"multiNode"}, "maxNodes": {"multiNode"}, "minNodes": {"maxNodes"},
                     "upgrade": {"capacity"}, "multiNode": {"machineType", "zones"}}


def _parse_pools(value: Any, issues: list[SpecIssue]) -> list[tuple[int, NodePool, set[str]]]:
    """Parse each pool; a pool whose optional fields are malformed is still checked on the fields that parsed.

    Returns ``(index, pool, fields dropped because they failed their shape check)``.
    """
    if not isinstance(value, list) or not value:
        issues.append(SpecIssue(path_of("nodePools"), "must be a non-empty list of GPU pools", value,
                                "a YAML list of pools", "add at least one pool with name, machineType, zones, maxNodes"))
        return []
    pools: list[tuple[int, NodePool, set[str]]] = []
    for i, item in enumerate(value):
        before = len(issues)
        parsed = _parse_part(NodePool, item, ("nodePools", i), issues)
        if parsed is not None:
            pools.append((i, parsed, set()))
            continue
        recovered = _recover_pool(item, issues[before:], i)
        if recovered is not None:
            pools.append((i, recovered[0], recovered[1]))
    return pools


def _recover_pool(item: Any, errors: list[SpecIssue], i: int) -> tuple[NodePool, set[str]] | None:
    """The pool without its malformed optional fields, so the catalog checks still run on the rest."""
    if not isinstance(item, dict):
        return None
    prefix = path_of("nodePools", i) + "."
    bad = {e.path[len(prefix):].split(".")[0].split("[")[0] for e in errors if e.path.startswith(prefix)}
    required = {f.alias for f in NodePool.model_fields.values() if f.is_required()}
    if not bad or bad & required:
        return None
    try:
        kept = {k: v for k, v in item.items() if k not in bad}
        return NodePool.model_validate(kept, by_alias=True, by_name=False), bad
    except ValidationError:
        return None


def _independent(issue: SpecIssue, i: int, dropped: set[str]) -> bool:
    """False when the issue's check read a field that failed its shape check (see POOL_CHECK_INPUTS)."""
    prefix = path_of("nodePools", i) + "."
    if not dropped or not issue.path.startswith(prefix):
        return True
    field = issue.path[len(prefix):].split(".")[0].split("[")[0]
    if field == "machineType" and "price" in issue.problem and dropped & {"capacity", "accelerator"}:
        return False  # the price depends on the capacity type and the attached GPUs
    return field not in dropped and not (POOL_CHECK_INPUTS.get(field, set()) & dropped)


def _parse_part(annotation: Any, value: Any, where: tuple, issues: list[SpecIssue]) -> Any:
    try:
        return TypeAdapter(annotation).validate_python(value, by_alias=True, by_name=False)  # users write camelCase
    except ValidationError as exc:
        for err in exc.errors():
            issues.append(_from_pydantic(annotation, err, where))
        return None


def _from_pydantic(root: Any, err: ErrorDetails, where: tuple) -> SpecIssue:
    loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "union[")))]
    path = path_of(*where, *loc)
    kind, value = err["type"], err.get("input")
    if kind == "missing":
        owner = _model_at(root, loc[:-1])
        allowed = _describe(owner.model_fields[_field_name(owner, loc[-1])].annotation) if owner else None
        return SpecIssue(path, "required setting is missing", None, allowed, f"add {'.'.join(map(str, loc))}")
    if kind == "extra_forbidden":
        owner = _model_at(root, loc[:-1])
        keys = [f.alias or n for n, f in owner.model_fields.items()] if owner else []
        return SpecIssue(path, "unknown setting", loc[-1], allowed_list(keys),
                         choice_fix("the key", loc[-1], keys, " (or remove it)"))
    if kind == "enum":
        owner = _model_at(root, loc[:-1])
        enum = _enum_of(owner, loc[-1]) if owner else (root if isinstance(root, type) and issubclass(root, Enum) else None)
        choices = [m.value for m in enum] if enum else []
        return SpecIssue(path, "not one of the allowed values", value, allowed_list(choices),
                         choice_fix("it", value, choices))
    return SpecIssue(path, err["msg"][0].lower() + err["msg"][1:], value, _allowed_for(kind, err.get("ctx") or {}),
                     _fix_for(kind))


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


def _optional_model(annotation: Any) -> Any:
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


def _describe(annotation: Any) -> str:
    if getattr(annotation, "__origin__", None) is list:
        return "a list; each entry " + _describe(annotation.__args__[0])
    ann = _unwrap(annotation)
    if isinstance(ann, type) and issubclass(ann, Enum):
        return allowed_list(m.value for m in ann)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return "a mapping with: " + ", ".join(f.alias or n for n, f in ann.model_fields.items() if f.is_required())
    plain = {int: "a whole number", str: "a string", bool: "true or false", float: "a number"}
    if ann in plain:
        return plain[ann]
    return getattr(ann, "__name__", str(ann))
