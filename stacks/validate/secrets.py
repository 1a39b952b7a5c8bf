"""Secrets set in the stack config (``pulumi config set --secret``): which keys are secret, what may be one, and how
a secret never reaches a message.

The Pulumi CLI decrypts ``secure:`` values and tells the program which top-level keys held one
(``PULUMI_CONFIG_SECRET_KEYS``; a key is secret when any leaf inside it is). Only settings the program can keep
secret all the way to the provider may be secret: ``accountId`` (wrapped in ``Output.secret`` for the AWS provider's
``allowedAccountIds``). Every other setting becomes resource names, labels or rendered files that the clouds store
and return in plaintext, so a secret there is refused with the reason instead of silently leaking.

The offline preview cannot decrypt: a ``secure:`` value becomes ``SECRET_PLACEHOLDER``, which validation accepts in
place of a format it cannot check, and which the preview shows as ``[secret]``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from stacks.validate.issues import NAMESPACE, Issues, SpecIssue, path_of

SECRET_PLACEHOLDER = "[secret]"
SECRET_CAPABLE = {"accountId": "the AWS provider's allowedAccountIds, as a Pulumi secret"}
"""Settings that may be secret, and where the secret goes."""
MIN_MASKED_LENGTH = 4
"""Shorter values are not replaced inside message text (they would mangle words); the value shown is always masked."""
WHY_PLAINTEXT = {
    "labels": "cloud labels are plaintext on every resource and in billing exports; Pulumi cannot encrypt them",
    "project": "the project ID is part of resource IDs, service account e-mails and the kubeconfig, which the "
    "provider returns in plaintext",
}
WHY_PLAINTEXT_DEFAULT = (
    "its values become resource names, node labels and rendered configs, which the clouds store and return in plaintext"
)


def is_secure_value(value: Any) -> bool:
    """A ``{secure: <ciphertext>}`` value as written in ``Pulumi.<stack>.yaml``."""
    return isinstance(value, dict) and set(value) == {"secure"}


def has_secure_value(value: Any) -> bool:
    if is_secure_value(value):
        return True
    if isinstance(value, dict):
        return any(has_secure_value(v) for v in value.values())
    if isinstance(value, list):
        return any(has_secure_value(v) for v in value)
    return False


def secure_keys(config: dict[str, Any]) -> list[str]:
    """The keys of a stack file's ``config:`` that hold a ``secure:`` value anywhere, as the CLI lists them."""
    return sorted(k for k, v in config.items() if has_secure_value(v))


def with_placeholders(value: Any) -> Any:
    """``value`` with each ``secure:`` leaf replaced by ``SECRET_PLACEHOLDER`` (offline: nothing to decrypt with)."""
    if is_secure_value(value):
        return SECRET_PLACEHOLDER
    if isinstance(value, dict):
        return {k: with_placeholders(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_placeholders(v) for v in value]
    return value


def names_in_namespace(keys: Iterable[str]) -> set[str]:
    """``gpu-cluster:accountId`` -> ``accountId``; keys of other namespaces (``aws:…``) are not ours."""
    return {k.partition(":")[2] for k in keys if k.partition(":")[0] == NAMESPACE}


def check_secret_keys(issues: Issues, raw: dict[str, Any], secret: set[str]) -> None:
    """Refuse a secret where Pulumi cannot keep it secret."""
    for key in sorted(secret & set(raw)):
        if key in SECRET_CAPABLE:
            continue
        flags = "--path " if isinstance(raw[key], (dict, list)) else ""
        issues.error(
            key,
            f"set as a secret, but {WHY_PLAINTEXT.get(key, WHY_PLAINTEXT_DEFAULT)}",
            SECRET_PLACEHOLDER,
            allowed="secrets only in " + ", ".join(f"{NAMESPACE}:{k} ({where})" for k, where in SECRET_CAPABLE.items()),
            fix=f"store it in plaintext: pulumi config set --plaintext {flags}'{NAMESPACE}:{key}…' VALUE "
            "(the `secure:` value goes away); if it really is a secret, it does not belong in this setting",
        )


def secret_format_unknown(secret: set[str], key: str, value: Any) -> bool:
    """True when ``value`` is the offline placeholder of a secret key: its format cannot be checked here."""
    return key in secret and value == SECRET_PLACEHOLDER


def masked(found: list[SpecIssue], raw: dict[str, Any], secret: set[str]) -> list[SpecIssue]:
    """``found`` with every secret value replaced by ``[secret]``: in the value shown and in the text around it."""
    leaves = sorted(
        {
            s
            for k in secret
            if k in raw
            for s in _strings(raw[k])
            if s != SECRET_PLACEHOLDER and len(s) >= MIN_MASKED_LENGTH
        },
        key=len,
        reverse=True,
    )
    paths = tuple(path_of(k) for k in secret)
    out = []
    for issue in found:
        under = any(issue.path == p or issue.path.startswith((p + ".", p + "[")) for p in paths)
        hidden = under or (isinstance(issue.value, (str, int)) and str(issue.value) in leaves)
        value = SECRET_PLACEHOLDER if hidden and issue.value is not None else issue.value
        texts = [issue.problem, issue.allowed, issue.fix]
        for leaf in leaves:
            texts = [t.replace(leaf, SECRET_PLACEHOLDER) if t else t for t in texts]
        if (value, texts) != (issue.value, [issue.problem, issue.allowed, issue.fix]):
            issue = dataclasses.replace(issue, value=value, problem=texts[0] or "", allowed=texts[1], fix=texts[2])
        out.append(issue)
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]  # keys are never secret, values may be
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
