"""security-authorized-network-width: the networks allowed to reach the Kubernetes API (GKE master authorized
networks, EKS public access CIDRs) are no wider than ``minPrefixLength``."""

from __future__ import annotations

import ipaddress
from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.resources import EKS_CLUSTER, GKE_CLUSTER, cluster_subject
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.values import as_dict, as_list, dig

ID = "security-authorized-network-width"


def _cidrs(r: Resource) -> list[tuple[str, str]]:
    """(setting path, CIDR) of every network the resource lets reach its API."""
    if r.type == GKE_CLUSTER:
        blocks = as_list(dig(r.props, "masterAuthorizedNetworksConfig", "cidrBlocks"))
        return [
            (f"masterAuthorizedNetworksConfig.cidrBlocks[{i}].cidrBlock", str(as_dict(b).get("cidrBlock")))
            for i, b in enumerate(blocks)
        ]
    if dig(r.props, "vpcConfig", "endpointPublicAccess") is not True:
        return []
    return [
        (f"vpcConfig.publicAccessCidrs[{i}]", str(c))
        for i, c in enumerate(as_list(dig(r.props, "vpcConfig", "publicAccessCidrs")))
    ]


def check(r: Resource, cfg: Config) -> Iterable[Finding]:
    limit = int(cfg["minPrefixLength"])
    subject, keys = cluster_subject(r)
    for path, cidr in _cidrs(r):
        try:
            net = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            continue  # not a CIDR (unknown until deploy): the cloud's API refuses a bad one
        if net.version == 4 and net.prefixlen < limit:
            yield Finding(
                subject,
                f"{net.num_addresses:,} addresses may reach the Kubernetes API",
                observed=f"{path} {cidr}",
                required=f"/{limit} or narrower, from minPrefixLength",
                fix="list only the ranges that run kubectl/pulumi in cluster.authorizedNetworks",
                keys=keys,
            )


RULE = register(
    Rule(
        id=ID,
        title="Authorized networks are narrow",
        category=Category.SECURITY,
        description="Networks allowed to reach the Kubernetes API are no wider than minPrefixLength (default /8).",
        why=(
            "The API server is the cluster's front door: a wide authorized network (a /4, a cloud's whole range) lets "
            "anyone there try stolen or leaked credentials and probe for unauthenticated endpoints. gpu-cluster's "
            "spec refuses wider than /8 and warns above /16."
        ),
        remediation="1. List only your office, VPN or CI ranges. 2. Or leave authorizedNetworks empty (private endpoint).",
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_CLUSTER, EKS_CLUSTER),
        check=check,
        config={
            "minPrefixLength": {
                "type": "integer",
                "minimum": 1,
                "maximum": 32,
                "default": 8,
                "description": "Narrowest IPv4 prefix length allowed (8: a /8 passes, a /7 does not).",
            }
        },
    ),
    order=4190,
)
