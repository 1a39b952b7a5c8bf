"""An EKS manager's egress addresses are the Elastic IPs of the NAT gateways its subnets' default routes point at:
the lookups run (invokes answered by a mock AWS here, with the data-source tokens and field names of pulumi-aws), and
what comes back is each NAT gateway's public IP as a /32, once, whatever the number of subnets sharing it."""

from __future__ import annotations

from types import SimpleNamespace

import pulumi

from components.eks.nat_egress import DEFAULT_ROUTE, nat_gateway_ids, nat_egress_addresses

ROUTES = {  # subnet -> its route table's routes (the second subnet shares the first NAT, the third has its own)
    "subnet-a": [
        {"cidrBlock": "10.0.0.0/16", "gatewayId": "local"},
        {"cidrBlock": DEFAULT_ROUTE, "natGatewayId": "nat-1"},
    ],
    "subnet-b": [{"cidrBlock": DEFAULT_ROUTE, "natGatewayId": "nat-1"}],
    "subnet-c": [
        {"cidrBlock": DEFAULT_ROUTE, "natGatewayId": "nat-2"},
        {"cidrBlock": "192.168.0.0/16", "natGatewayId": "nat-9"},
    ],  # not the default route: not egress
}
NAT_IPS = {"nat-1": "198.51.100.10", "nat-2": "198.51.100.20", "nat-9": "198.51.100.99"}


class AwsMocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        if args.token == "aws:ec2/getRouteTable:getRouteTable":
            self.calls.append(("routeTable", args.args["subnetId"]))
            return {"routes": ROUTES[args.args["subnetId"]], "subnetId": args.args["subnetId"]}
        if args.token == "aws:ec2/getNatGateway:getNatGateway":
            self.calls.append(("natGateway", args.args["id"]))
            return {"id": args.args["id"], "publicIp": NAT_IPS[args.args["id"]]}
        raise AssertionError(f"unexpected invoke {args.token}")


def test_default_routes_name_the_nat_gateways_each_once():
    tables = [
        SimpleNamespace(
            routes=[
                SimpleNamespace(cidr_block=r.get("cidrBlock"), nat_gateway_id=r.get("natGatewayId")) for r in routes
            ]
        )
        for routes in ROUTES.values()
    ]
    assert nat_gateway_ids(tables) == ["nat-1", "nat-2"]
    assert nat_gateway_ids([SimpleNamespace(routes=None)]) == []  # offline: the lookup found nothing


def test_the_lookups_run_and_return_the_nat_addresses():
    mocks = AwsMocks()
    pulumi.runtime.set_mocks(mocks, project="p", stack="s", preview=False)
    seen: list[list[str]] = []

    @pulumi.runtime.test
    def run():
        return nat_egress_addresses(["subnet-a", "subnet-b", "subnet-c"]).apply(seen.append)

    run()
    assert seen == [["198.51.100.10/32", "198.51.100.20/32"]]  # the apply ran, with both NAT gateways' addresses
    assert sorted(c for c in mocks.calls if c[0] == "routeTable") == [("routeTable", s) for s in ROUTES]
    assert sorted(c for c in mocks.calls if c[0] == "natGateway") == [("natGateway", "nat-1"), ("natGateway", "nat-2")]
