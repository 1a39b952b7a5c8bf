"""Credentials in labels and taints are refused: cloud labels land in billing exports and asset inventories, node
labels and taints are readable by anyone who may list nodes. A value that looks like a token (a known prefix, an AWS
access key ID, a long high-entropy string) or a key named like one (``*token*``, ``*secret*``, ``*password*``,
``*api-key*``) is reported without echoing the value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from stacks.validate.issues import Issues

TOKEN_PREFIXES = {
    "hf_": "a Hugging Face token",
    "ghp_": "a GitHub token",
    "gho_": "a GitHub token",
    "ghu_": "a GitHub token",
    "ghs_": "a GitHub token",
    "ghr_": "a GitHub token",
    "github_pat_": "a GitHub token",
    "glpat-": "a GitLab token",
    "sk-": "an API secret key (OpenAI, Anthropic, Stripe style)",
    "sk_live_": "a Stripe secret key",
    "xoxb-": "a Slack token",
    "xoxp-": "a Slack token",
    "xoxa-": "a Slack token",
    "AIza": "a Google API key",
}
"""Prefixes of well-known credentials; a value is one when at least ``MIN_TOKEN_TAIL`` characters follow."""
MIN_TOKEN_TAIL = 16
AWS_KEY_ID = re.compile(r"(AKIA|ASIA)[A-Z0-9]{16}")
SECRET_KEY_WORDS = ("token", "secret", "password", "passwd", "api-key", "api_key", "apikey", "private-key")
HIGH_ENTROPY_MIN_LENGTH = 24
HIGH_ENTROPY_BITS = 4.0
"""Bits per character above which a long mixed-case alphanumeric string is taken for a generated secret. Hex digests
(commit SHAs, 4 bits at most) and words joined by '-' stay below it."""
WHERE_SECRETS_BELONG = (
    "remove it: keep secrets in a secret store (GCP Secret Manager, AWS Secrets Manager) or a "
    "Kubernetes Secret, and values the program needs in `pulumi config set --secret`"
)


def credential_kind(value: str) -> str | None:
    """What ``value`` looks like (``a GitHub token``), or None."""
    for prefix, kind in TOKEN_PREFIXES.items():
        if value.startswith(prefix) and len(value) - len(prefix) >= MIN_TOKEN_TAIL:
            return kind
    if AWS_KEY_ID.fullmatch(value):
        return "an AWS access key ID"
    if _high_entropy(value):
        return "a generated secret (a long random string)"
    return None


def secret_key_word(key: str) -> str | None:
    """The word that names ``key`` like a secret (``token`` in ``hf-token``), or None."""
    lowered = key.rpartition("/")[2].lower()
    return next((w for w in SECRET_KEY_WORDS if w in lowered), None)


def masked(value: str) -> str:
    """Enough to recognise the value, never enough to use it."""
    return f"{value[:4]}… ({len(value)} characters, not shown)"


def check_credentials(issues: Issues, raw: dict[str, Any]) -> None:
    """``labels``, each pool's ``labels`` and ``taints`` of the raw config (before any other check can echo them)."""
    labels = raw.get("labels")
    if isinstance(labels, dict):
        _check_labels(issues.at("labels"), labels, "cloud label")
    pools = raw.get("nodePools")
    for i, pool in enumerate(pools if isinstance(pools, list) else []):
        if not isinstance(pool, dict):
            continue
        scope = issues.pool(i, pool["name"]) if isinstance(pool.get("name"), str) else issues.at("nodePools", i)
        if isinstance(pool.get("labels"), dict):
            _check_labels(scope.at("labels"), pool["labels"], "node label")
        taints = pool.get("taints")
        for j, taint in enumerate(taints if isinstance(taints, list) else []):
            if isinstance(taint, dict):
                _check_pair(scope.at("taints", j), "key", taint.get("key"), "value", taint.get("value"), "taint")


def _check_labels(where: Issues, labels: dict[Any, Any], what: str) -> None:
    for key, value in labels.items():
        _check_pair(where, key, key, key, value, what)


def _check_pair(where: Issues, key_field: Any, key: Any, value_field: Any, value: Any, what: str) -> None:
    exposed = (
        "billing exports and every tool that reads resource labels"
        if what == "cloud label"
        else "anyone who may list nodes"
    )
    word = secret_key_word(key) if isinstance(key, str) else None
    if word is not None:
        where.error(
            key_field,
            f"a {what} key named like a secret ('{word}'): {what}s are plaintext, readable by {exposed}",
            key,
            allowed=f"{what}s without secrets",
            fix=f"rename the key if it holds no secret; otherwise {WHERE_SECRETS_BELONG}",
        )
    kind = credential_kind(value) if isinstance(value, str) else None
    if kind is not None and word is None:
        where.error(
            value_field,
            f"the {what} value looks like {kind}: {what}s are plaintext, readable by {exposed}",
            masked(value),
            allowed=f"{what}s without secrets",
            fix=f"if it is a credential, revoke it now and {WHERE_SECRETS_BELONG}",
        )


def _high_entropy(value: str) -> bool:
    if (
        len(value) < HIGH_ENTROPY_MIN_LENGTH
        or not value.isascii()
        or not value.replace("-", "").replace("_", "").isalnum()
    ):
        return False
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
        return False
    counts = Counter(value)
    bits = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return bits >= HIGH_ENTROPY_BITS
