"""Across a fleet's stack files: at most one gpu-cluster Cloud NAT per (project, region, VPC network). gpu-cluster's
Cloud NAT covers every subnetwork and range, and GCP allows no other NAT in that network and region, so a manager and
a worker (or two workers) with the same scope fail at the second ``pulumi up``; and the manager's traffic would leave
from whichever NAT the network has, not from its reserved addresses. Pure: reads the scopes the stacks export."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from catalog.cloud_limits import cloud_limit
from stacks.validate.issues import SpecIssue, path_of


def _shown(scope: Mapping[str, Any]) -> str:
    return f"project {scope['project']}, region {scope['region']}, network {scope['network']}"


def shared_nat_issues(
    manager: Mapping[str, Any] | None, workers: Sequence[tuple[int, str, str, Mapping[str, Any] | None]]
) -> list[SpecIssue]:
    """``manager``: the manager's NAT scope (``stacks/plan/fleet_egress.nat_scope``) or None; ``workers``: (index in
    ``fleet.workers``, worker name, stack name, its exported scope or None). One error per stack that repeats a scope."""
    limit = cloud_limit("gcp-cloud-nat-all-subnetworks")
    seen: dict[tuple[str, str, str], str] = {}
    if manager is not None:
        seen[(manager["project"], manager["region"], manager["network"])] = "the manager"
    issues = []
    for i, name, stack, scope in workers:
        if scope is None:
            continue
        key = (scope["project"], scope["region"], scope["network"])
        if key in seen:
            issues.append(
                SpecIssue(
                    path_of("fleet", "workers", i, "stack"),
                    f"worker '{name}' (stack {stack}) and {seen[key]} would each create a Cloud NAT over all subnetworks "
                    f"of {_shown(scope)}: {limit.cite()}, so the second pulumi up fails, and the manager's traffic would "
                    "not leave from its reserved address",
                    f"{stack}: {_shown(scope)}",
                    allowed="one gpu-cluster Cloud NAT per project, region and network across the fleet",
                    fix=(
                        "put the manager in its own network (cluster.network, with cluster.cloudNat: true, in the "
                        f"manager's stack file), or give {stack} another network or region"
                    ),
                )
            )
        else:
            seen[key] = f"worker '{name}' (stack {stack})"
    return issues


def alongside_nat_issues(
    stack: str, scope: Mapping[str, Any] | None, others: Sequence[tuple[str, Mapping[str, Any] | None]]
) -> list[SpecIssue]:
    """``stack`` (its scope, or None: no gpu-cluster Cloud NAT) previewed with ``others``, stacks of the same Pulumi
    project deployed alongside it (``--with``), each (stack name, its scope). One error per stack whose scope an
    earlier one already has, this stack's first."""
    limit = cloud_limit("gcp-cloud-nat-all-subnetworks")
    seen: dict[tuple[str, str, str], str] = {}
    issues = []
    for name, other in [(stack, scope), *others]:
        if other is None:
            continue
        key = (other["project"], other["region"], other["network"])
        if key not in seen:
            seen[key] = name
            continue
        issues.append(
            SpecIssue(
                path_of("cluster", "network"),
                f"stacks {seen[key]} and {name} would each create a Cloud NAT over all subnetworks of {_shown(other)}: "
                f"{limit.cite()}, so the second pulumi up fails",
                f"{name}: {_shown(other)}",
                allowed="one gpu-cluster Cloud NAT per project, region and network across the stacks deployed together",
                fix=(
                    f"give one of them its own network (cluster.network, with cluster.cloudNat: true, in "
                    f"Pulumi.{name}.yaml or Pulumi.{seen[key]}.yaml), another region or project, or deploy them apart"
                ),
            )
        )
    return issues
