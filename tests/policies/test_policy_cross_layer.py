"""Cross-layer rules over example stacks recorded from the real components (GPU runtime, Kueue, Slurm): the
example passes, one field changed per case gives the exact message."""

from __future__ import annotations

import functools

import pytest

from preview.engine import read_stack_file, run_program, stack_file
from tests.support.spec.edit import edit
from tests.support.policy.harness import Pack, find, wire, with_props

NP, RELEASE = "gcp:container/nodePool:NodePool", "kubernetes:helm.sh/v3:Release"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
GKE_LABEL = "gke-no-default-nvidia-gpu-device-plugin"


@functools.cache
def _recorded(stack: str):
    return tuple(run_program(read_stack_file(stack_file(stack)), stack).resources)


def recorded(stack: str) -> list:
    return list(_recorded(stack))


def swap(resources, old, props):
    return [with_props(old, props) if r is old else r for r in resources]


@pytest.fixture(scope="module")
def pack() -> Pack:
    p = Pack()
    p.configure()
    return p


@pytest.mark.parametrize("stack", ["gke-kueue", "gke-h100-512", "gke-operator-mig"])
def test_examples_with_scheduler_and_runtime_pass(pack, stack):
    assert pack.stack(recorded(stack)) == []


def test_gpu_advertiser_two_on_one_pool(pack):
    rs = recorded("gke-operator-mig")
    pool = find(rs, NP, "h100-mig")
    props = wire(pool)
    del props["nodeConfig"]["labels"][GKE_LABEL]  # GKE's plugin comes back next to the GPU Operator's
    assert pack.stack(swap(rs, pool, props)) == [
        (
            "cross-layer-gpu-advertiser",
            "mandatory",
            "pool 'h100-mig': 2 components advertise nvidia.com/gpu on its nodes, so the scheduler double-counts GPUs and "
            "pods fight over devices · observed: GKE's managed device plugin; Helm release 'gpu-runtime-gpu-operator' "
            "(gpu-operator) · required: exactly one advertiser per pool\nFix: keep one: on GKE label the pool "
            f"{GKE_LABEL}=true (with gpuDriverVersion INSTALLATION_DISABLED) to use NVIDIA's plugin, or pin the chart's "
            "affinity to other pools (gpu-cluster: gpuRuntime.mode per pool)",
        )
    ]


def test_gpu_advertiser_none_on_a_pool(pack):
    rs = recorded("gke-operator-mig")
    pool = find(rs, NP, "l4-managed")  # keeps the operator away with gpu.deploy.operands=false
    props = edit(wire(pool), f"nodeConfig.labels.{GKE_LABEL}", "true")
    assert [m.split("\n")[0] for _, _, m in pack.stack(swap(rs, pool, props))] == [
        "pool 'l4-managed': nothing advertises nvidia.com/gpu on its nodes, so GPU pods never schedule there · "
        "observed: no device plugin or GPU Operator covers the pool · required: exactly one advertiser per pool"
    ]


def test_kueue_flavor_selects_an_existing_pool(pack):
    rs = recorded("gke-kueue")
    flavor = find(rs, FLAVOR, "kueue-flavor-h100")
    name = wire(flavor)["metadata"]["name"]
    assert name.startswith("h100-")
    assert pack.stack(swap(rs, flavor, edit(wire(flavor), "spec.nodeLabels", {"gpu-cluster/pool": "h100-old"}))) == [
        (
            "cross-layer-pool-exists",
            "mandatory",
            f"Kueue ResourceFlavor '{name}': it selects no node pool of this stack, so workloads admitted to it stay "
            "Pending · observed: spec.nodeLabels {gpu-cluster/pool: h100-old} · required: select one of the pools: h100, "
            "l4\nFix: set "
            "spec.nodeLabels.gpu-cluster/pool to an existing pool (gpu-cluster: the flavor's pool must be in nodePools)",
        )
    ]


def test_kueue_quota_fits_the_pool_at_max_nodes(pack):
    rs = recorded("gke-kueue")
    queue = find(rs, QUEUE, "kueue-cq-research")
    props = edit(wire(queue), "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", 100)
    name = wire(find(rs, FLAVOR, "kueue-flavor-h100"))["metadata"]["name"]
    assert pack.stack(swap(rs, queue, props)) == [
        (
            "cross-layer-kueue-quota",
            "mandatory",
            f"Kueue ResourceFlavor '{name}': ClusterQueues promise more nvidia.com/gpu on pool 'h100' than it can ever "
            "have · observed: 108 GPUs of nominalQuota (product 8, research 100) · required: at most 32 = 4 nodes × 8 "
            "GPUs at max autoscale\nFix: lower the "
            f"nominalQuota of {name} in the queues, or raise the pool's maxNodes",
        )
    ]


