"""docs/deploy-permissions.md covers every cloud service the program creates resources in or reads from: the
provider modules the components and compose call (``gcp.compute.Firewall(...)``, ``aws.eks.get_cluster_output(...)``)
are read from the source, and each must map to the API or IAM prefix the page names. A component that starts using
a new service fails here until the page says what a deploy then needs."""

from __future__ import annotations

import re

from preview.engine import PROJECT_ROOT

PAGE = PROJECT_ROOT / "docs" / "deploy-permissions.md"
CALL = re.compile(r"\b(gcp|aws)\.([a-z0-9_]+)\.[A-Za-z_][A-Za-z0-9_]*\(")
CALLER_IDENTITY = re.compile(r"\baws\.get_caller_identity")
NEEDS = {
    ("gcp", "container"): "container.googleapis.com",
    ("gcp", "compute"): "compute.googleapis.com",
    ("gcp", "serviceaccount"): "iam.googleapis.com",
    ("gcp", "projects"): "cloudresourcemanager.googleapis.com",
    ("gcp", "organizations"): "cloudresourcemanager.googleapis.com",
    ("gcp", "kms"): "cloudkms.googleapis.com",
    ("gcp", "storage"): "storage.googleapis.com",
    ("gcp", "artifactregistry"): "artifactregistry.googleapis.com",
    ("aws", "eks"): "`eks:",
    ("aws", "iam"): "`iam:",
    ("aws", "ec2"): "`ec2:",
    ("aws", "autoscaling"): "`autoscaling:",
    ("aws", "kms"): "`kms:",
    ("aws", "s3"): "`s3:",
    ("aws", "ecr"): "`ecr:",
    ("aws", "amp"): "`aps:",
}
"""Provider module -> what the page must name for it (the API to enable on GCP, the IAM action prefix on AWS)."""


def services_used(sources: dict[str, str]) -> set[tuple[str, str]]:
    found = {(cloud, module) for text in sources.values() for cloud, module in CALL.findall(text)}
    if any(CALLER_IDENTITY.search(text) for text in sources.values()):
        found.add(("aws", "sts"))
    return found


def _sources() -> dict[str, str]:
    return {
        p.as_posix(): p.read_text(encoding="utf-8")
        for folder in ("components", "compose")
        for p in sorted((PROJECT_ROOT / folder).rglob("*.py"))
    }


def test_every_cloud_service_the_program_uses_is_on_the_page():
    page = PAGE.read_text(encoding="utf-8")
    used = services_used(_sources())
    unmapped = sorted(s for s in used - {("aws", "sts")} if s not in NEEDS)
    assert unmapped == [], "a new provider module: say on docs/deploy-permissions.md what it needs, then map it here"
    missing = sorted(f"{c}.{m}: {NEEDS[(c, m)]}" for c, m in used if (c, m) in NEEDS and NEEDS[(c, m)] not in page)
    if ("aws", "sts") in used and "`sts:GetCallerIdentity`" not in page:
        missing.append("aws caller identity: `sts:GetCallerIdentity`")
    assert missing == [], "docs/deploy-permissions.md does not name what a deploy needs for these"


def test_the_scan_finds_resources_and_data_sources_but_not_strings():
    sources = {
        "a.py": 'gcp.compute.Firewall("fw")\nx = aws.eks.get_cluster_output(name=n)\n'
        'IMAGE = "docker.io/library/mysql:8.4"\nme = aws.get_caller_identity_output()\n'
    }
    assert services_used(sources) == {("gcp", "compute"), ("aws", "eks"), ("aws", "sts")}
