"""EFA per network card (a GB200 job gets its full GPU network): P6e-GB200's cards as the catalog lays them out
(catalog/data/network-cards.csv: card 0 the plain ENA primary, EFA-only at device 0 on cards 1, 5, 9 and 13, one per
GPU's card pair: the EC2 user guide's 4 x 400 Gbps layout), rendered into the node group's launch template and enforced by topology-efa-interfaces;
other EFA machines keep one EFA per card (card 0 ``efa``, the rest ``efa-only`` at device 1)."""

from __future__ import annotations

import copy

import pytest

from catalog import Cloud, load_catalog
from catalog.fabric import FabricKind, load_fabric_catalog
from catalog.network_cards import EFA_TYPES, load_network_cards
from stacks.plan.efa_layout import efa_layout, efa_summary
from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from tests.support.policy.harness import Pack, with_props, wire

CAT = load_catalog()
P6E = CAT.machines[(Cloud.AWS, "p6e-gb200.36xlarge")]
LT = "aws:ec2/launchTemplate:LaunchTemplate"


def test_p6e_cards_follow_the_catalog():
    # card 0 is the plain ENA primary (the EKS P6e guide: "must be of type interface"); one efa-only interface per
    # GPU's card pair, as the EC2 guide recommends, so a node has the 4 EFA devices the EKS guide expects
    layout = efa_layout(P6E)
    assert [(a.network_card_index, a.device_index, a.interface_type) for a in layout] == [
        (0, 0, "interface"),
        *((i, 0, "efa-only") for i in (1, 5, 9, 13)),
    ]
    fast = [a.network_card_index for a in layout if a.efa_gbps == 400]
    assert fast == [1, 5, 9, 13]
    assert sum(a.efa_gbps or 0 for a in layout) == 1600  # 4 x 400 Gbps: the instance's EFA bandwidth
    assert efa_summary(layout) == "4 EFA interfaces (4 x 400 Gbps links on cards 1, 5, 9, 13); card 0 ENA only"


def test_every_laid_out_machine_is_consistent_with_the_catalog():
    for (cloud, machine_type), cards in load_network_cards().items():
        machine = CAT.machines[(cloud, machine_type)]
        efa = [c.index for c in cards if c.efa_interface in EFA_TYPES]
        indices = [c.index for c in cards]
        assert len(efa) == machine.efa_interfaces and indices[0] == 0 and indices == sorted(set(indices)), machine_type
        for c in cards:  # a card that takes one interface has it at device 0; a second one goes to device 1
            assert c.device_index == (0 if c.max_interfaces == 1 or c.index == 0 else 1), (machine_type, c.index)
            assert len(c.source) > 80
        gbps = sum(c.efa_gbps or 0 for c in cards)
        fabric = load_fabric_catalog().for_machine(cloud, machine_type)
        # the cards' line rates bound the instance's EFA figure, which comes from the cloud's own number
        assert fabric is not None and fabric.kind == FabricKind.EFA and gbps >= fabric.nominal_gbps_per_node, (
            machine_type
        )


def test_p6e_efa_bandwidth_is_aws_ultraserver_figure_per_instance():
    """AWS: up to 28.8 Tbps of EFAv4 per u-p6e-gb200x72, which is 18 instances: 1,600 Gbps each, not the 3,200 the
    third-party per-card table adds up to."""
    fabric = load_fabric_catalog().for_machine(Cloud.AWS, "p6e-gb200.36xlarge")
    assert fabric.nominal_gbps_per_node == 28_800 // CAT.ultraservers["u-p6e-gb200x72"].instances == 1600
    assert "28.8 Tbps" in fabric.bandwidth_source and "aws.amazon.com/ec2/instance-types/p6/" in fabric.bandwidth_source


def test_other_efa_machines_keep_one_efa_per_card():
    p5 = CAT.machines[(Cloud.AWS, "p5.48xlarge")]
    assert [(a.network_card_index, a.device_index, a.interface_type) for a in efa_layout(p5)] == [
        (0, 0, "efa"),
        *((i, 1, "efa-only") for i in range(1, 32)),
    ]
    assert efa_summary(efa_layout(p5)) == "32 EFA interfaces"


@pytest.fixture(scope="module")
def p6e():
    return tuple(run_program(read_stack_file(PROJECT_ROOT / "Pulumi.eks-p6e-gb200.yaml"), "eks-p6e-gb200").resources)


def _template(resources):
    (lt,) = [r for r in resources if r.type == LT and r.inputs.get("networkInterfaces")]
    return lt


def test_the_p6e_launch_template_carries_the_layout(p6e):
    nics = _template(p6e).inputs["networkInterfaces"]
    assert [(n["networkCardIndex"], n["deviceIndex"], n["interfaceType"]) for n in nics] == [
        (a.network_card_index, a.device_index, a.interface_type) for a in efa_layout(P6E)
    ]


def test_the_rule_wants_every_card_on_p6e(p6e):
    pack = Pack()
    rule = "topology-efa-interfaces"
    assert [d for d in pack.stack(list(copy.deepcopy(p6e))) if d[0] == rule] == []
    out = [copy.deepcopy(r) for r in p6e]
    lt = _template(out)
    props = wire(lt)
    props["networkInterfaces"] = [n for n in props["networkInterfaces"] if n["networkCardIndex"] != 5]
    (finding,) = [d for d in pack.stack([with_props(r, props) if r is lt else r for r in out]) if d[0] == rule]
    assert (
        "multi-node p6e-gb200.36xlarge pool leaves network cards without EFA, so NCCL traffic uses 3 of its 4"
        in finding[2]
    )
    assert "efa-acc-inst-types.html#efa-for-p6e" in finding[2]  # the count is AWS's documented layout
    assert ("interface at deviceIndex 0 on cards 0; efa-only at deviceIndex 0 on cards 1, 5, 9, 13") in finding[2]


def test_card_0_as_efa_on_p6e_is_a_violation_citing_the_eks_guide(p6e):
    pack = Pack()
    out = [copy.deepcopy(r) for r in p6e]
    lt = _template(out)
    props = wire(lt)
    assert props["networkInterfaces"][0]["interfaceType"] == "interface"
    props["networkInterfaces"][0]["interfaceType"] = "efa"  # what the launch template said before
    (finding,) = [
        d
        for d in pack.stack([with_props(r, props) if r is lt else r for r in out])
        if d[0] == "topology-efa-interfaces"
    ]
    assert finding[2].startswith(
        "pool 'gb200': p6e-gb200.36xlarge takes a plain ENA interface on network card 0, "
        "not EFA · observed: EFA on card 0 in launch template"
    )
    assert "network card 0 (device 0, the primary interface) must be of type interface (ENA)" in finding[2]
    assert "ml-eks-nvidia-ultraserver" in finding[2]


def test_the_preview_says_which_cards_carry_the_efa():
    from preview.run import preview_stack

    (p6e,) = [f for f in preview_stack("eks-p6e-gb200").as_dict()["fabric"] if f["pool"] == "gb200"]
    assert p6e["efaCards"].startswith("4 EFA interfaces (4 x 400 Gbps links on cards 1, 5, 9, 13)")
    assert p6e["efaCards"].endswith("; card 0 ENA only")
    assert all("efaCards" not in f for f in preview_stack("eks-p5-efa").as_dict()["fabric"])  # uniform cards: no line
