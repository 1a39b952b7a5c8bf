"""security-default-credentials: no publicly known default credential is deployed (Helm values, ConfigMaps,
Secrets)."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.helm_values import VALUE_CARRIERS, carried_strings, subject_of
from policies.resources import CONFIG_MAP, SECRET
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import as_dict
from catalog.known_defaults import KNOWN_DEFAULTS

ID = "security-default-credentials"
SUBSTRING_MIN = 16
"""Long defaults (hashes, generated secrets) are also found inside config blobs; short ones must match exactly."""
SCOPED_TYPES = (SECRET, CONFIG_MAP)


def _matches(text: str, default: str) -> bool:
    if len(default) >= SUBSTRING_MIN:
        return default in text
    return text.strip().lower() == default.lower()


def _hit(resource: Resource, key: str, text: str, defaults: list[dict]) -> dict | None:
    """The known default ``text`` is, if any. A default scoped to an upstream Secret counts only under its key in a
    Secret or ConfigMap of that name, and only verbatim (passwords are case-sensitive; the empty one is one too)."""
    name = as_dict(resource.props.get("metadata")).get("name")
    for d in defaults:
        if d.get("secret"):
            if resource.type in SCOPED_TYPES and name == d["secret"] and key == d.get("key") and text == d["value"]:
                return d
        elif d["value"] and _matches(text, d["value"]):
            return d
    return None


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    defaults = cfg["knownDefaults"]
    for path, key, text in carried_strings(resource):
        hit = _hit(resource, key, text, defaults)
        if hit is None:
            continue
        subject, keys = subject_of(resource)
        yield Finding(
            subject,
            "a publicly known default credential is deployed, so anyone who knows it can log in",
            observed=f"{path} is {hit['what']}, which is published upstream",
            required="a credential generated for this deployment",
            fix="generate it (pulumi_random.RandomPassword; bcrypt it for Dex), keep it in a Secret and reference that",
            keys=keys,
        )


RULE = register(
    Rule(
        id=ID,
        title="No known default credentials",
        category=Category.SECURITY,
        description="No Helm release value, ConfigMap or Secret contains a publicly known default credential.",
        why=(
            "Kubeflow's manifests ship a static user (12341234), OIDC client secret and cookie secret; Katib's MySQL "
            "root password is `test`, Kubeflow Pipelines' MinIO keys are minio/minio123 and its MySQL root password is "
            "empty. Attackers scan for exposed dashboards and services and log in with them, and GPU clusters are a "
            "favourite target for cryptomining. A known cookie secret also lets anyone forge sessions. gpu-cluster "
            "rewrites the Katib and Pipelines Secrets before they are created; this rule catches a rewrite that stops "
            "matching (the CLI checks each Secret of a kustomize Directory)."
        ),
        remediation=(
            "1. Generate every credential per deployment (pulumi_random.RandomPassword; bcrypt for Dex). "
            "2. Keep it in a Secret and reference it. 3. Add organisation-specific defaults to knownDefaults "
            "(with `secret` and `key` to look for a short or empty one only in that upstream Secret)."
        ),
        severity=Severity.CRITICAL,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=VALUE_CARRIERS,
        check=check,
        config={
            "knownDefaults": {
                "type": "array",
                "default": [d.as_config() for d in KNOWN_DEFAULTS],
                "items": {
                    "type": "object",
                    "required": ["value", "what"],
                    "additionalProperties": False,
                    "properties": {
                        "value": {"type": "string"},
                        "what": {"type": "string"},
                        "secret": {"type": "string", "minLength": 1},
                        "key": {"type": "string", "minLength": 1},
                    },
                    "dependencies": {"secret": ["key"], "key": ["secret"]},
                    "anyOf": [{"required": ["secret"]}, {"properties": {"value": {"minLength": 4}}}],
                },
                "description": (
                    "Credentials that must never be deployed: `value` and `what` it is (shown in messages); "
                    "with `secret` and `key`, only that key of a Secret or ConfigMap of that name is checked "
                    "(required for values shorter than 4 characters, e.g. an empty password)."
                ),
            }
        },
    ),
    order=4130,
)
