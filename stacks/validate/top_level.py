"""Top-level settings: the account or project, the region, the stack's cloud resource labels, unique pool names."""

from __future__ import annotations

import re
from typing import Iterable

from catalog import Catalog, Cloud
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues, allowed_list, choice_fix
from stacks.validate.names import CLOUD_NAME, other_cloud

GCP_PROJECT = re.compile(r"[a-z][-a-z0-9]{4,28}[a-z0-9]")
AWS_ACCOUNT = re.compile(r"[0-9]{12}")
CLOUD_LABEL_KEY = re.compile(r"[a-z][-_a-z0-9]{0,62}")
CLOUD_LABEL_VALUE = re.compile(r"[-_a-z0-9]{0,63}")


def check_account(
    issues: Issues,
    cloud: Cloud,
    project: str | None,
    account_id: str | None,
    project_given: bool = False,
    secret_unread: bool = False,
) -> None:
    """``project_given``: a project was set but failed its type check (already reported), so it is not missing.
    ``secret_unread``: the account ID is a secret the offline preview cannot decrypt, so its format is unknown."""
    if cloud == Cloud.GCP:
        if project is None:
            if not project_given:
                issues.error(
                    "project",
                    "a GCP stack needs the project ID",
                    allowed="a GCP project ID: 6-30 lower-case letters, digits or '-'",
                    fix="pulumi config set gpu-cluster:project <your-project-id>",
                )
        elif not GCP_PROJECT.fullmatch(project):
            issues.error(
                "project",
                "not a valid GCP project ID",
                project,
                allowed="6-30 lower-case letters, digits or '-', starting with a letter",
                fix="use the project ID (not the display name or number) from `gcloud projects list`",
            )
        if account_id is not None:
            issues.error(
                "accountId",
                "accountId is an AWS setting; this stack's cloud is gcp",
                account_id,
                fix="remove gpu-cluster:accountId, or set gpu-cluster:cloud to aws",
            )
        return
    if project is not None:
        issues.error(
            "project",
            "project is a GCP setting; this stack's cloud is aws",
            project,
            fix="remove gpu-cluster:project (use gpu-cluster:accountId to pin the AWS account)",
        )
    if account_id is not None and not secret_unread and not AWS_ACCOUNT.fullmatch(account_id):
        issues.error(
            "accountId",
            "not a valid AWS account ID",
            account_id,
            allowed="exactly 12 digits",
            fix='quote it in YAML so leading zeros survive, e.g. accountId: "012345678901"',
        )


def check_region(issues: Issues, cat: Catalog, cloud: Cloud, region: str) -> None:
    known = cat.region_names(cloud)
    if region in known:
        return
    other = other_cloud(cloud)
    if region in cat.region_names(other):
        issues.error(
            "region",
            f"{region} is {CLOUD_NAME[other]} region; this stack's cloud is {cloud.value}",
            region,
            allowed=allowed_list(known),
            fix=f"pick {CLOUD_NAME[cloud]} region, or set gpu-cluster:cloud to "
            f"{other.value} (and use {other.value} machine types and zones)",
        )
        return
    issues.error(
        "region",
        f"no catalog data for {cloud.value} region {region!r}",
        region,
        allowed=allowed_list(known),
        fix=choice_fix(
            "gpu-cluster:region",
            region,
            known,
            ", or add the region's zones and prices to catalog/data/regions.csv and prices.csv",
        ),
    )


def check_resource_labels(labels: Issues, values: dict[str, str]) -> None:
    """``gpu-cluster:labels``: GCP resource label syntax (the stricter of the two clouds)."""
    for key, value in values.items():
        if not CLOUD_LABEL_KEY.fullmatch(key):
            labels.error(
                key,
                "not a valid cloud label key",
                key,
                allowed="1-63 lower-case letters, digits, '-' or '_', starting with a letter",
                fix="rename the key, e.g. 'cost-center'",
            )
        if not CLOUD_LABEL_VALUE.fullmatch(str(value)):
            labels.error(
                key,
                "not a valid cloud label value",
                value,
                allowed="0-63 lower-case letters, digits, '-' or '_'",
                fix="lower-case the value",
            )


def check_pool_names(issues: Issues, pools: Iterable[tuple[int, NodePool]]) -> None:
    """Pool names are unique, also after folding case and '_' (both become the same cloud resource name)."""
    seen: dict[str, int] = {}
    for i, pool in pools:
        norm = pool.name.lower().replace("_", "-")
        if norm in seen:
            issues.pool(i, pool.name).error(
                "name",
                f"duplicate pool name (same as nodePools[{seen[norm]}])",
                pool.name,
                allowed="unique pool names",
                fix="rename one of the pools",
            )
        else:
            seen[norm] = i
