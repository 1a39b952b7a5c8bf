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
        return any(
            net.version == (n := ipaddress.ip_network(a, strict=False)).version and net.subnet_of(n)  # type: ignore[arg-type]
            for a in networks
        )
    except ValueError:
        return False


def _names_manager(reference: object, manager: dict) -> bool:
    """A worker's ``fleet.manager`` (``<org>/<project>/<stack>``) names this manager: project and stack match (the
    organization is the Pulumi backend's, which the offline preview does not know)."""
    parts = str(reference or "").split("/")
    return len(parts) == 3 and parts[1:] == [str(manager.get("project")), str(manager.get("stack"))]


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fleet = fleet_of(resources)
    if fleet is None:
        return
    manager = fleet.manager
    source = str(manager.get("egressSource") or "declared")
    egress = [str(c) for c in manager.get("egressCidrs", [])]
    me = f"{manager.get('project')}/{manager.get('stack')}"
    for worker in fleet.workers:
        networks = [str(n) for n in worker.facts.get("authorizedNetworks", [])]
        reference = worker.facts.get("managerEgressFrom")
        if worker.facts.get("privateEndpoint"):
            yield Finding(
                f"worker '{worker.name}'",
                "its Kubernetes API has a private endpoint only, which the "
                "manager's MultiKueue controller (another cluster, often another cloud) cannot reach",
                observed="cluster.authorizedNetworks empty and no fleet.manager (private endpoint)",
                required="a public endpoint admitting the manager's egress addresses",
                fix=f"set fleet.manager: <org>/{me} on the worker (it admits the manager's fleetEgressAddresses)",
                keys=worker.keys,
                urn=worker.resource.urn,
            )
            continue
        if reference is not None and not _names_manager(reference, manager):
            yield Finding(
                f"worker '{worker.name}'",
                "its fleet.manager names another stack, so it admits that stack's egress addresses, not this manager's",
                observed=f"fleet.manager {reference}",
                required=f"<org>/{me}",
                fix=f"set the worker's fleet.manager to <org>/{me}",
                keys=worker.keys,
                urn=worker.resource.urn,
            )
            continue
        if reference is not None:
            continue  # the worker admits whatever this manager exports, through the StackReference
        if source != "declared":  # reserved (GKE) or read from NAT gateways (EKS): known only after the manager's up
            yield Finding(
                f"worker '{worker.name}'",
                "the manager's egress addresses are made at its deploy ("
                f"{'reserved static NAT addresses' if source == 'reserved' else 'its NAT gateways'}, "
                "unknown offline), and the worker's authorized networks are a literal list without a "
                "reference to the manager's fleetEgressAddresses output, so MultiKueue cannot connect",
                observed=f"authorizedNetworks {listing(networks)}; no fleet.manager",
                required="the worker admits the manager's fleetEgressAddresses through fleet.manager",
                fix=f"set fleet.manager: <org>/{me} on the worker",
                keys=worker.keys,
                urn=worker.resource.urn,
            )
            continue
        refused = [c for c in egress if not _admitted(c, networks)]
        if refused:
            yield Finding(
                f"worker '{worker.name}'",
                "the manager's egress addresses are not in the worker's "
                "authorized networks, so MultiKueue cannot connect and the worker stays inactive",
                observed=f"egress {listing(refused)}; authorizedNetworks {listing(networks)}",
                required="every manager egress CIDR inside an authorized network of the worker",
                fix=f"add {listing(refused)} to the worker's cluster.authorizedNetworks, or set "
                f"fleet.manager: <org>/{me} on the worker",
                keys=worker.keys,
                urn=worker.resource.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Fleet workers are reachable from the manager",
        category=Category.CROSS_LAYER,
        description=(
            "Every fleet worker's API admits the manager's egress addresses: by reference (fleet.manager) or, "
            "for declared egressCidrs, by listing them."
        ),
        why=(
            "MultiKueue connects from the manager's Kueue pod to each worker's API server; a private endpoint or "
            "authorized networks without the manager's NAT addresses leave the MultiKueueCluster inactive and jobs "
            "dispatched nowhere."
        ),
        remediation=(
            "1. Let gpu-cluster reserve the manager's NAT addresses (GKE, the default) or read its NAT "
            "gateways (EKS); declare them in fleet.egressCidrs only when the NAT is not gpu-cluster's. 2. Set "
            "fleet.manager: <org>/<project>/<manager stack> on every worker, which admits the manager's "
            "fleetEgressAddresses; or list declared egressCidrs in the worker's cluster.authorizedNetworks."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(f"{KUEUE_ANY}MultiKueueCluster", f"{KUEUE_ANY}MultiKueueConfig"),
        check=check,
        stack=True,
    ),
    order=3190,
)
