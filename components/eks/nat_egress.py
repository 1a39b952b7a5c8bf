"""The public addresses an EKS cluster's private subnets leave through: the Elastic IPs of the NAT gateways their route
tables send the default route to (a fleet manager's ``fleetEgressAddresses``, ``stacks/plan/fleet_egress.py``).

gpu-cluster takes the subnets as given and builds no VPC, so the NAT gateways are the user's: their addresses are
read (``aws.ec2.get_route_table`` by subnet, then ``aws.ec2.get_nat_gateway``), never made. Read at every preview and
deploy, so a NAT gateway replaced outside Pulumi shows up at the next ``pulumi up`` of the manager (then of the
workers). A subnet that uses the VPC's main route table implicitly is not found by subnet: associate it explicitly, or
declare the addresses in ``fleet.egressCidrs``. A NAT gateway's secondary Elastic IPs are not read.
"""

from __future__ import annotations

from typing import Any, Sequence

import pulumi
import pulumi_aws as aws

DEFAULT_ROUTE = "0.0.0.0/0"


def nat_gateway_ids(route_tables: Sequence[Any]) -> list[str]:
    """The NAT gateways the default routes of ``route_tables`` (``GetRouteTableResult``s) point at, each once."""
    ids: list[str] = []
    for table in route_tables:
        for route in getattr(table, "routes", None) or []:
            nat = getattr(route, "nat_gateway_id", None)
            if getattr(route, "cidr_block", None) == DEFAULT_ROUTE and nat and nat not in ids:
                ids.append(nat)
    return ids


def nat_egress_addresses(
    subnets: Sequence[str], parent: pulumi.Resource | None = None, provider: pulumi.ProviderResource | None = None
) -> pulumi.Output[list[str]]:
    """The NAT gateways' public IPs as /32 CIDRs, sorted (offline, under mocks, the lookups return nothing: [])."""
    invoke = pulumi.InvokeOptions(parent=parent, provider=provider)
    tables = [aws.ec2.get_route_table_output(subnet_id=s, opts=invoke) for s in subnets]

    def addresses(found: list[Any]) -> pulumi.Output[list[str]]:
        ips = [aws.ec2.get_nat_gateway_output(id=i, opts=invoke).public_ip for i in nat_gateway_ids(found)]
        return pulumi.Output.all(*ips).apply(lambda xs: sorted({f"{x}/32" for x in xs if x}))

    return pulumi.Output.all(*tables).apply(addresses)
