"""Every extended resource or huge page a rendered training runtime or Slinky NodeSet requests on an EKS pool is
declared in that pool's Cluster Autoscaler node template (``k8s.io/cluster-autoscaler/node-template/resources/<name>``
on its Auto Scaling group), at least as much as one pod asks for. Cluster Autoscaler builds a node group's template
node at 0 nodes from the instance type plus those tags only (kubernetes/autoscaler cluster-autoscaler/cloudprovider/
aws/aws_manager.go), so a pod asking for anything else never triggers a scale-up (EFA jobs asked for huge pages the
template lacked). Walks the program's recorded resources of every EKS stack with a scheduler, examples and fixtures."""

from __future__ import annotations

import pytest

from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from stacks.plan.fabric_contract import quantity
from stacks.plan.process_view import workload_views
from tests.support.spec.edit import edits
from tests.support.spec.scheduling_fixtures import EKS_TEAMS, flat_config
from tests.support.slurm.configs import EKS_ZONES

ASG_TAG = "aws:autoscaling/tag:Tag"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "k8s.io/cluster-autoscaler/node-template/resources/"
KNOWN_FROM_INSTANCE_TYPE = {"cpu", "memory", "ephemeral-storage"}
EFA_PLUGIN = {"gpuRuntime": {"mode": "device-plugin", "efaDevicePlugin": True}}

STACKS = {
    "eks-kueue": read_stack_file(PROJECT_ROOT / "Pulumi.eks-kueue.yaml"),
    "eks-teams-efa": flat_config(edits(EKS_TEAMS, EFA_PLUGIN)),
    "eks-zones-slurm-efa": edits(EKS_ZONES, {"gpu-cluster:gpuRuntime": EFA_PLUGIN["gpuRuntime"]}),
}


def _templates(resources) -> dict[str, dict[str, str]]:
    """pool label -> resource -> declared amount, from the ASG tags of each GPU node group."""
    groups = {
        f"eks-{r.name}-offline": r.inputs.get("labels", {}).get("gpu-cluster/pool")
        for r in resources
        if r.type == NODE_GROUP
    }
    out: dict[str, dict[str, str]] = {}
    for r in resources:
        if r.type == ASG_TAG and r.inputs["tag"]["key"].startswith(TEMPLATE):
            pool = groups.get(r.inputs["autoscalingGroupName"])
            if pool:
                out.setdefault(pool, {})[r.inputs["tag"]["key"][len(TEMPLATE) :]] = r.inputs["tag"]["value"]
    return out


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_every_requested_resource_is_in_the_pools_node_template(stack):
    resources = run_program(STACKS[stack], stack).resources
    templates = _templates(resources)
    views = [v for v in workload_views((r.type, r.inputs) for r in resources) if v.pool in templates]
    assert views, f"{stack}: no runtime or NodeSet on an autoscaled EKS pool"
    checked = 0
    for view in views:
        for name, amount in {**view.requests, **view.limits}.items():
            if name in KNOWN_FROM_INSTANCE_TYPE:
                continue
            declared = templates[view.pool].get(name)
            assert declared is not None, (
                f"{stack} {view.workload}: requests {name} {amount}, the node template of "
                f"pool {view.pool} does not declare it"
            )
            assert quantity(declared) >= quantity(amount), f"{stack} {view.workload}: {name} {amount} > {declared}"
            checked += 1
    assert checked >= len(views) * 2  # nvidia.com/gpu and more: the walk saw the EFA requests
