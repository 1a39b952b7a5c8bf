"""What an EFA pod requests is what its node advertises: the EFA device plugin advertises one
``vpc.amazonaws.com/efa`` per EFA interface the launch template attaches (``efa`` or ``efa-only``; a plain ENA
``interface`` has none). The EKS P6e-GB200 guide expects 4 devices per node for a launch template with one
``efa-only`` interface in each NCI group, and gpu-cluster's P6e layout (catalog/data/network-cards.csv) attaches
those 4 (cards 1, 5, 9, 13), so its pods ask for 4. Request and layout must be one number."""

from __future__ import annotations

import re

import catalog.fabric as fabric_module
from catalog import Cloud, load_catalog
from catalog.fabric import FabricKind
from catalog.network_cards import EFA_TYPES, NetworkCard, network_cards
from tests.support.helm.examples import recording

P6E = "p6e-gb200.36xlarge"


def test_the_p6e_pod_request_is_the_launch_templates_efa_interfaces():
    rec = recording("eks-p6e-gb200")
    (template,) = [
        r for r in rec.resources if r.type == "aws:ec2/launchTemplate:LaunchTemplate" and r.name == "gb200-lt"
    ]
    attached = [i for i in template.redacted_inputs["networkInterfaces"] if i["interfaceType"] in EFA_TYPES]
    (slurm,) = [r for r in rec.resources if r.type == "kubernetes:helm.sh/v3:Release" and r.name == "slurm-slurm"]
    asked = re.findall(r"'vpc.amazonaws.com/efa': (\d+)", str(slurm.redacted_inputs["values"]["nodesets"]["gb200"]))
    assert asked and {int(a) for a in asked} == {len(attached)} == {4}
    tags = {
        r.redacted_inputs["tag"]["key"]: r.redacted_inputs["tag"]["value"]
        for r in rec.resources
        if r.type == "aws:autoscaling/tag:Tag"
    }
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa"] == "4"


def test_a_layout_of_one_efa_per_nci_group_gives_a_request_of_4(monkeypatch):
    cards = network_cards(Cloud.AWS, P6E)
    assert cards is not None
    # the guide's example: card 0 the ENA primary, one efa-only interface in each of the 4 NCI groups
    four = (cards[0], *(NetworkCard(i, 1, "efa-only", 0, 400, "test") for i in (1, 5, 9, 13)))
    monkeypatch.setattr(
        fabric_module, "network_cards", lambda cloud, machine: four if machine == P6E else network_cards(cloud, machine)
    )
    parsed = fabric_module._parse(load_catalog())
    machine = parsed.machines[(Cloud.AWS, P6E)]
    assert machine.kind == FabricKind.EFA and machine.gpu_nics == 4
    assert parsed.machines[(Cloud.AWS, "p5.48xlarge")].gpu_nics == 32  # no card rows: machines.csv's count
