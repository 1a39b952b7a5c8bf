"""EKS fabric: EFA on every network card of a multi-node pool (card 0 ``efa``, the rest ``efa-only``), none with
``fabric.mode: off`` (the policy pack then reports the pool)."""

from __future__ import annotations

from preview.engine import run_program
from tests.support.spec.edit import edits
from tests.support.preview.recorded import of_type, one
from tests.support.spec.stack_configs import EKS

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EFA_TAG = "k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa"


def _asg_tags(rec) -> dict[str, str]:
    return {t.inputs["tag"]["key"]: t.inputs["tag"]["value"] for t in of_type(rec, "aws:autoscaling/tag:Tag")}


def test_only_card_zero_is_an_ip_carrying_efa_interface():
    nics = one(run_program(EKS), LAUNCH_TEMPLATE, "p5-lt").inputs["networkInterfaces"]
    assert [(n["networkCardIndex"], n["deviceIndex"], n["interfaceType"]) for n in nics] == [
        (0, 0, "efa"),
        *((i, 1, "efa-only") for i in range(1, 32)),
    ]


def test_fabric_off_attaches_no_efa_and_advertises_none():
    rec = run_program(edits(EKS, {"nodePools[0].fabric": {"mode": "off"}}))
    assert "networkInterfaces" not in one(rec, LAUNCH_TEMPLATE, "p5-lt").inputs
    assert EFA_TAG not in _asg_tags(rec)
    assert EFA_TAG in _asg_tags(run_program(EKS))


def test_p5_nodes_assemble_their_nvme_instance_store_as_raid0_with_nodeadm():
    import base64
    import email

    user_data = one(run_program(EKS), LAUNCH_TEMPLATE, "p5-lt").inputs["userData"]
    message = email.message_from_string(base64.b64decode(user_data).decode())
    assert message.is_multipart(), "managed node groups merge only MIME multi-part user data"
    (part,) = [p for p in message.get_payload() if p.get_content_type() == "application/node.eks.aws"]
    others = [p.get_payload() for p in message.get_payload() if p is not part]  # the device plugin's toolkit lockdown
    assert len(others) == 1 and "nvidia-ctk config --in-place" in others[0]
    import yaml

    config = yaml.safe_load(part.get_payload())
    assert config["kind"] == "NodeConfig" and config["spec"]["instance"]["localStorage"] == {"strategy": "RAID0"}
    off = one(
        run_program(edits(EKS, {"nodePools[0].localSsdEphemeralStorage": False})), LAUNCH_TEMPLATE, "p5-lt"
    ).inputs
    assert "localStorage" not in base64.b64decode(off["userData"]).decode()
