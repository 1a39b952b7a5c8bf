"""security-default-credentials: no publicly known default credential is deployed (Helm values, ConfigMaps,
Secrets)."""
from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.helm_values import VALUE_CARRIERS, carried_strings, subject_of
from policies.rule import Category, Config, Resource, Rule

ID = "security-default-credentials"
SUBSTRING_MIN = 16
"""Long defaults (hashes, generated secrets) are also found inside config blobs; short ones must match exactly."""
KNOWN_DEFAULTS = [
    {"value": "$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72",
     "what": "the Kubeflow Dex password hash of user@example.com / 12341234"},
    {"value": "12341234", "what": "the Kubeflow Dex default password"},
    {"value": "pUBnBOY80SnXgjibTYM9ZWNzY2xreNGQok", "what": "the Kubeflow OIDC client secret (Dex, oauth2-proxy)"},
    {"value": "7d16fee92f8d11b8940b081b3f8b8acb", "what": "the Kubeflow oauth2-proxy cookie secret"},
    {"value": "prom-operator", "what": "the kube-prometheus-stack Grafana admin password"},
    {"value": "changeme", "what": "a placeholder password"},
    {"value": "CHANGE-ME", "what": "a placeholder secret"},
]


def _matches(text: str, default: str) -> bool:
    if len(default) >= SUBSTRING_MIN:
        return default in text
    return text.strip().lower() == default.lower()


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    defaults = cfg["knownDefaults"]
    for path, _, text in carried_strings(resource):
        hit = next((d for d in defaults if _matches(text, d["value"])), None)
        if hit is None:
            continue
        subject, keys = subject_of(resource)
        yield Finding(subject, f"{path} is {hit['what']}, which is published upstream",
                      "a credential generated for this deployment",
                      "generate it (pulumi_random.RandomPassword; bcrypt it for Dex), keep it in a Secret and "
                      "reference that; anyone who knows the upstream default can log in", keys)


RULE = Rule(
    id=ID, title="No known default credentials", category=Category.SECURITY,
    description="No Helm release value, ConfigMap or Secret contains a publicly known default credential.",
    why=("Kubeflow's manifests ship a static user (12341234), OIDC client secret and cookie secret; attackers "
         "scan for exposed dashboards and log in with them, and GPU clusters are a favourite target for "
         "cryptomining. A known cookie secret also lets anyone forge sessions."),
    remediation=("1. Generate every credential per deployment (pulumi_random.RandomPassword; bcrypt for Dex). "
                 "2. Keep it in a Secret and reference it. 3. Add organisation-specific defaults to knownDefaults."),
    severity=Severity.CRITICAL, enforcement=EnforcementLevel.MANDATORY, applies_to=VALUE_CARRIERS, check=check,
    config={"knownDefaults": {
        "type": "array", "default": KNOWN_DEFAULTS,
        "items": {"type": "object", "required": ["value", "what"], "additionalProperties": False,
                  "properties": {"value": {"type": "string", "minLength": 4}, "what": {"type": "string"}}},
        "description": "Credentials that must never be deployed: `value` and `what` it is (shown in messages)."}},
)
