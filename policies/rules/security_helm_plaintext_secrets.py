"""security-helm-plaintext-secrets: Helm release values carry no literal credentials."""

from __future__ import annotations

import re
from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding, listing
from policies.helm_values import strings, subject_of
from policies.resources import HELM_CHART_V4, HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import as_dict

ID = "security-helm-plaintext-secrets"
SECRET_WORDS = ["password", "passwd", "secret", "token", "apikey", "privatekey", "credential", "accesskey"]
REFERENCE_SUFFIXES = (
    "name",
    "names",
    "ref",
    "path",
    "file",
    "enabled",
    "create",
    "generate",
    "length",
    "type",
    "mode",
    "format",
    "url",
    "uri",
    "endpoint",
    "header",
    "field",
    "existingsecret",
    "passwordkey",
    "tokenkey",
    "usernamekey",
    "ttl",
    "expiry",
    "annotations",
)
"""Keys that point at a credential instead of holding it: secretName, passwordKeyRef, existingSecret, tokenPath."""
PEM_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")


def _normal(key: str) -> str:
    return re.sub(r"[-_.]", "", key).lower()


def holds_credential(key: str, value: str, words: list[str]) -> bool:
    if PEM_PRIVATE_KEY.search(value):
        return True
    norm = _normal(key)
    if not value.strip() or not any(w in norm for w in words):
        return False
    return not norm.endswith(REFERENCE_SUFFIXES)


def check(resource: Resource, cfg: Config) -> Iterable[Finding]:
    words = SECRET_WORDS + [_normal(w) for w in cfg["extraKeyWords"]]
    ignored = set(cfg["ignoredPaths"])
    hits = [
        path
        for path, key, value in strings(as_dict(resource.props.get("values")), "values")
        if path not in ignored and holds_credential(key, value, words)
    ]
    if not hits:
        return
    subject, keys = subject_of(resource)
    plural = "s hold literal credentials" if len(hits) > 1 else " holds a literal credential"
    yield Finding(
        subject,
        f"values key{plural}, which Pulumi stores in state and which have leaked into outputs (pulumi/pulumi#9781)",
        observed=f"{listing(hits)} (values not shown)",
        required="credentials come from a Kubernetes Secret the chart references (existingSecret, "
        "secretRef, passwordKeyRef)",
        fix="create the Secret from a Pulumi config secret or pulumi_random value, point the chart at it "
        "and remove the literal (or list a false positive in ignoredPaths)",
        keys=keys,
    )


RULE = register(
    Rule(
        id=ID,
        title="No plaintext secrets in Helm values",
        category=Category.SECURITY,
        description="Helm release values hold no literal passwords, tokens, keys or private keys.",
        why=(
            "Helm Release values are inputs Pulumi stores in state and shows in diffs; values holding secrets have "
            "leaked into stack outputs (pulumi/pulumi#9781, pulumi-kubernetes#2003). A chart that takes a Secret "
            "reference keeps the credential out of both."
        ),
        remediation=(
            "1. Create a kubernetes Secret from a Pulumi config secret or a pulumi_random value. 2. Point the "
            "chart at it (existingSecret, secretRef, passwordKeyRef, ...). 3. Remove the literal from values. "
            "4. For a key that only looks like a credential, add its dotted path (values.a.b) to ignoredPaths."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(HELM_RELEASE, HELM_CHART_V4),
        check=check,
        config={
            "extraKeyWords": {
                "type": "array",
                "items": {"type": "string", "minLength": 3},
                "default": [],
                "description": "More key words that mark a credential (matched case- and dash-insensitive).",
            },
            "ignoredPaths": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "Dotted value paths that are not credentials, e.g. `values.auth.tokenTtl`.",
            },
        },
    ),
    order=4120,
)
