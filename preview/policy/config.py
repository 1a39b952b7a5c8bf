"""Policy pack config as the Pulumi CLI builds it: schema defaults <- the pack's initialConfig <- the
``--policy-pack-config`` file, then JSON-schema validation, then ``Configure``.

Mirrors pkg/resource/analyzer/config.go (parse, applyConfig with ``all``, shallow property merge, validation of
each policy's properties against ``{type: object, properties, required}``). On top of the CLI, unknown policy
names and unknown settings in the file become warnings with "did you mean" (the CLI ignores them silently), and a
rule's former IDs (the pack lists them in each rule's waiver schema) are applied to the rule with a deprecation
warning that names the current ID.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from pulumi.runtime.proto import analyzer_pb2 as apb

from preview.policy.analyzer import LEVEL_ENUM, LEVELS, to_struct
from stacks.validate.issues import SpecIssue

ALL = "all"
VALID_LEVELS = tuple(LEVEL_ENUM)


@dataclass
class PolicyConfig:
    level: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)


class PolicyConfigError(Exception):
    def __init__(self, issues: list[SpecIssue]):
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))


def parse_config_text(text: str, source: str) -> dict[str, PolicyConfig]:
    """The file's JSON: each key maps to an enforcement level or to an object of properties (which may hold
    ``enforcementLevel``). Empty text is an empty config, as in the CLI."""
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PolicyConfigError(
            [
                SpecIssue(
                    source,
                    f"not valid JSON ({exc})",
                    fix='write the policy pack config as JSON: {"<rule id>": {"<setting>": value}}',
                )
            ]
        ) from None
    if not isinstance(doc, dict):
        raise PolicyConfigError(
            [SpecIssue(source, "must be a JSON object", type(doc).__name__, "an object keyed by rule ID")]
        )
    out, issues = {}, []
    for key, value in doc.items():
        where = f"{source}: {key}"
        if isinstance(value, str):
            if value not in VALID_LEVELS:
                issues.append(SpecIssue(where, "not a valid enforcement level", value, ", ".join(VALID_LEVELS)))
                continue
            out[key] = PolicyConfig(level=value)
        elif isinstance(value, dict):
            props = dict(value)
            level = props.pop("enforcementLevel", None)
            if level is not None and level not in VALID_LEVELS:
                issues.append(
                    SpecIssue(
                        f"{where}.enforcementLevel", "not a valid enforcement level", level, ", ".join(VALID_LEVELS)
                    )
                )
                continue
            if level is None and not props:
                continue  # the CLI drops empty entries
            out[key] = PolicyConfig(level=level, properties=props)
        else:
            issues.append(
                SpecIssue(
                    where,
                    "must be an enforcement level or an object",
                    value,
                    '"mandatory", "advisory", "disabled", or {"setting": value}',
                )
            )
    if issues:
        raise PolicyConfigError(issues)
    return out


def load_config_file(path: Path) -> dict[str, PolicyConfig]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyConfigError(
            [
                SpecIssue(
                    str(path),
                    f"cannot read the policy pack config ({exc.strerror})",
                    fix="pass an existing JSON file to --policy-pack-config",
                )
            ]
        ) from None
    return parse_config_text(text, str(path))


def _schema(policy: apb.PolicyInfo) -> dict[str, Any]:
    return json_format.MessageToDict(policy.configSchema.properties) if policy.HasField("configSchema") else {}


def former_ids(info: apb.AnalyzerInfo) -> dict[str, str]:
    """Former rule ID -> current ID. The pack lists a rule's former IDs after its ID in the ``rule`` enum of its
    waiver schema, so the mapping travels over the analyzer protocol with the rest of the metadata."""
    out = {}
    for policy in info.policies:
        waiver = (_schema(policy).get("waivers") or {}).get("items") or {}
        for former in ((waiver.get("properties") or {}).get("rule") or {}).get("enum", [])[1:]:
            out[former] = policy.name
    return out


def with_current_ids(info: apb.AnalyzerInfo, given: dict[str, PolicyConfig]) -> dict[str, PolicyConfig]:
    """``given`` keyed by current rule IDs: an entry under a former ID merges into the rule's, and an entry under
    the current ID wins where both set the same thing."""
    renamed = former_ids(info)
    out: dict[str, PolicyConfig] = {}
    for name, cfg in sorted(given.items(), key=lambda item: item[0] not in renamed):  # former IDs first
        current = out.setdefault(renamed.get(name, name), PolicyConfig())
        current.level = cfg.level or current.level
        current.properties.update(cfg.properties)
    return out


def _initial(info: apb.AnalyzerInfo) -> dict[str, PolicyConfig]:
    out = {}
    for name, pc in info.initialConfig.items():
        level = LEVELS[pc.enforcementLevel] if pc.enforcementLevel in LEVELS else None
        out[name] = PolicyConfig(level=level, properties=json_format.MessageToDict(pc.properties))
    return out


def _apply(result: dict[str, PolicyConfig], given: dict[str, PolicyConfig]) -> None:
    everything = given.get(ALL)
    if everything is not None and everything.level:
        for cfg in result.values():
            cfg.level = everything.level
    for name, cfg in given.items():
        current = result.setdefault(name, PolicyConfig())
        if cfg.level:
            current.level = cfg.level
        current.properties.update(cfg.properties)


def reconcile(
    info: apb.AnalyzerInfo,
    given: dict[str, PolicyConfig] | None,
    source: str = "policy pack config",
    defaults_known_valid: bool = False,
) -> dict[str, PolicyConfig]:
    """Defaults from each policy's schema and level, then initialConfig, then ``given``; raise on schema errors.
    ``defaults_known_valid``: the pack is the project's own, whose defaults and initialConfig a test validates
    against every rule's schema (tests/policies/test_policy_pack.py), so with nothing ``given`` there is nothing
    the validation could refuse and it is skipped (with jsonschema's import: ~0.1 s CPU of every offline preview).
    The CLI's own path (``--policy-pack-subprocess``) always validates, as ``pulumi preview`` does."""
    result = {}
    for policy in info.policies:
        defaults = {k: v["default"] for k, v in _schema(policy).items() if isinstance(v, dict) and "default" in v}
        result[policy.name] = PolicyConfig(level=LEVELS[policy.enforcementLevel], properties=defaults)
    _apply(result, _initial(info))
    _apply(result, with_current_ids(info, given or {}))
    if defaults_known_valid and not given:
        return result
    import jsonschema  # only when something can be refused (see above)

    issues = []
    for policy in info.policies:
        schema = {"type": "object", "properties": _schema(policy)}
        required = list(policy.configSchema.required) if policy.HasField("configSchema") else []
        if required:
            schema["required"] = required
        validator = jsonschema.Draft7Validator(schema)
        for err in sorted(validator.iter_errors(result[policy.name].properties), key=lambda e: list(e.path)):
            where = ".".join(str(p) for p in err.absolute_path)
            issues.append(
                SpecIssue(
                    f"{source}: {policy.name}" + (f".{where}" if where else ""),
                    err.message,
                    err.instance if not isinstance(err.instance, (dict, list)) else None,
                    fix=f"see the config knobs of {policy.name} in policies/RULES.md",
                )
            )
    if issues:
        raise PolicyConfigError(issues)
    return result


def configure_request(config: dict[str, PolicyConfig]) -> apb.ConfigureAnalyzerRequest:
    request = apb.ConfigureAnalyzerRequest()
    for name, cfg in config.items():
        request.policyConfig[name].CopyFrom(
            apb.PolicyConfig(enforcementLevel=LEVEL_ENUM[cfg.level or "advisory"], properties=to_struct(cfg.properties))
        )
    return request


def unknown_key_warnings(info: apb.AnalyzerInfo, given: dict[str, PolicyConfig], source: str) -> list[SpecIssue]:
    """Keys the CLI would silently ignore: a rule ID or a setting name that does not exist; and former rule IDs,
    which still work here (and in waivers) but should be renamed."""
    names = [p.name for p in info.policies]
    renamed = former_ids(info)
    warnings = []
    for written, cfg in given.items():
        name = written
        if name == ALL:
            continue
        warnings += _former_waiver_rules(cfg, renamed, f"{source}: {written}")
        if name in renamed:
            warnings.append(deprecated_id(f"{source}: {name}", name, renamed[name]))
            name = renamed[name]
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            warnings.append(
                SpecIssue(
                    f"{source}: {name}",
                    "no rule has this ID, so this entry does nothing",
                    name,
                    None,
                    f"did you mean {close[0]!r}?" if close else "see policies/RULES.md for the rule IDs",
                    warning=True,
                )
            )
            continue
        known = list(_schema(next(p for p in info.policies if p.name == name)))
        for key in cfg.properties:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                warnings.append(
                    SpecIssue(
                        f"{source}: {written}.{key}",
                        "this rule has no such setting, so it is ignored",
                        key,
                        ", ".join(known) or "none",
                        f"did you mean {close[0]!r}?" if close else "remove it",
                        warning=True,
                    )
                )
    return warnings


def deprecated_id(where: str, former: str, current: str) -> SpecIssue:
    return SpecIssue(
        where,
        f"{former} is a deprecated rule ID (rule IDs no longer embed the Checkov ID); it still applies to {current}",
        former,
        None,
        f"rename it to {current!r}",
        warning=True,
    )


def _former_waiver_rules(cfg: PolicyConfig, renamed: dict[str, str], where: str) -> list[SpecIssue]:
    waivers = cfg.properties.get("waivers")
    if not isinstance(waivers, list):
        return []
    return [
        deprecated_id(f"{where}.waivers[{i}].rule", w["rule"], renamed[w["rule"]])
        for i, w in enumerate(waivers)
        if isinstance(w, dict) and w.get("rule") in renamed
    ]
