"""Publicly known default credentials: values gpu-cluster must never deploy. One list, read by both sides:

- ``components/k8s/manifest_secrets.py`` replaces the ones that sit in an upstream manifest's Secret (Katib, Kubeflow
  Pipelines) with generated Pulumi secrets;
- ``policies/rules/security_default_credentials.py`` refuses any of them in Helm values, ConfigMaps and Secrets (its
  ``knownDefaults`` default), so a manifest rewrite that stops working is caught by the pack under ``pulumi preview``,
  where the kustomize Directory's Secrets are registered one by one.

Plain data: no Pulumi, no pydantic; policies and components may both import it (policies never import components).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownDefault:
    value: str
    """The published value (may be empty: an empty password is a default too)."""
    what: str
    """What it is, for messages: ``the Katib MySQL root password``."""
    secret: str | None = None
    """Set for a default that lives in an upstream Secret: its ``metadata.name``. Such a default is only looked for
    under ``key`` of a Secret or ConfigMap of that name (``test`` or an empty string would match far too much
    anywhere else)."""
    key: str | None = None
    """With ``secret``: the key in the Secret's ``data``/``stringData``."""

    def as_config(self) -> dict[str, str]:
        """The policy config item (``knownDefaults`` of security-default-credentials)."""
        out = {"value": self.value, "what": self.what}
        if self.secret is not None:
            out["secret"] = self.secret
        if self.key is not None:
            out["key"] = self.key
        return out


KNOWN_DEFAULTS: tuple[KnownDefault, ...] = (
    KnownDefault(
        "$2y$12$4K/VkmDd1q1Orb3xAt82zu8gk7Ad6ReFR4LCP9UeYE90NLiN9Df72",
        "the Kubeflow Dex password hash of user@example.com / 12341234",
    ),
    KnownDefault("12341234", "the Kubeflow Dex default password"),
    KnownDefault("pUBnBOY80SnXgjibTYM9ZWNzY2xreNGQok", "the Kubeflow OIDC client secret (Dex, oauth2-proxy)"),
    KnownDefault("7d16fee92f8d11b8940b081b3f8b8acb", "the Kubeflow oauth2-proxy cookie secret"),
    KnownDefault("prom-operator", "the kube-prometheus-stack Grafana admin password"),
    KnownDefault("changeme", "a placeholder password"),
    KnownDefault("CHANGE-ME", "a placeholder secret"),
    # Katib v0.18.0 components/mysql/secret.yaml (base64 "dGVzdA=="): MySQL and the DB manager read it
    KnownDefault("test", "the Katib MySQL root password", secret="katib-mysql-secrets", key="MYSQL_ROOT_PASSWORD"),
    # Kubeflow Pipelines 2.5.0 third-party/minio: MinIO and the pipeline servers read it
    KnownDefault(
        "minio", "the Kubeflow Pipelines MinIO access key", secret="mlpipeline-minio-artifact", key="accesskey"
    ),
    KnownDefault(
        "minio123", "the Kubeflow Pipelines MinIO secret key", secret="mlpipeline-minio-artifact", key="secretkey"
    ),
    # Kubeflow Pipelines 2.5.0 base/installs/generic/mysql-secret.yaml: root with an empty password
    KnownDefault("", "the empty Kubeflow Pipelines MySQL root password", secret="mysql-secret", key="password"),
)


def upstream_secret_defaults(defaults: tuple[KnownDefault, ...] = KNOWN_DEFAULTS) -> dict[str, dict[str, str]]:
    """Upstream Secret name -> key -> its published value, for the defaults that live in a named Secret."""
    out: dict[str, dict[str, str]] = {}
    for d in defaults:
        if d.secret is not None and d.key is not None:
            out.setdefault(d.secret, {})[d.key] = d.value
    return out
