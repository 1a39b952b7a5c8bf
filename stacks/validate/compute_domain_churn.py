"""A team's shared ComputeDomain on a rack-scale pool, said plainly to a reviewer: gpu-cluster keeps one elastic
ComputeDomain per team namespace and pool (``<pool>-imex``, ``numNodes: 0``) that all of that team's jobs share,
Slurm's slurmd pods included. Upstream advises one per job: the EKS P6e-GB200 guide ("It is a best practice to create
a ComputeDomain per workload job") and the DRA driver's docs (ComputeDomains are ephemeral). A shared elastic domain
adds and removes nodes whenever another job's pods land on or leave a node of the rack, under the jobs already
running in it (kubernetes-sigs/dra-driver-nvidia-gpu#1245: ``nodes_config.cfg`` is read only at startup; #1418:
index churn left workloads failing with ``invalid resource handle``)."""

from __future__ import annotations

from catalog import Catalog, Cloud
from stacks.plan.reservation import is_capacity_block
from stacks.spec.scheduling import SchedulingSpec, Workload
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues

UPSTREAM = "dra-driver-nvidia-gpu#1245, #1418"


def check_shared_domain_churn(
    issues: Issues, cat: Catalog, cloud: Cloud, pools: list[tuple[int, NodePool]], sched: SchedulingSpec
) -> None:
    for i, pool in pools:
        machine = cat.machines.get((cloud, pool.machine_type))
        if machine is None or cat.nvlink_domain(machine) is None or not pool.multi_node:
            continue
        scope = issues.pool(i, pool.name)
        slurm = sched.workload == Workload.SLURM
        who = "the slurmd pods of every Slurm job" if slurm else "every job of the team that does not bring its own"
        scope.warn(
            "multiNode",
            f"the team's ComputeDomain {pool.name}-imex is shared by {who} and adds and removes nodes under running "
            "jobs: when another job's pods land on or leave a node of the rack, the domain's members change while "
            f"jobs run in it ({UPSTREAM}: the IMEX node list is read at startup; index churn left workloads failing "
            "with invalid resource handle); upstream and the EKS P6e-GB200 guide recommend one ComputeDomain per job",
            "one shared ComputeDomain per team namespace",
            allowed="one ComputeDomain per job",
            fix="run Kubeflow jobs with their own domain (`python -m preview job-objects --stack <stack> --job "
            "<name>`)"
            + ("; Slurm jobs share the NodeSet's domain: keep its pods steady (minNodes = maxNodes)" if slurm else ""),
        )
        power_saving = slurm and sched.slurm.scaling.enabled
        if power_saving and is_capacity_block(pool) and pool.min_nodes < pool.max_nodes:
            # warned, not refused: jobs still run, and a block too short to matter may be fine with it
            scope.warn(
                "minNodes",
                f"Slurm power saving deletes and recreates the pool's slurmd pods on a capacity block that is paid "
                f"for its whole window anyway: it saves nothing, and each pod leaving or joining moves the shared "
                f"ComputeDomain {pool.name}-imex under the jobs running in it ({UPSTREAM})",
                pool.min_nodes,
                allowed=f"minNodes = maxNodes ({pool.max_nodes}) on a capacity block",
                fix=f"set minNodes: {pool.max_nodes} (the block's scale-up brings every node up anyway), or "
                "scheduling.slurm.scaling.enabled: false",
            )
