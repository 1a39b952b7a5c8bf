"""GKE maintenance rules: GKE only, on clusters gpu-cluster creates; exclusions that end after they start and fit
GKE's limits (NO_UPGRADES 30 days, the narrower scopes 180 days)."""

from __future__ import annotations

from catalog import Cloud
from stacks.spec.maintenance import ExclusionScope
from stacks.spec.cluster import ClusterMode, ClusterSpec
from stacks.validate.issues import Issues

MAX_DAYS = {
    ExclusionScope.NO_UPGRADES: 30,
    ExclusionScope.NO_MINOR_UPGRADES: 180,
    ExclusionScope.NO_MINOR_OR_NODE_UPGRADES: 180,
}
"""GKE "Maintenance exclusions": no upgrades for at most 30 days; no minor (or node) upgrades for at most 180."""


def check_maintenance(issues: Issues, cloud: Cloud, cluster: ClusterSpec) -> None:
    """``issues``: the scope of ``gpu-cluster:cluster``."""
    m = cluster.maintenance
    if m is None:
        return
    if cloud != Cloud.GCP:
        issues.error(
            "maintenance",
            f"maintenance is a GKE setting; this stack's cloud is {cloud.value}",
            "set",
            allowed="omit it on EKS",
            fix="remove cluster.maintenance (EKS node groups upgrade only when you change them)",
        )
        return
    if cluster.mode == ClusterMode.EXISTING:
        issues.error(
            "maintenance",
            "gpu-cluster does not change an existing cluster's maintenance policy",
            "set",
            allowed="maintenance only with mode create",
            fix="set the window and exclusions on the existing cluster itself (gcloud), and remove cluster.maintenance",
        )
        return
    exclusions = issues.at("maintenance", "exclusions")
    for i, e in enumerate(m.exclusions):
        days = (e.end - e.start).days + 1
        if e.end < e.start:
            exclusions.error(
                (i, "end"),
                f"exclusion '{e.name}' ends before it starts",
                e.end.isoformat(),
                allowed=f"{e.start.isoformat()} or later",
                fix="swap start and end, or fix the date",
            )
        elif days > MAX_DAYS[e.scope]:
            exclusions.error(
                (i, "end"),
                f"exclusion '{e.name}' lasts {days} days, longer than GKE allows for {e.scope.value}",
                e.end.isoformat(),
                allowed=f"at most {MAX_DAYS[e.scope]} days",
                fix="shorten it, or use the narrower scope NO_MINOR_OR_NODE_UPGRADES (180 days)",
            )
