"""Spec errors in a pool's shape: keys, names, node range, upgrade settings, node labels and taints
(``stacks/validate/pool.py``, the shape checks and the pool-name rule).

Each row edits a baseline of ``tests/support/spec/cases.py`` and pins every error a user reads, exactly.
"""

from __future__ import annotations

from tests.support.spec.edit import DELETE
from tests.support.spec.cases import H100, POOL_KEYS, case

CASES = [
    # -- pool shape ------------------------------------------------------------------------------------------------
    case(
        "gke",
        {"nodePools": []},
        """
        error: gpu-cluster:nodePools: must be a non-empty list of GPU pools
          received: []
          allowed:  a YAML list of pools
          fix:      add at least one pool with name, machineType, zones, maxNodes
        """,
        id="node-pools-empty",
    ),
    case(
        "gke",
        {"nodePools[0].maxNode": 3},
        f"""
        error: gpu-cluster:nodePools[0].maxNode: pool 'h100': unknown setting
          received: 'maxNode'
          allowed:  {POOL_KEYS}
          fix:      did you mean 'maxNodes'?
        """,
        id="pool-unknown-key-did-you-mean",
    ),
    case(
        "gke",
        {"nodePools[0].maxNodes": DELETE},
        """
        error: gpu-cluster:nodePools[0].maxNodes: pool 'h100': required setting is missing
          allowed:  a whole number
          fix:      add maxNodes
        """,
        id="pool-max-nodes-missing",
    ),
    case(
        "gke",
        {"nodePools[0].capacity": {"type": "preemptible"}},
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'h100': not one of the allowed values
          received: 'preemptible'
          allowed:  on-demand, spot, reservation, flex-start
          fix:      did you mean 'spot'?
        """,
        id="capacity-type-enum-old-name",
    ),
    case(
        "gke",
        {"nodePools[0].capacity": {"type": "on_demand"}},
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'h100': not one of the allowed values
          received: 'on_demand'
          allowed:  on-demand, spot, reservation, flex-start
          fix:      did you mean 'on-demand'?
        """,
        id="capacity-type-enum-underscore",
    ),
    case(
        "gke",
        {"nodePools[0].name": "H100_Train"},
        """
        error: gpu-cluster:nodePools[0].name: pool 'H100_Train': not a valid pool name
          received: 'H100_Train'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 32 characters
          fix:      rename the pool, e.g. 'h100-train'
        """,
        id="pool-name-invalid",
    ),
    case(
        "gke",
        {"nodePools[0].name": "h" * 33},
        f"""
        error: gpu-cluster:nodePools[0].name: pool '{"h" * 33}': not a valid pool name
          received: '{"h" * 33}'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 32 characters
          fix:      rename the pool, e.g. 'h100-train'
        """,
        id="pool-name-too-long",
    ),
    case(
        "gke",
        {"nodePools": [H100, dict(H100, zones=["us-central1-b"])]},
        """
        error: gpu-cluster:nodePools[1].name: pool 'h100': duplicate pool name (same as nodePools[0])
          received: 'h100'
          allowed:  unique pool names
          fix:      rename one of the pools
        """,
        id="pool-names-duplicate",
    ),
    case(
        "gke",
        {"nodePools": [dict(H100, name="a-100"), dict(H100, name="a_100")]},
        """
        error: gpu-cluster:nodePools[1].name: pool 'a_100': not a valid pool name
          received: 'a_100'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 32 characters
          fix:      rename the pool, e.g. 'h100-train'
        """,
        """
        error: gpu-cluster:nodePools[1].name: pool 'a_100': duplicate pool name (same as nodePools[0])
          received: 'a_100'
          allowed:  unique pool names
          fix:      rename one of the pools
        """,
        id="pool-names-duplicate-after-normalization",
    ),
    case(
        "gke",
        {"nodePools[0].minNodes": 5},
        """
        error: gpu-cluster:nodePools[0].minNodes: pool 'h100': minNodes is larger than maxNodes
          received: 5
          allowed:  0 … 4 (maxNodes)
          fix:      lower minNodes or raise maxNodes
        """,
        id="min-nodes-gt-max-nodes",
    ),
    case(
        "gke",
        {"nodePools[0].minNodes": -1},
        """
        error: gpu-cluster:nodePools[0].minNodes: pool 'h100': input should be greater than or equal to 0
          received: -1
          allowed:  0 or more
          fix:      raise the value
        """,
        id="min-nodes-negative",
    ),
    case(
        "eks",
        {"nodePools[0].maxNodes": 0},
        """
        error: gpu-cluster:nodePools[0].maxNodes: pool 'h100': input should be greater than or equal to 1
          received: 0
          allowed:  1 or more
          fix:      raise the value
        """,
        id="max-nodes-zero",
    ),
    case(
        "gke",
        {"nodePools[0].upgrade": {"maxSurge": 0, "maxUnavailable": 0}},
        """
        error: gpu-cluster:nodePools[0].upgrade: pool 'h100': an upgrade with maxSurge 0 and maxUnavailable 0 can never progress
          received: {"maxSurge": 0, "maxUnavailable": 0}
          allowed:  at least one of them > 0
          fix:      use maxSurge: 0, maxUnavailable: 1 (no spare GPUs needed)
        """,
        id="upgrade-surge-0-unavailable-0",
    ),
    # -- EKS upgrades ----------------------------------------------------------------------------------------------
    case(
        "eks",
        {"nodePools[0].upgrade": {"maxSurge": 2, "maxUnavailable": 0}},
        """
        error: gpu-cluster:nodePools[0].upgrade.maxUnavailable: pool 'h100': EKS managed node groups update at least one node at a time; maxUnavailable 0 is not accepted
          received: 0
          allowed:  1 … 100
          fix:      set maxUnavailable: 1 (EKS has no surge count to keep every node available)
        """,
        id="eks-surge-without-unavailable",
    ),
    case(
        "eks",
        {"nodePools[0].upgrade": {"maxUnavailable": 101}},
        """
        error: gpu-cluster:nodePools[0].upgrade.maxUnavailable: pool 'h100': EKS updates at most 100 nodes at once
          received: 101
          allowed:  1 … 100
          fix:      set maxUnavailable: 100 or less
        """,
        id="eks-unavailable-over-100",
    ),
    # -- labels and taints -----------------------------------------------------------------------------------------
    case(
        "gke",
        {"nodePools[0].labels": {"gpu-cluster/pool": "other"}},
        """
        error: gpu-cluster:nodePools[0].labels.gpu-cluster/pool: pool 'h100': label key is reserved
          received: 'gpu-cluster/pool'
          allowed:  any key outside kubernetes.io/, k8s.io/, cloud.google.com/, eks.amazonaws.com/, gpu-cluster/
          fix:      drop it: gpu-cluster sets gpu-cluster/pool itself, and the cloud owns its prefixes
        """,
        id="label-key-reserved-pool-label",
    ),
    case(
        "eks",
        {"nodePools[0].labels": {"kubernetes.io/role": "gpu"}},
        """
        error: gpu-cluster:nodePools[0].labels.kubernetes.io/role: pool 'h100': label key is reserved
          received: 'kubernetes.io/role'
          allowed:  any key outside kubernetes.io/, k8s.io/, cloud.google.com/, eks.amazonaws.com/, gpu-cluster/
          fix:      drop it: gpu-cluster sets gpu-cluster/pool itself, and the cloud owns its prefixes
        """,
        id="label-key-reserved-prefix",
    ),
    case(
        "gke",
        {"nodePools[0].labels": {"team": "ML Platform"}},
        """
        error: gpu-cluster:nodePools[0].labels.team: pool 'h100': not a valid Kubernetes label value
          received: 'ML Platform'
          allowed:  ≤ 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric
          fix:      shorten or simplify the value
        """,
        id="label-value-invalid",
    ),
    case(
        "gke",
        {"nodePools[0].taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
        """
        error: gpu-cluster:nodePools[0].taints[0].key: pool 'h100': the GPU taint is already set on every GPU pool
          received: 'nvidia.com/gpu'
          allowed:  any key except nvidia.com/gpu
          fix:      remove this taint
        """,
        id="gpu-taint-duplicated-by-user",
    ),
    case(
        "gke",
        {
            "nodePools[0].taints": [
                {"key": "dedicated", "effect": "NoSchedule"},
                {"key": "dedicated", "value": "x", "effect": "NoSchedule"},
            ]
        },
        """
        error: gpu-cluster:nodePools[0].taints[1]: pool 'h100': duplicate taint
          received: 'dedicated'
          allowed:  one taint per key and effect
          fix:      remove the duplicate
        """,
        id="taint-duplicate",
    ),
    case(
        "gke",
        {"nodePools[0].taints": [{"key": "dedicated", "effect": "NoSchedul"}]},
        """
        error: gpu-cluster:nodePools[0].taints[0].effect: pool 'h100': not one of the allowed values
          received: 'NoSchedul'
          allowed:  NoSchedule, PreferNoSchedule, NoExecute
          fix:      did you mean 'NoSchedule'?
        """,
        id="taint-effect-typo",
    ),
]
