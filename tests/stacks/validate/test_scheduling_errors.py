"""Bad scheduling sections: each row breaks a valid spec once and pins the exact message a user reads."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from stacks.validate.load import load_spec
from tests.support.spec.edit import DELETE, edits
from tests.support.spec.scheduling_fixtures import GKE_TEAMS
from tests.support.spec.cases import errors_of

S = ("scheduling",)
Q0 = ("scheduling", "queues", 0)
Q1 = ("scheduling", "queues", 1)


def teams(changes: dict[tuple, Any]) -> dict[str, Any]:
    """The valid two-team GKE stack with ``changes`` applied."""
    return edits(GKE_TEAMS, changes)


def case(changes: dict[tuple, Any], *expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(changes, [textwrap.dedent(e).strip("\n") for e in expected], id=id)


NO_COHORT = {
    (*S, "cohort"): DELETE,
    (*Q0, "fairShareWeight"): DELETE,
    (*Q0, "quotas", 0, "lendingLimit"): DELETE,
    (*Q0, "quotas", 1, "borrowingLimit"): DELETE,
    (*Q1, "quotas", 0, "borrowingLimit"): DELETE,
}

CASES = [
    case(
        {(*Q0, "quotas", 0, "pool"): "h10"},
        """
        error: gpu-cluster:scheduling.queues[0].quotas[0].pool: no GPU pool with this name
          received: 'h10'
          allowed:  h100, l4
          fix:      did you mean 'h100'?
        """,
        id="quota-pool-unknown-did-you-mean",
    ),
    case(
        {(*Q0, "quotas", 0, "gpus"): 30},
        """
        error: gpu-cluster:scheduling.queues[1].quotas[0].gpus: nominal quotas in pool 'h100' add up to 38 GPUs (research 30 + product 8), more than the pool has at maxNodes (nodePools[0].maxNodes: 4 × 8 = 32)
          received: 38
          allowed:  at most 32 in total
          fix:      lower the quotas, raise nodePools[0].maxNodes to 5, or set scheduling.overcommit: true
        """,
        id="quotas-exceed-pool-capacity",
    ),
    case(
        {**NO_COHORT, (*Q0, "quotas", 1, "borrowingLimit"): 2},
        """
        error: gpu-cluster:scheduling.queues[0].quotas[1].borrowingLimit: borrowing happens between queues of a cohort, and scheduling.cohort is not set
          received: 2
          allowed:  a cohort name in scheduling.cohort
          fix:      set scheduling.cohort (e.g. cohort: ml), or remove borrowingLimit
        """,
        id="borrowing-needs-a-cohort",
    ),
    case(
        {**NO_COHORT, (*Q1, "quotas", 1, "lendingLimit"): 1},
        """
        error: gpu-cluster:scheduling.queues[1].quotas[1].lendingLimit: lending happens between queues of a cohort, and scheduling.cohort is not set
          received: 1
          allowed:  a cohort name in scheduling.cohort
          fix:      set scheduling.cohort (e.g. cohort: ml), or remove lendingLimit
        """,
        id="lending-needs-a-cohort",
    ),
    case(
        {(*Q0, "quotas", 0, "lendingLimit"): 25},
        """
        error: gpu-cluster:scheduling.queues[0].quotas[0].lendingLimit: lendingLimit is more than the queue's own quota in this pool
          received: 25
          allowed:  0 … 24 (gpus)
          fix:      lower lendingLimit to at most gpus: a queue can only lend what it owns
        """,
        id="lending-more-than-owned",
    ),
    case(
        {(*Q0, "name"): "Team_A"},
        """
        error: gpu-cluster:scheduling.queues[0].name: not a valid queue name
          received: 'Team_A'
          allowed:  a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit
          fix:      rename the queue, e.g. 'team-a'
        """,
        id="queue-name-not-a-dns-label",
    ),
    case(
        {(*Q1, "name"): "research"},
        """
        error: gpu-cluster:scheduling.queues[1].name: duplicate queue name (same as queues[0])
          received: 'research'
          allowed:  unique queue names
          fix:      rename one of the queues
        """,
        id="duplicate-queue-name",
    ),
    case(
        {(*Q1, "namespace"): "kube-system"},
        """
        error: gpu-cluster:scheduling.queues[1].namespace: namespace is reserved for the system
          received: 'kube-system'
          allowed:  any valid name except default, kueue-system, kubeflow-system, kubeflow and kube-*
          fix:      give the team a namespace of its own (omit it to use the queue name)
        """,
        id="reserved-namespace",
    ),
    case(
        {(*S, "cohort"): "ML"},
        """
        error: gpu-cluster:scheduling.cohort: not a valid cohort name
          received: 'ML'
          allowed:  a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit
          fix:      rename the cohort, e.g. 'ml'
        """,
        id="cohort-name-invalid",
    ),
    case(
        {(*S, "priorityClasses", 1, "name"): "production"},
        """
        error: gpu-cluster:scheduling.priorityClasses[1].name: duplicate priority class name (same as priorityClasses[0])
          received: 'production'
          allowed:  unique names
          fix:      rename or remove one of them
        """,
        id="duplicate-priority-class",
    ),
    case(
        {(*S, "priorityClasses", 0, "value"): 2_000_000_000},
        """
        error: gpu-cluster:scheduling.priorityClasses[0].value: priority value out of range
          received: 2000000000
          allowed:  -2147483648 … 1000000000
          fix:      use a smaller number; only the order of the values matters
        """,
        id="priority-value-out-of-range",
    ),
    case(
        {(*Q1, "quotas", 1, "pool"): "h100"},
        """
        error: gpu-cluster:scheduling.queues[1].quotas[1].pool: pool listed twice in this queue (same as quotas[0])
          received: 'h100'
          allowed:  each pool once per queue
          fix:      merge the two entries into one
        """,
        id="pool-twice-in-one-queue",
    ),
    case(
        {(*S, "topology", "mode"): "required"},
        """
        error: gpu-cluster:scheduling.topology.mode: required placement needs pools of fixed size or with queued provisioning, and l4 (0-4 nodes) autoscales: Kueue topology-aware admission counts only nodes that exist, so a gang would wait for a scale-up it never triggers
          received: 'required'
          allowed:  preferred or none (or minNodes = maxNodes, or capacity.queuedProvisioning, on those pools)
          fix:      use topology.mode: preferred, set minNodes equal to maxNodes (e.g. on a reservation), or turn on queued provisioning (GKE: capacity.type flex-start)
        """,
        id="required-placement-on-autoscaled-pool",
    ),
    case(
        {(*S, "topology", "mode"): "required", ("nodePools", 1, "minNodes"): 4},
        """
        error: gpu-cluster:scheduling.topology.level: required block placement is impossible on l4 (g2-standard-24): GKE puts no block topology labels on those nodes
          received: 'block'
          allowed:  zone or host (or topology.mode: preferred)
          fix:      use level: zone or host, or mode: preferred, or move those quotas to a pool with block labels (GKE A3/A4, EKS p4d/p5/p6/g6e)
        """,
        id="required-block-where-the-cloud-sets-no-block-labels",
    ),
    case(
        {(*S, "queues", 1, "quotas", 0, "gpuz"): 1},
        """
        error: gpu-cluster:scheduling.queues[1].quotas[0].gpuz: unknown setting
          received: 'gpuz'
          allowed:  pool, gpus, borrowingLimit, lendingLimit
          fix:      did you mean 'gpus'?
        """,
        id="shape-unknown-key-has-the-full-path",
    ),
    case(
        {(*S, "topology", "level"): "rack"},
        """
        error: gpu-cluster:scheduling.topology.level: not one of the allowed values
          received: 'rack'
          allowed:  host, nvlink, block, zone
          fix:      set it to one of the allowed values
        """,
        id="shape-enum-lists-the-levels",
    ),
    case(
        {(*Q0, "quotas", 1, "gpus"): -1},
        """
        error: gpu-cluster:scheduling.queues[0].quotas[1].gpus: input should be greater than or equal to 0
          received: -1
          allowed:  0 or more
          fix:      raise the value
        """,
        id="shape-negative-quota",
    ),
    case(
        {(*Q0, "name"): "Team_A", (*Q0, "quotas", 0, "pool"): "a100", (*S, "cohort"): "ML"},
        """
        error: gpu-cluster:scheduling.cohort: not a valid cohort name
          received: 'ML'
          allowed:  a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit
          fix:      rename the cohort, e.g. 'ml'
        """,
        """
        error: gpu-cluster:scheduling.queues[0].name: not a valid queue name
          received: 'Team_A'
          allowed:  a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit
          fix:      rename the queue, e.g. 'team-a'
        """,
        """
        error: gpu-cluster:scheduling.queues[0].quotas[0].pool: no GPU pool with this name
          received: 'a100'
          allowed:  h100, l4
          fix:      did you mean 'h100'?
        """,
        id="every-error-at-once-in-config-order",
    ),
]


@pytest.mark.parametrize("changes, expected", CASES)
def test_bad_scheduling_spec_is_rejected_with_exact_message(changes, expected):
    assert errors_of(teams(changes)) == expected


def test_overcommit_declared_allows_more_quota_than_capacity():
    spec, warnings = load_spec(teams({(*Q0, "quotas", 0, "gpus"): 30, (*S, "overcommit"): True}))
    assert spec.scheduling.overcommit and warnings == []


def test_fair_share_weight_without_a_cohort_is_a_warning():
    _, warnings = load_spec(teams({**NO_COHORT, (*Q0, "fairShareWeight"): 2}))
    assert [str(w) for w in warnings] == [
        textwrap.dedent("""
        warning: gpu-cluster:scheduling.queues[0].fairShareWeight: fair-sharing weights only matter between queues of a cohort; this one is ignored
          received: 2
          allowed:  any weight, with a cohort
          fix:      set scheduling.cohort, or remove fairShareWeight""").strip("\n")
    ]


def test_kubeflow_settings_on_the_slurm_workload_are_refused():
    cfg = teams({(*S, "workload"): "slurm", (*S, "kubeflow"): {"katib": True}})
    assert textwrap.dedent("""
        error: gpu-cluster:scheduling.kubeflow: Kubeflow settings apply only to workload kubeflow
          received: {"katib": true, "pipelines": false}
          allowed:  workload: kubeflow
          fix:      remove scheduling.kubeflow, or set scheduling.workload: kubeflow""").strip("\n") in errors_of(cfg)


def test_a_failed_pool_is_still_a_known_name_for_quotas():
    """A pool with its own error (bad machine type) is reported once, where it is wrong, not again by every quota."""
    errors = errors_of(teams({("nodePools", 1, "machineType"): "g2-standard-99"}))
    assert all("scheduling" not in e for e in errors) and any("nodePools[1].machineType" in e for e in errors)
