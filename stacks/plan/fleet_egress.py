"""Where a fleet manager's egress addresses (``fleetEgressAddresses``) come from, planned once. Pure.

- ``reserved`` (GKE, gpu-cluster's Cloud NAT): ``count`` static external addresses, the NAT in ``MANUAL_ONLY`` mode;
- ``natGateways`` (EKS): the Elastic IPs of the NAT gateways the manager's subnets route through (gpu-cluster takes
  the subnets as given and builds no VPC, so the NAT gateways are the user's; their addresses are read, not made);
- ``declared``: ``fleet.egressCidrs`` as written, for a NAT that is not gpu-cluster's (a network brought with its own
  NAT, a transit-gateway or corporate egress).

The first two are known only once the manager is deployed (a real ``pulumi preview`` shows them as unknown; the
offline preview has no value): a worker admits them through a StackReference (``fleet.manager``), never a literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from catalog import Cloud
from stacks.spec.fleet import Fleet, FleetRole
from stacks.spec.cluster import ClusterSpec


class EgressSource(str, Enum):
    RESERVED = "reserved"
    NAT_GATEWAYS = "natGateways"
    DECLARED = "declared"


@dataclass(frozen=True)
class EgressPlan:
    source: EgressSource
    count: int
    """Static addresses to reserve (``reserved`` only; 0 otherwise)."""
    declared: tuple[str, ...]
    """``declared`` only: the CIDRs as written."""
    subnets: tuple[str, ...]
    """``natGateways`` only: the subnets whose route tables name the NAT gateways."""

    @property
    def known_offline(self) -> bool:
        """Whether the addresses are in the stack file (declared) or made/read at deploy."""
        return self.source == EgressSource.DECLARED


def uses_own_cloud_nat(cluster: ClusterSpec) -> bool:
    """GKE: gpu-cluster creates the Cloud NAT (``cloudNat``, by default with the default network)."""
    return cluster.cloud_nat if cluster.cloud_nat is not None else cluster.network is None


def egress_plan(fleet: Fleet | None, cloud: Cloud, cluster: ClusterSpec) -> EgressPlan | None:
    """None for a stack that is no fleet manager. Validation (``stacks/validate/fleet.py``) has refused the mixes."""
    if fleet is None or fleet.role != FleetRole.MANAGER:
        return None
    if fleet.egress_cidrs:
        return EgressPlan(EgressSource.DECLARED, 0, tuple(fleet.egress_cidrs), ())
    if cloud == Cloud.AWS:
        return EgressPlan(EgressSource.NAT_GATEWAYS, 0, (), tuple(dict.fromkeys(cluster.subnets.values())))
    return EgressPlan(
        EgressSource.RESERVED, fleet.egress_addresses if fleet.egress_addresses is not None else 1, (), ()
    )


def nat_scope(cloud: str, cluster: Any) -> dict[str, str] | None:
    """``cluster``: a ``ClusterPlan`` (not imported: it imports this module). The (project, region, network)
    gpu-cluster's Cloud NAT covers, all subnetworks and ranges; None when this
    stack makes no Cloud NAT (EKS, or a network you bring with its own). Two stacks of a fleet with the same scope
    would create two NATs where GCP allows one (``stacks/validate/fleet_nat.py``)."""
    if cloud != "gcp" or not cluster.cloud_nat or not cluster.create:  # an existing cluster gets no NAT from us
        return None
    return {"project": cluster.project, "region": cluster.region, "network": cluster.network or "default"}
