"""Name syntax shared by several checks (Kubernetes labels and taints, DNS labels) and how messages name a cloud."""

from __future__ import annotations

import re

from catalog import Cloud

DNS_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
"""Cluster and pool names: lower-case, starting with a letter (the length limit is the caller's)."""
LABEL_NAME = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_KEY_RULE = "[prefix/]name: name ≤ 63 alphanumerics, '-', '_' or '.'; prefix a DNS subdomain"
CLOUD_NAME = {Cloud.GCP: "a GCP", Cloud.AWS: "an AWS"}
"""For messages: 'p5.48xlarge is an AWS machine type'."""


def valid_label_key(key: str) -> bool:
    """Kubernetes qualified name: ``[prefix/]name`` (labels and taints share the rule)."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(LABEL_NAME.fullmatch(name))


def valid_label_value(value: str) -> bool:
    """Kubernetes label (and taint) value: at most 63 characters, alphanumeric at both ends, or empty."""
    return len(value) <= 63 and bool(LABEL_VALUE.fullmatch(value))


def other_cloud(cloud: Cloud) -> Cloud:
    return Cloud.AWS if cloud == Cloud.GCP else Cloud.GCP
