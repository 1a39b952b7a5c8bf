"""Spec errors of flex-start and queued provisioning (``stacks/validate/queued.py``, the flex-start price in
``stacks/validate/pool_catalog.py``). Each row edits a baseline of ``tests/support/spec/cases.py`` and pins every error a
user reads, exactly."""

from __future__ import annotations

from tests.support.spec.cases import case

FLEX = {"type": "flex-start"}
KUEUE = {"workload": "kubeflow", "queues": [{"name": "team", "quotas": [{"pool": "h100", "gpus": 8}]}]}
"""Kueue creates the ProvisioningRequests a queued pool gets its nodes through: without it the pool is refused for that
alone (``test_generated_stacks``), so each row below has it and pins only its own error."""

CASES = [
    case(
        "eks",
        {"scheduling": KUEUE, "nodePools[0].capacity": FLEX},
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'h100': flex-start is GKE's Dynamic Workload Scheduler; EKS has no such capacity type
          received: 'flex-start'
          allowed:  on-demand, spot or reservation
          fix:      use capacity.type: on-demand with queuedProvisioning: true (all-or-nothing scale-ups by the Cluster Autoscaler), or a reservation with reservationKind: capacity-block
        """,
        id="flex-start-on-eks",
    ),
    case(
        "gke",
        {"scheduling": KUEUE, "nodePools[0].capacity": {"maxRunHours": 24}},
        """
        error: gpu-cluster:nodePools[0].capacity.maxRunHours: pool 'h100': maxRunHours limits flex-start nodes only
          received: 24
          allowed:  capacity.type: flex-start
          fix:      remove capacity.maxRunHours, or use flex-start
        """,
        id="max-run-hours-on-on-demand",
    ),
    case(
        "gke",
        {"scheduling": KUEUE, "nodePools[0].capacity": {**FLEX, "maxRunHours": 200}},
        """
        error: gpu-cluster:nodePools[0].capacity.maxRunHours: pool 'h100': GKE runs a flex-start node for at most seven days
          received: 200
          allowed:  1 … 168
          fix:      use at most 168; checkpoint jobs that run longer
        """,
        id="max-run-hours-over-seven-days",
    ),
    case(
        "gke",
        {"scheduling": KUEUE, "nodePools[0].capacity": {"queuedProvisioning": True}},
        """
        error: gpu-cluster:nodePools[0].capacity.queuedProvisioning: pool 'h100': GKE's queued provisioning runs on flex-start (DWS) capacity
          received: true
          allowed:  capacity.type: flex-start (now on-demand)
          fix:      set capacity.type: flex-start, or remove queuedProvisioning
        """,
        id="gke-queued-provisioning-without-flex-start",
    ),
    case(
        "gke",
        {"scheduling": KUEUE, "nodePools[0].capacity": FLEX, "nodePools[0].minNodes": 2},
        """
        error: gpu-cluster:nodePools[0].minNodes: pool 'h100': a flex-start pool starts at 0 nodes: nodes come for admitted work and go with it (GKE creates such pools with 0 nodes)
          received: 2
          allowed:  0
          fix:      set minNodes: 0 (use an on-demand or reservation pool for nodes that must always run)
        """,
        id="flex-start-with-min-nodes",
    ),
    case(
        "eks",
        {"scheduling": KUEUE, "nodePools[0].capacity": {"queuedProvisioning": True}, "nodePools[0].minNodes": 1},
        """
        error: gpu-cluster:nodePools[0].minNodes: pool 'h100': a queued-provisioning pool starts at 0 nodes: nodes come for admitted work and go with it (GKE creates such pools with 0 nodes)
          received: 1
          allowed:  0
          fix:      set minNodes: 0 (use an on-demand or reservation pool for nodes that must always run)
        """,
        id="eks-queued-with-min-nodes",
    ),
    case(
        "eks",
        {
            "scheduling": KUEUE,
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "queuedProvisioning": True,
            },
        },
        """
        error: gpu-cluster:nodePools[0].capacity.queuedProvisioning: pool 'h100': a reservation's nodes are bought already; an all-or-nothing scale-up adds nothing
          received: true
          allowed:  on-demand or spot node groups
          fix:      remove queuedProvisioning from the reservation pool
        """,
        id="eks-queued-reservation",
    ),
    case(
        "eks",
        {
            "scheduling": KUEUE,
            "nodePools[0].capacity": {"queuedProvisioning": True},
            "cluster.clusterAutoscaler": False,
        },
        """
        error: gpu-cluster:nodePools[0].capacity.queuedProvisioning: pool 'h100': nothing serves the ProvisioningRequests: the stack installs no Cluster Autoscaler (cluster.clusterAutoscaler: false)
          received: true
          allowed:  cluster.clusterAutoscaler: true
          fix:      set cluster.clusterAutoscaler: true, or remove queuedProvisioning
        """,
        id="eks-queued-without-cluster-autoscaler",
    ),
    case(
        "gke",
        {
            "scheduling": KUEUE,
            "nodePools[0].capacity": FLEX,
            "region": "us-east4",
            "nodePools[0].zones": ["us-east4-a"],
        },
        """
        error: gpu-cluster:nodePools[0].machineType: pool 'h100': no flex-start price for a3-highgpu-8g in us-east4; refusing to guess (unknown is not $0)
          received: 'a3-highgpu-8g'
          allowed:  regions with a flex-start price: us-central1
          fix:      add a dated, sourced row to catalog/data/flex-start-prices.csv, or pick another region, capacity type or machine type
        """,
        id="flex-start-without-a-price-in-the-region",
    ),
]