def test_slurm_nodeset_selects_an_existing_pool_and_declares_its_gpus(pack):
    rs = recorded("gke-h100-512")
    slurm = find(rs, RELEASE, "slurm-slurm")
    typo = edit(wire(slurm), "values.nodesets.h100-mega.podSpec.nodeSelector", {"gpu-cluster/pool": "h100-meg"})
    assert pack.stack(swap(rs, slurm, typo)) == [
        (
            "cross-layer-pool-exists",
            "mandatory",
            "Slurm NodeSet 'h100-mega': it selects no node pool of this stack (no pool 'h100-meg'), so its slurmd pods "
            "stay Pending · observed: nodeSelector {gpu-cluster/pool: h100-meg} · required: select one of the pools: "
            "h100-mega, l4-eval\nFix: set "
            "nodesets.h100-mega.podSpec.nodeSelector.gpu-cluster/pool to an existing pool",
        )
    ]
    gres = edit(wire(slurm), "values.nodesets.h100-mega.extraConf", "CPUs=195 Gres=gpu:h100:4 RealMemory=1763328")
    assert pack.stack(swap(rs, slurm, gres)) == [
        (
            "cross-layer-slurm-gres",
            "mandatory",
            "Slurm NodeSet 'h100-mega': its GPU count differs from what pool 'h100-mega' nodes (a3-megagpu-8g) have · "
            "observed: Gres=gpu count 4 · required: Gres=gpu:<type>:8\nFix: set the NodeSet's Gres count to 8 (gpu-cluster "
            "renders it from the catalog)",
        )
    ]


def test_eks_node_groups_that_autoscale_need_a_cluster_autoscaler(pack):
    rs = recorded("eks-p5-efa")
    assert [d for d in pack.stack(rs) if d[0] == "cross-layer-eks-autoscaler"] == []
    without = [r for r in rs if not (r.type == RELEASE and r.inputs["chart"] == "cluster-autoscaler")]
    findings = [d for d in pack.stack(without) if d[0] == "cross-layer-eks-autoscaler"]
    assert sorted(d[2].split(":")[0] for d in findings) == ["pool 'l40s-spot'", "pool 'p5-block'", "pool 'p5-ondemand'"]
    assert next(d for d in findings if d[2].startswith("pool 'p5-ondemand'")) == (
        "cross-layer-eks-autoscaler",
        "mandatory",
        "pool 'p5-ondemand': nothing resizes this node group, so it stays at 0 nodes and pods that need more stay "
        "Pending · observed: scalingConfig 0–4 nodes, and no Cluster Autoscaler release in the stack · required: a "
        "Cluster Autoscaler release (chart cluster-autoscaler) in the stack: EKS managed node groups do not resize "
        "themselves, and Karpenter does not resize them\nFix: set cluster.clusterAutoscaler: true (gpu-cluster "
        "installs the Cluster Autoscaler), or "
        "waive cross-layer-eks-autoscaler for this pool if the cluster's Cluster Autoscaler is installed by another "
        "stack",
    )
    group = find(without, "aws:eks/nodeGroup:NodeGroup", "p5-ondemand")
    fixed_size = swap(without, group, edit(wire(group), "scalingConfig.minSize", 4))
    assert "pool 'p5-ondemand'" not in str(pack.stack(fixed_size)), "a fixed-size group needs no autoscaler"
    from tests.support.policy.harness import fake

    deployment = fake(
        "kubernetes:apps/v1:Deployment",
        "ca",
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "ca", "image": "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.1"}
                        ]
                    }
                }
            }
        },
    )
    assert [d for d in pack.stack([*without, deployment]) if d[0] == "cross-layer-eks-autoscaler"] == []


def test_each_cross_layer_rule_is_waived_per_subject(pack, waived):
    kueue, mig, slurm_rs = recorded("gke-kueue"), recorded("gke-operator-mig"), recorded("gke-h100-512")
    flavor = find(kueue, FLAVOR, "kueue-flavor-h100")
    flavor_name = wire(flavor)["metadata"]["name"]
    queue = find(kueue, QUEUE, "kueue-cq-research")
    mig_pool = find(mig, NP, "h100-mig")
    two_advertisers = wire(mig_pool)
    del two_advertisers["nodeConfig"]["labels"][GKE_LABEL]
    slurm = find(slurm_rs, RELEASE, "slurm-slurm")
    gres = edit(wire(slurm), "values.nodesets.h100-mega.extraConf", "CPUs=195 Gres=gpu:h100:4 RealMemory=1763328")
    cases = [
        ("cross-layer-gpu-advertiser", "h100-mig", lambda: pack.stack(swap(mig, mig_pool, two_advertisers))),
        (
            "cross-layer-pool-exists",
            flavor_name,
            lambda: pack.stack(
                swap(kueue, flavor, edit(wire(flavor), "spec.nodeLabels", {"gpu-cluster/pool": "h100-old"}))
            ),
        ),
        (
            "cross-layer-kueue-quota",
            "h100",
            lambda: pack.stack(
                swap(
                    kueue, queue, edit(wire(queue), "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", 100)
                )
            ),
        ),
        (
            "cross-layer-scheduler-tolerations",
            flavor_name,
            lambda: pack.stack(swap(kueue, flavor, edit(wire(flavor), "spec.tolerations", []))),
        ),
        ("cross-layer-slurm-gres", "h100-mega", lambda: pack.stack(swap(slurm_rs, slurm, gres))),
    ]
    for rule, name, run in cases:
        assert waived(pack, rule, name, run) == [], rule
    eks = recorded("eks-p5-efa")
    no_autoscaler = [r for r in eks if not (r.type == RELEASE and r.inputs["chart"] == "cluster-autoscaler")]
    left = waived(pack, "cross-layer-eks-autoscaler", "p5-ondemand", lambda: pack.stack(no_autoscaler))
    assert sorted(d[2].split(":")[0] for d in left) == ["pool 'l40s-spot'", "pool 'p5-block'"]  # one pool waived
