"""cross-layer-fleet-reachable: the manager's egress addresses reach every worker's Kubernetes API."""
from __future__ import annotations

import ipaddress
from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding, listing
from policies.fleet import fleet_of
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule

ID = "cross-layer-fleet-reachable"
KUEUE_ANY = "kubernetes:kueue.x-k8s.io/*:"


def _admitted(cidr: str, networks: list[str]) -> bool:
    try:
        net = ipaddress.ip_network(cidr, strict=False)
        return any(net.version == (n := ipaddress.ip_network(a, strict=False)).version and net.subnet_of(n)  # type: ignore[arg-type]
                   for a in networks)
    except ValueError:
        return False


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    egress = [str(c) for c in fleet.manager.get("egressCidrs", [])]
    for worker in fleet.workers:
        networks = [str(n) for n in worker.facts.get("authorizedNetworks", [])]
        if worker.facts.get("privateEndpoint"):
            yield Finding(f"worker '{worker.name}'", "its Kubernetes API has a private endpoint only, which the "
                          "manager's MultiKueue controller (another cluster, often another cloud) cannot reach",
                          observed="cluster.authorizedNetworks empty (private endpoint)",
                          required=f"a public endpoint admitting the manager's egress ({listing(egress) or 'fleet.egressCidrs'})",
                          fix="add the manager's fleet.egressCidrs to the worker's cluster.authorizedNetworks",
                          keys=worker.keys, urn=worker.resource.urn)
            continue
        refused = [c for c in egress if not _admitted(c, networks)]
        if refused:
            yield Finding(f"worker '{worker.name}'", "the manager's egress addresses are not in the worker's "
                          "authorized networks, so MultiKueue cannot connect and the worker stays inactive",
                          observed=f"egress {listing(refused)}; authorizedNetworks {listing(networks)}",
                          required="every manager egress CIDR inside an authorized network of the worker",
                          fix=f"add {listing(refused)} to the worker's cluster.authorizedNetworks",
                          keys=worker.keys, urn=worker.resource.urn)


RULE = register(Rule(
    id=ID, title="Fleet workers are reachable from the manager", category=Category.CROSS_LAYER,
    description="Every fleet worker's API endpoint admits the manager's egress addresses.",
    why=("MultiKueue connects from the manager's Kueue pod to each worker's API server; a private endpoint or "
         "authorized networks without the manager's NAT addresses leave the MultiKueueCluster inactive and jobs "
         "dispatched nowhere."),
    remediation=("1. Give the manager static NAT addresses and list them in fleet.egressCidrs. 2. Add them to each "
                 "worker's cluster.authorizedNetworks."),
    severity=Severity.HIGH, enforcement=EnforcementLevel.MANDATORY,
    applies_to=(f"{KUEUE_ANY}MultiKueueCluster", f"{KUEUE_ANY}MultiKueueConfig"), check=check, stack=True,
), order=3190)
