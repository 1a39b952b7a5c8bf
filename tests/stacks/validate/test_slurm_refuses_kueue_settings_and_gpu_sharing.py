"""Settings a Slurm stack cannot honour: Kueue-only settings the user wrote, and GPU sharing on a pool that becomes a
Slurm NodeSet of whole GPUs. Each row breaks the valid ``workload: slurm`` baseline once and pins the exact message;
the same settings are fine where they apply (their defaults, workload kubeflow, a pool that opts out of sharing)."""

from __future__ import annotations

import pytest

from stacks.validate.load import load_spec
from tests.support.spec.cases import assert_pool_issues_name_their_pool, errors_of
from tests.support.spec.edit import edits
from tests.support.spec.slurm_baseline import BASE, case

CASES = [
    case(
        {("gpuRuntime",): {"sharing": {"mode": "time-slicing", "replicas": 4}}},
        """
    error: gpu-cluster:gpuRuntime.sharing.mode: with workload slurm every pool is a Slurm NodeSet that owns whole GPUs (Gres=gpu:<model>:<GPUs per node>), and h100, l4 would advertise 4 time-slices per GPU as nvidia.com/gpu: Slurm would hand out slices as whole GPUs
      received: 'time-slicing'
      allowed:  none (one nvidia.com/gpu per physical GPU)
      fix:      set gpuRuntime.sharing.mode: none (or give h100, l4 nodePools[].gpuRuntime.sharing: {mode: none}); or run shared GPUs with workload: kubeflow
    """,
        id="time-slicing-stack-wide",
    ),
    case(
        {("nodePools", 1, "gpuRuntime"): {"sharing": {"mode": "mps", "replicas": 2}}},
        """
    error: gpu-cluster:nodePools[1].gpuRuntime.sharing.mode: pool 'l4': with workload slurm every pool is a Slurm NodeSet that owns whole GPUs (Gres=gpu:<model>:<GPUs per node>), and l4 would advertise 2 MPS clients per GPU as nvidia.com/gpu: Slurm would hand out slices as whole GPUs
      received: 'mps'
      allowed:  none (one nvidia.com/gpu per physical GPU)
      fix:      set this pool's sharing to {mode: none}; or run shared GPUs with workload: kubeflow
    """,
        id="mps-pool",
    ),
    case(
        {
            ("gpuRuntime",): {"mode": "gpu-operator"},
            ("nodePools", 0, "gpuRuntime"): {"sharing": {"mode": "mig", "migProfile": "1g.10gb"}},
        },
        """
    error: gpu-cluster:nodePools[0].gpuRuntime.sharing.mode: pool 'h100': with workload slurm every pool is a Slurm NodeSet that owns whole GPUs (Gres=gpu:<model>:<GPUs per node>), and h100 would advertise MIG 1g.10gb instances as nvidia.com/gpu: Slurm would hand out slices as whole GPUs
      received: 'mig'
      allowed:  none (one nvidia.com/gpu per physical GPU)
      fix:      set this pool's sharing to {mode: none}; or run shared GPUs with workload: kubeflow
    """,
        id="mig-pool",
    ),
    case(
        {("scheduling", "queueingStrategy"): "StrictFIFO"},
        """
    error: gpu-cluster:scheduling.queueingStrategy: a Kueue-only setting: with workload slurm nothing reads it (Slurm orders pending jobs by multifactor priority and fills gaps with backfill)
      received: 'StrictFIFO'
      allowed:  omit it with workload slurm
      fix:      remove queueingStrategy (Slurm's order: slurm.priorityWeights, slurm.backfill), or set scheduling.workload: kubeflow
    """,
        id="kueue-queueing-strategy",
    ),
    case(
        {("scheduling", "queueingStrategy"): "BestEffortFIFO"},
        """
    error: gpu-cluster:scheduling.queueingStrategy: a Kueue-only setting: with workload slurm nothing reads it (Slurm orders pending jobs by multifactor priority and fills gaps with backfill)
      received: 'BestEffortFIFO'
      allowed:  omit it with workload slurm
      fix:      remove queueingStrategy (Slurm's order: slurm.priorityWeights, slurm.backfill), or set scheduling.workload: kubeflow
    """,
        id="kueue-queueing-strategy-explicit-default",
    ),
    case(
        {("scheduling", "gang"): {"timeoutSeconds": 30}},
        """
    error: gpu-cluster:scheduling.gang: a Kueue-only setting: with workload slurm nothing reads it (Slurm allocates all nodes of a job at once, so there is no gang admission or timeout to set)
      received: {"timeoutSeconds": 30}
      allowed:  omit it with workload slurm
      fix:      remove scheduling.gang, or set scheduling.workload: kubeflow
    """,
        id="kueue-gang",
    ),
    case(
        {("scheduling", "preemption"): {"reclaimWithinCohort": "Never", "withinQueue": "Never"}},
        """
    error: gpu-cluster:scheduling.preemption.reclaimWithinCohort: a Kueue-only setting: with workload slurm nothing reads it (Slurm has no cohort lending to reclaim; preemption is by QOS or partition tier)
      received: 'Never'
      allowed:  omit it with workload slurm
      fix:      remove reclaimWithinCohort (Slurm preemption: preemption.withinQueue and slurm.preemptType), or set scheduling.workload: kubeflow
    """,
        id="kueue-reclaim-within-cohort",
    ),
    case(
        {("scheduling", "queues", 0, "namespace"): "team-r"},
        """
    error: gpu-cluster:scheduling.queues[0].namespace: a Kueue-only setting: with workload slurm nothing reads it (a queue is a Slurm account: jobs go to slurmctld, not to a namespace's LocalQueue)
      received: 'team-r'
      allowed:  omit it with workload slurm
      fix:      remove namespace, and add users with sacctmgr add user NAME account=research; or set scheduling.workload: kubeflow
    """,
        id="kueue-namespace",
    ),
    case(
        {("scheduling", "cohort"): "ml", ("scheduling", "queues", 1, "quotas", 0, "lendingLimit"): 2},
        """
    error: gpu-cluster:scheduling.queues[1].quotas[0].lendingLimit: a Kueue-only setting: with workload slurm nothing reads it (an account's GPU cap, GrpTRES, is its quota plus borrowingLimit; Slurm has no lending limit)
      received: 2
      allowed:  omit it with workload slurm
      fix:      remove lendingLimit, or set scheduling.workload: kubeflow
    """,
        id="kueue-lending-limit",
    ),
]


