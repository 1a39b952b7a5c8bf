"""GKE maintenance rules: GKE only, on clusters gpu-cluster creates; exclusions that end after they start and fit
GKE's limits (NO_UPGRADES 30 days, the narrower scopes 180 days)."""
from __future__ import annotations

from catalog import Cloud
from stacks.maintenance_spec import ExclusionScope
from stacks.spec import ClusterMode, ClusterSpec
from validation.issues import SpecIssue, path_of

MAX_DAYS = {ExclusionScope.NO_UPGRADES: 30, ExclusionScope.NO_MINOR_UPGRADES: 180,
            ExclusionScope.NO_MINOR_OR_NODE_UPGRADES: 180}
"""GKE "Maintenance exclusions": no upgrades for at most 30 days; no minor (or node) upgrades for at most 180."""


def check_maintenance(cloud: Cloud, cluster: ClusterSpec) -> list[SpecIssue]:
    m = cluster.maintenance
    if m is None:
        return []
    where = path_of("cluster", "maintenance")
    if cloud != Cloud.GCP:
        return [SpecIssue(where, "maintenance is a GKE setting; this stack's cloud is aws", "set", "omit it on EKS",
                          "remove cluster.maintenance (EKS node groups upgrade only when you change them)")]
    if cluster.mode == ClusterMode.EXISTING:
        return [SpecIssue(where, "gpu-cluster does not change an existing cluster's maintenance policy", "set",
                          "maintenance only with mode create",
                          "set the window and exclusions on the existing cluster itself (gcloud), and remove "
                          "cluster.maintenance")]
    issues = []
    for i, e in enumerate(m.exclusions):
        days = (e.end - e.start).days + 1
        path = path_of("cluster", "maintenance", "exclusions", i, "end")
        if e.end < e.start:
            issues.append(SpecIssue(path, f"exclusion '{e.name}' ends before it starts", e.end.isoformat(),
                                    f"{e.start.isoformat()} or later", "swap start and end, or fix the date"))
        elif days > MAX_DAYS[e.scope]:
            issues.append(SpecIssue(path, f"exclusion '{e.name}' lasts {days} days, longer than GKE allows for "
                                    f"{e.scope.value}", e.end.isoformat(), f"at most {MAX_DAYS[e.scope]} days",
                                    "shorten it, or use the narrower scope NO_MINOR_OR_NODE_UPGRADES (180 days)"))
    return issues
