"""EKS clusters gpu-cluster creates get the node monitoring agent add-on, which reports the GPU node conditions
that the node groups' auto repair acts on; existing clusters are left alone."""

from __future__ import annotations

from preview.engine import run_program
from tests.support.spec.edit import edits
from tests.support.preview.recorded import of_type, one, parent_of
from tests.support.spec.stack_configs import EKS

ADDON = "aws:eks/addon:Addon"


def test_created_clusters_get_the_agent_next_to_node_repair():
    rec = run_program(EKS)
    agent = one(rec, ADDON, "node-monitoring-agent")
    assert agent.inputs["addonName"] == "eks-node-monitoring-agent" and agent.inputs["clusterName"] == "ml"
    assert parent_of(rec, agent).type == "gpu-cluster:aws:EksNodeMonitoring"
    assert one(rec, "aws:eks/nodeGroup:NodeGroup", "p5").inputs["nodeRepairConfig"] == {"enabled": True}


def test_existing_clusters_are_not_changed():
    rec = run_program(edits(EKS, {"cluster.mode": "existing", "cluster.clusterAutoscaler": False}))
    assert [a for a in of_type(rec, ADDON) if a.inputs["addonName"] == "eks-node-monitoring-agent"] == []