@pytest.mark.parametrize("changes,expected", CASES)
def test_bad_slurm_setting_is_refused_with_its_exact_message(changes, expected):
    assert errors_of(edits(BASE, changes)) == expected


@pytest.mark.parametrize("changes,expected", CASES)
def test_every_pool_issue_names_its_pool(changes, expected):
    assert_pool_issues_name_their_pool(edits(BASE, changes))


def test_kueue_settings_left_at_their_defaults_are_fine_and_kubeflow_may_set_them():
    """Only what the user wrote is refused: omitted Kueue settings (their defaults) pass with workload slurm, and the
    same settings are valid with workload kubeflow."""
    load_spec(
        edits(
            BASE,
            {
                ("scheduling", "preemption"): {"withinQueue": "LowerPriority"},
                ("scheduling", "topology"): {"mode": "preferred", "level": "block"},
            },
        )
    )
    kubeflow = edits(
        BASE,
        {
            ("scheduling", "workload"): "kubeflow",
            ("scheduling", "queueingStrategy"): "StrictFIFO",
            ("scheduling", "gang"): {"timeoutSeconds": 30},
            ("scheduling", "queues", 0, "namespace"): "team-r",
        },
    )
    del kubeflow["scheduling"]["slurm"]
    load_spec(kubeflow)


def test_a_shared_pool_is_fine_with_kubeflow_and_an_unshared_override_is_fine_with_slurm():
    shared = {"sharing": {"mode": "time-slicing", "replicas": 4}}
    kubeflow = edits(BASE, {("gpuRuntime",): shared, ("scheduling", "workload"): "kubeflow"})
    del kubeflow["scheduling"]["slurm"]
    load_spec(kubeflow)
    # the stack shares GPUs, but every Slurm pool opts out: valid
    load_spec(
        edits(
            BASE,
            {
                ("gpuRuntime",): shared,
                ("nodePools", 0, "gpuRuntime"): {"sharing": {"mode": "none"}},
                ("nodePools", 1, "gpuRuntime"): {"sharing": {"mode": "none"}},
            },
        )
    )
