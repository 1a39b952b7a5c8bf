"""Bad stack configs: each row mutates a valid baseline and pins the exact error a user reads.

The expected text is ``str(SpecIssue)``: path and problem, then received / allowed / fix lines. A row fails when
the message changes, so message edits are deliberate and reviewed here.
"""
from __future__ import annotations

import copy
import textwrap
from typing import Any

import pytest

from validation.issues import SpecError, SpecIssue, allowed_list, sort_key
from validation.load import load_spec
from stacks.spec import TOP_LEVEL_KEYS, NodePool

GKE_BASELINE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-central1",
    "project": "ml-platform-prod",
    "cluster": {"name": "ml-train"},
    "nodePools": [{"name": "h100", "machineType": "a3-highgpu-8g", "zones": ["us-central1-a"], "maxNodes": 4}],
}
EKS_BASELINE: dict[str, Any] = {
    "cloud": "aws",
    "region": "us-east-1",
    "cluster": {"name": "ml-train",
                "subnets": {"us-east-1a": "subnet-0123456789abcdef0", "us-east-1b": "subnet-0123456789abcdef1"}},
    "nodePools": [{"name": "h100", "machineType": "p5.48xlarge", "zones": ["us-east-1a"], "maxNodes": 4}],
}
BASELINES = {"gke": GKE_BASELINE, "eks": EKS_BASELINE}
DELETE = object()
"""Edit value that removes the key."""
POOL = ("nodePools", 0)


def mutate(base: dict[str, Any], edits: dict[tuple, Any]) -> dict[str, Any]:
    """A deep copy of ``base`` with each ``path -> value`` edit applied (``DELETE`` removes the key)."""
    cfg = copy.deepcopy(base)
    for path, value in edits.items():
        parent = cfg
        for key in path[:-1]:
            parent = parent[key]
        if value is DELETE:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(value)
    return cfg


def errors_of(cfg: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(cfg)
    return [str(issue) for issue in info.value.errors]


def case(base: str, edits: dict[tuple, Any], *expected: str, id: str):  # noqa: A002 - pytest's name
    return pytest.param(base, edits, [textwrap.dedent(e).strip("\n") for e in expected], id=id)


H100 = {"name": "h100", "machineType": "a3-highgpu-8g", "zones": ["us-central1-a"], "maxNodes": 4}
SUBNETS_AB = "us-east-1a, us-east-1b"
TOP_KEYS = allowed_list(TOP_LEVEL_KEYS)
"""The settings list grows with features; its order and format are still pinned through the model."""
POOL_KEYS = allowed_list(f.alias or n for n, f in NodePool.model_fields.items())

CASES = [
    # -- top level --------------------------------------------------------------------------------------------
    case("gke", {("nodePool",): []}, f"""
        error: gpu-cluster:nodePool: unknown setting
          received: 'nodePool'
          allowed:  {TOP_KEYS}
          fix:      did you mean 'nodePools'?
        """, id="unknown-top-level-key-did-you-mean"),
    case("gke", {("cloud",): "gke"}, """
        error: gpu-cluster:cloud: not one of the allowed values
          received: 'gke'
          allowed:  gcp, aws
          fix:      did you mean 'gcp'?
        """, id="cloud-enum-product-name"),
    case("gke", {("cloud",): "azure"}, """
        error: gpu-cluster:cloud: not one of the allowed values
          received: 'azure'
          allowed:  gcp, aws
          fix:      set it to one of the allowed values
        """, id="cloud-enum-unsupported"),
    case("gke", {("cloud",): DELETE}, """
        error: gpu-cluster:cloud: required setting is missing
          allowed:  gcp, aws
          fix:      add gpu-cluster:cloud to the stack config
        """, id="cloud-missing"),
    case("gke", {("region",): "us-centrl1"}, """
        error: gpu-cluster:region: no catalog data for gcp region 'us-centrl1'
          received: 'us-centrl1'
          allowed:  us-central1, us-east4
          fix:      did you mean 'us-central1'?
        """, id="region-unknown-did-you-mean"),
    case("gke", {("region",): "us-east-1"}, """
        error: gpu-cluster:region: us-east-1 is an AWS region; this stack's cloud is gcp
          received: 'us-east-1'
          allowed:  us-central1, us-east4
          fix:      pick a GCP region, or set gpu-cluster:cloud to aws (and use aws machine types and zones)
        """, id="region-of-the-other-cloud"),
    case("gke", {("project",): DELETE}, """
        error: gpu-cluster:project: a GCP stack needs the project ID
          allowed:  a GCP project ID: 6-30 lower-case letters, digits or '-'
          fix:      pulumi config set gpu-cluster:project <your-project-id>
        """, id="gcp-project-missing"),
    case("gke", {("project",): "My Project"}, """
        error: gpu-cluster:project: not a valid GCP project ID
          received: 'My Project'
          allowed:  6-30 lower-case letters, digits or '-', starting with a letter
          fix:      use the project ID (not the display name or number) from `gcloud projects list`
        """, id="gcp-project-display-name"),
    case("gke", {("project",): 123456789012}, """
        error: gpu-cluster:project: input should be a valid string
          received: 123456789012
          fix:      write a string (quote it in YAML)
        """, id="gcp-project-number-reported-once"),
    case("eks", {("project",): "ml-platform-prod"}, """
        error: gpu-cluster:project: project is a GCP setting; this stack's cloud is aws
          received: 'ml-platform-prod'
          fix:      remove gpu-cluster:project (use gpu-cluster:accountId to pin the AWS account)
        """, id="project-set-on-aws"),
    case("eks", {("accountId",): "1234"}, """
        error: gpu-cluster:accountId: not a valid AWS account ID
          received: '1234'
          allowed:  exactly 12 digits
          fix:      quote it in YAML so leading zeros survive, e.g. accountId: "012345678901"
        """, id="aws-account-id-malformed"),
    case("gke", {("labels",): {"Team": "ml"}}, """
        error: gpu-cluster:labels.Team: not a valid cloud label key
          received: 'Team'
          allowed:  1-63 lower-case letters, digits, '-' or '_', starting with a letter
          fix:      rename the key, e.g. 'cost-center'
        """, id="resource-label-key-upper-case"),
    # -- cluster ----------------------------------------------------------------------------------------------
    case("gke", {("cluster", "name"): "ML_Train"}, """
        error: gpu-cluster:cluster.name: not a valid cluster name
          received: 'ML_Train'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 40 characters
          fix:      rename the cluster, e.g. 'ml-train'
        """, id="cluster-name-invalid"),
    case("gke", {("cluster", "name"): "m" * 41}, f"""
        error: gpu-cluster:cluster.name: not a valid cluster name
          received: '{"m" * 41}'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 40 characters
          fix:      rename the cluster, e.g. 'ml-train'
        """, id="cluster-name-too-long-for-gke"),
    case("gke", {("cluster", "authorizedNetworks"): ["0.0.0.0/0"]}, """
        error: gpu-cluster:cluster.authorizedNetworks[0]: the Kubernetes API must not be reachable from the whole internet
          received: '0.0.0.0/0'
          allowed:  your office or VPN ranges, e.g. 203.0.113.0/24
          fix:      list only the ranges that run kubectl/pulumi; leave empty for a private endpoint
        """, id="authorized-network-whole-internet-v4"),
    case("eks", {("cluster", "authorizedNetworks"): ["203.0.113.0/24", "::/0"]}, """
        error: gpu-cluster:cluster.authorizedNetworks[1]: the Kubernetes API must not be reachable from the whole internet
          received: '::/0'
          allowed:  your office or VPN ranges, e.g. 203.0.113.0/24
          fix:      list only the ranges that run kubectl/pulumi; leave empty for a private endpoint
        """, id="authorized-network-whole-internet-v6"),
    case("gke", {("cluster", "authorizedNetworks"): ["10.0.0.1/24"]}, """
        error: gpu-cluster:cluster.authorizedNetworks[0]: not a valid CIDR (10.0.0.1/24 has host bits set)
          received: '10.0.0.1/24'
          allowed:  an IPv4/IPv6 network such as 203.0.113.0/24
          fix:      write the network address with its prefix length
        """, id="authorized-network-host-bits"),
    case("gke", {("cluster", "authorizedNetworks"): ["office"]}, """
        error: gpu-cluster:cluster.authorizedNetworks[0]: not a valid CIDR ('office' does not appear to be an IPv4 or IPv6 network)
          received: 'office'
          allowed:  an IPv4/IPv6 network such as 203.0.113.0/24
          fix:      write the network address with its prefix length
        """, id="authorized-network-not-a-cidr"),
    case("eks", {("cluster", "releaseChannel"): "RAPID"}, """
        error: gpu-cluster:cluster.releaseChannel: releaseChannel is a GKE setting; this stack's cloud is aws
          received: 'RAPID'
          fix:      remove cluster.releaseChannel
        """, id="gke-only-field-on-aws"),
    case("gke", {("cluster", "subnets"): {"us-central1-a": "subnet-0123456789abcdef0"}}, """
        error: gpu-cluster:cluster.subnets: subnets is an EKS setting; this stack's cloud is gcp
          received: {"us-central1-a": "subnet-0123456789abcdef0"}
          fix:      remove cluster.subnets
        """, id="eks-only-field-on-gcp"),
    case("eks", {("cluster", "subnets"): {"us-east-1a": "subnet-0123456789abcdef0"}}, """
        error: gpu-cluster:cluster.subnets: a new EKS cluster needs subnets in at least two zones
          received: {"us-east-1a": "subnet-0123456789abcdef0"}
          allowed:  two or more {zone: subnet-id} entries
          fix:      add a private subnet for a second Availability Zone
        """, id="eks-cluster-single-subnet"),
    case("eks", {("cluster", "subnets", "us-east-1b"): "subnet-xyz"}, """
        error: gpu-cluster:cluster.subnets.us-east-1b: not an EC2 subnet ID
          received: 'subnet-xyz'
          allowed:  subnet- followed by 8 or 17 hex digits
          fix:      copy the ID from `aws ec2 describe-subnets`
        """, id="eks-subnet-id-malformed"),
    case("eks", {("cluster", "kubernetesVersion"): "1.24"}, """
        error: gpu-cluster:cluster.kubernetesVersion: EKS version not in the supported set
          received: '1.24'
          allowed:  1.32, 1.33, 1.34, 1.35, 1.36
          fix:      quote the version in YAML ("1.35") and pick a supported one
        """, id="eks-kubernetes-version-unsupported"),
    case("eks", {("cluster", "kubernetesVersion"): 1.3}, """
        error: gpu-cluster:cluster.kubernetesVersion: input should be a valid string
          received: 1.3
          fix:      write a string (quote it in YAML)
        """, id="eks-kubernetes-version-yaml-float"),
    case("gke", {("cluster", "systemPool"): {"machineType": "a3-highgpu-8g"}}, """
        error: gpu-cluster:cluster.systemPool.machineType: the system pool must be a CPU type
          received: 'a3-highgpu-8g'
          allowed:  e2-standard-4 (or any CPU type)
          fix:      GPU types belong in nodePools; pick a CPU type for add-ons
        """, id="system-pool-gpu-type"),
    case("gke", {("cluster", "systemPool"): {"minNodes": 4}}, """
        error: gpu-cluster:cluster.systemPool.minNodes: minNodes is larger than maxNodes
          received: 4
          allowed:  1 … 3 (maxNodes)
          fix:      lower minNodes or raise maxNodes
        """, id="system-pool-min-gt-max"),
    # -- pool shape -------------------------------------------------------------------------------------------
    case("gke", {("nodePools",): []}, """
        error: gpu-cluster:nodePools: must be a non-empty list of GPU pools
          received: []
          allowed:  a YAML list of pools
          fix:      add at least one pool with name, machineType, zones, maxNodes
        """, id="node-pools-empty"),
    case("gke", {POOL + ("maxNode",): 3}, f"""
        error: gpu-cluster:nodePools[0].maxNode: unknown setting
          received: 'maxNode'
          allowed:  {POOL_KEYS}
          fix:      did you mean 'maxNodes'?
        """, id="pool-unknown-key-did-you-mean"),
    case("gke", {POOL + ("maxNodes",): DELETE}, """
        error: gpu-cluster:nodePools[0].maxNodes: required setting is missing
          allowed:  a whole number
          fix:      add maxNodes
        """, id="pool-max-nodes-missing"),
    case("gke", {POOL + ("capacity",): {"type": "preemptible"}}, """
        error: gpu-cluster:nodePools[0].capacity.type: not one of the allowed values
          received: 'preemptible'
          allowed:  on-demand, spot, reservation
          fix:      did you mean 'spot'?
        """, id="capacity-type-enum-old-name"),
    case("gke", {POOL + ("capacity",): {"type": "on_demand"}}, """
        error: gpu-cluster:nodePools[0].capacity.type: not one of the allowed values
          received: 'on_demand'
          allowed:  on-demand, spot, reservation
          fix:      did you mean 'on-demand'?
        """, id="capacity-type-enum-underscore"),
    case("gke", {POOL + ("name",): "H100_Train"}, """
        error: gpu-cluster:nodePools[0].name: not a valid pool name
          received: 'H100_Train'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 32 characters
          fix:      rename the pool, e.g. 'h100-train'
        """, id="pool-name-invalid"),
    case("gke", {POOL + ("name",): "h" * 33}, f"""
        error: gpu-cluster:nodePools[0].name: not a valid pool name
          received: '{"h" * 33}'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 32 characters
          fix:      rename the pool, e.g. 'h100-train'
        """, id="pool-name-too-long"),
    case("gke", {("nodePools",): [H100, dict(H100, zones=["us-central1-b"])]}, """
        error: gpu-cluster:nodePools[1].name: duplicate pool name (same as nodePools[0])
          received: 'h100'
          allowed:  unique pool names
          fix:      rename one of the pools
        """, id="pool-names-duplicate"),
    case("gke", {("nodePools",): [dict(H100, name="a-100"), dict(H100, name="a_100")]}, """
        error: gpu-cluster:nodePools[1].name: not a valid pool name
          received: 'a_100'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 32 characters
          fix:      rename the pool, e.g. 'h100-train'
        """, """
        error: gpu-cluster:nodePools[1].name: duplicate pool name (same as nodePools[0])
          received: 'a_100'
          allowed:  unique pool names
          fix:      rename one of the pools
        """, id="pool-names-duplicate-after-normalization"),
    case("gke", {POOL + ("minNodes",): 5}, """
        error: gpu-cluster:nodePools[0].minNodes: minNodes is larger than maxNodes
          received: 5
          allowed:  0 … 4 (maxNodes)
          fix:      lower minNodes or raise maxNodes
        """, id="min-nodes-gt-max-nodes"),
    case("gke", {POOL + ("minNodes",): -1}, """
        error: gpu-cluster:nodePools[0].minNodes: input should be greater than or equal to 0
          received: -1
          allowed:  0 or more
          fix:      raise the value
        """, id="min-nodes-negative"),
    case("eks", {POOL + ("maxNodes",): 0}, """
        error: gpu-cluster:nodePools[0].maxNodes: input should be greater than or equal to 1
          received: 0
          allowed:  1 or more
          fix:      raise the value
        """, id="max-nodes-zero"),
    case("gke", {POOL + ("upgrade",): {"maxSurge": 0, "maxUnavailable": 0}}, """
        error: gpu-cluster:nodePools[0].upgrade: an upgrade with maxSurge 0 and maxUnavailable 0 can never progress
          received: {"maxSurge": 0, "maxUnavailable": 0}
          allowed:  at least one of them > 0
          fix:      use maxSurge: 0, maxUnavailable: 1 (no spare GPUs needed)
        """, id="upgrade-surge-0-unavailable-0"),
    # -- machine type and GPUs --------------------------------------------------------------------------------
    case("gke", {POOL + ("machineType",): "a3-highgpu-8"}, """
        error: gpu-cluster:nodePools[0].machineType: unknown GPU machine type for gcp
          received: 'a3-highgpu-8'
          allowed:  a2-highgpu-1g, a2-highgpu-2g, a2-highgpu-4g, a2-highgpu-8g, a2-megagpu-16g, a2-ultragpu-1g, a2-ultragpu-2g, a2-ultragpu-4g, a2-ultragpu-8g, a3-edgegpu-8g, a3-highgpu-1g, a3-highgpu-2g, … (26 in all)
          fix:      did you mean 'a3-highgpu-8g'?
        """, id="machine-type-unknown-did-you-mean"),
    case("gke", {POOL + ("machineType",): "p5.48xlarge"}, """
        error: gpu-cluster:nodePools[0].machineType: p5.48xlarge is an AWS machine type; this stack's cloud is gcp
          received: 'p5.48xlarge'
          allowed:  a2-highgpu-1g, a2-highgpu-2g, a2-highgpu-4g, a2-highgpu-8g, a2-megagpu-16g, a2-ultragpu-1g, a2-ultragpu-2g, a2-ultragpu-4g, a2-ultragpu-8g, a3-edgegpu-8g, a3-highgpu-1g, a3-highgpu-2g, … (26 in all)
          fix:      use a GCP type with the same GPUs (8 × H100_80GB): a3-highgpu-8g, a3-megagpu-8g; or move this pool to an AWS stack
        """, id="machine-type-from-aws-on-gke"),
    case("eks", {POOL + ("machineType",): "a2-ultragpu-8g"}, """
        error: gpu-cluster:nodePools[0].machineType: a2-ultragpu-8g is a GCP machine type; this stack's cloud is aws
          received: 'a2-ultragpu-8g'
          allowed:  g4dn.12xlarge, g4dn.16xlarge, g4dn.2xlarge, g4dn.4xlarge, g4dn.8xlarge, g4dn.metal, g4dn.xlarge, g5.12xlarge, g5.16xlarge, g5.24xlarge, g5.2xlarge, g5.48xlarge, … (42 in all)
          fix:      use an AWS type with the same GPUs (8 × A100_80GB): p4de.24xlarge; or move this pool to a GCP stack
        """, id="machine-type-from-gcp-on-eks"),
    case("gke", {POOL + ("accelerator",): {"type": "nvidia-h100-80gb", "count": 4}}, """
        error: gpu-cluster:nodePools[0].accelerator.count: a3-highgpu-8g has exactly 8 × nvidia-h100-80gb
          received: 4
          allowed:  8
          fix:      remove accelerator.count, or pick the machine size with that many GPUs
        """, id="fixed-gpu-count-mismatch"),
    case("gke", {POOL + ("accelerator",): {"type": "nvidia-tesla-a100"}}, """
        error: gpu-cluster:nodePools[0].accelerator.type: a3-highgpu-8g comes with nvidia-h100-80gb GPUs; nvidia-tesla-a100 cannot be attached to it
          received: 'nvidia-tesla-a100'
          allowed:  nvidia-h100-80gb
          fix:      remove accelerator (the catalog knows it) or pick a machine type for that GPU
        """, id="fixed-type-wrong-accelerator"),
    case("gke", {POOL + ("machineType",): "n1-standard-8"}, """
        error: gpu-cluster:nodePools[0].accelerator: n1-standard-8 has no built-in GPU; say which GPU to attach
          allowed:  nvidia-tesla-t4, nvidia-tesla-v100
          fix:      add accelerator: {type: nvidia-tesla-t4, count: 1}
        """, id="n1-host-without-accelerator"),
    case("gke", {POOL + ("machineType",): "n1-standard-8", POOL + ("accelerator",): {"type": "nvidia-tesla-t4",
                                                                                       "count": 3}}, """
        error: gpu-cluster:nodePools[0].accelerator.count: nvidia-tesla-t4 attaches in fixed counts
          received: 3
          allowed:  1, 2, 4
          fix:      pick one of the allowed counts
        """, id="n1-disallowed-gpu-count"),
    case("gke", {POOL + ("machineType",): "n1-standard-8", POOL + ("accelerator",): {"type": "nvidia-tesla-v100"}}, """
        error: gpu-cluster:nodePools[0].accelerator.count: say how many nvidia-tesla-v100 GPUs to attach to n1-standard-8
          allowed:  1, 2, 4, 8
          fix:      add accelerator.count: 1 (or another allowed count)
        """, id="n1-gpu-count-missing"),
    case("gke", {POOL + ("machineType",): "n1-standard-8", POOL + ("accelerator",): {"type": "nvidia-tesla-t5",
                                                                                       "count": 1}}, """
        error: gpu-cluster:nodePools[0].accelerator.type: GPU cannot be attached to n1-standard-8
          received: 'nvidia-tesla-t5'
          allowed:  nvidia-tesla-t4, nvidia-tesla-v100
          fix:      did you mean 'nvidia-tesla-t4'?
        """, id="n1-unknown-accelerator"),
    # -- zones ------------------------------------------------------------------------------------------------
    case("gke", {POOL + ("zones",): ["us-east4-a"]}, """
        error: gpu-cluster:nodePools[0].zones[0]: not a zone of region us-central1
          received: 'us-east4-a'
          allowed:  us-central1-a, us-central1-b, us-central1-c, us-central1-f
          fix:      did you mean 'us-central1-a'?
        """, id="zone-not-in-region"),
    case("gke", {POOL + ("zones",): ["us-central1-a", "us-central1-a"]}, """
        error: gpu-cluster:nodePools[0].zones: a zone is listed twice
          received: ["us-central1-a", "us-central1-a"]
          allowed:  each zone once
          fix:      remove the duplicate
        """, id="zone-listed-twice"),
    case("eks", {POOL + ("zones",): ["us-east-1c"]}, f"""
        error: gpu-cluster:nodePools[0].zones[0]: no subnet is declared for this Availability Zone
          received: 'us-east-1c'
          allowed:  {SUBNETS_AB}
          fix:      add cluster.subnets.us-east-1c: <subnet-id>, or use a zone that has one
        """, id="eks-pool-zone-without-subnet"),
    # -- capacity ---------------------------------------------------------------------------------------------
    case("gke", {POOL + ("capacity",): {"type": "reservation"}}, """
        error: gpu-cluster:nodePools[0].capacity.reservation: a reservation pool needs the reservation to consume
          allowed:  the GKE specific reservation name
          fix:      set capacity.reservation
        """, id="gke-reservation-without-name"),
    case("eks", {POOL + ("capacity",): {"type": "reservation"}}, """
        error: gpu-cluster:nodePools[0].capacity.reservation: a reservation pool needs the reservation to consume
          allowed:  the capacity reservation ID (cr-…)
          fix:      set capacity.reservation
        """, id="eks-reservation-without-id"),
    case("gke", {POOL + ("capacity",): {"type": "spot", "reservation": "h100-res"}}, """
        error: gpu-cluster:nodePools[0].capacity.type: reservation settings are given but capacity.type is spot
          received: 'spot'
          allowed:  reservation
          fix:      set capacity.type: reservation, or drop the reservation fields (spot nodes cannot consume a reservation)
        """, id="reservation-fields-with-spot"),
    case("eks", {POOL + ("capacity",): {"type": "reservation", "reservation": "h100-block"}}, """
        error: gpu-cluster:nodePools[0].capacity.reservation: not an EC2 capacity reservation ID
          received: 'h100-block'
          allowed:  cr- followed by 8 or 17 hex digits
          fix:      copy the ID from `aws ec2 describe-capacity-reservations` (capacity blocks have cr- IDs too)
        """, id="aws-reservation-id-malformed"),
    case("gke", {POOL + ("capacity",): {"type": "reservation", "reservation": "r1",
                                         "reservationKind": "capacity-block"}}, """
        error: gpu-cluster:nodePools[0].capacity.reservationKind: reservationKind is an EKS setting
          received: 'capacity-block'
          fix:      remove capacity.reservationKind
        """, id="eks-reservation-kind-on-gcp"),
    # -- multi-node -------------------------------------------------------------------------------------------
    case("gke", {POOL + ("multiNode",): True, POOL + ("zones",): ["us-central1-a", "us-central1-b"]}, """
        error: gpu-cluster:nodePools[0].zones: a multi-node pool needs exactly one zone (compact placement cannot span zones)
          received: ["us-central1-a", "us-central1-b"]
          allowed:  a single zone
          fix:      keep one zone, e.g. zones: [us-central1-a]
        """, id="gke-multi-node-two-zones"),
    case("eks", {POOL + ("multiNode",): True, POOL + ("zones",): ["us-east-1a", "us-east-1b"]}, """
        error: gpu-cluster:nodePools[0].zones: a multi-node pool needs exactly one zone (a cluster placement group and EFA cannot span zones)
          received: ["us-east-1a", "us-east-1b"]
          allowed:  a single zone
          fix:      keep one zone, e.g. zones: [us-east-1a]
        """, id="eks-multi-node-two-zones"),
    case("gke", {POOL + ("multiNode",): True, POOL + ("maxNodes",): 151}, """
        error: gpu-cluster:nodePools[0].maxNodes: more nodes than one GKE compact placement group holds
          received: 151
          allowed:  1 … 150
          fix:      split the pool into several multi-node pools
        """, id="gke-multi-node-over-150"),
    case("eks", {POOL + ("multiNode",): True, POOL + ("machineType",): "p3.16xlarge"}, """
        error: gpu-cluster:nodePools[0].multiNode: p3.16xlarge has no EFA, so multi-node jobs would run over plain TCP
          received: true
          allowed:  an EFA-capable type: p4d/p4de/p5/p5e/p5en/p6-b200, g5/g6/g6e ≥ 8xlarge
          fix:      pick an EFA-capable instance type, or set multiNode: false
        """, id="eks-multi-node-p3-no-efa"),
    case("eks", {POOL + ("multiNode",): True, POOL + ("machineType",): "g5.xlarge"}, """
        error: gpu-cluster:nodePools[0].multiNode: g5.xlarge has no EFA, so multi-node jobs would run over plain TCP
          received: true
          allowed:  an EFA-capable type: p4d/p4de/p5/p5e/p5en/p6-b200, g5/g6/g6e ≥ 8xlarge
          fix:      pick an EFA-capable instance type, or set multiNode: false
        """, id="eks-multi-node-g5-xlarge-no-efa"),
    # -- price ------------------------------------------------------------------------------------------------
    case("gke", {POOL + ("machineType",): "a4-highgpu-8g", POOL + ("capacity",): {"type": "spot"}}, """
        error: gpu-cluster:nodePools[0].machineType: no spot price for a4-highgpu-8g in us-central1; refusing to guess (unknown is not $0)
          received: 'a4-highgpu-8g'
          allowed:  no region has a spot price; on-demand is priced in us-central1
          fix:      add a dated, sourced row to catalog/data/prices.csv, or pick another region, capacity type or machine type
        """, id="no-price-a4-spot"),
    case("eks", {POOL + ("machineType",): "p5e.48xlarge"}, """
        error: gpu-cluster:nodePools[0].machineType: no on-demand price for p5e.48xlarge in us-east-1; refusing to guess (unknown is not $0)
          received: 'p5e.48xlarge'
          allowed:  no region has an on-demand price; spot is priced in us-west-2
          fix:      add a dated, sourced row to catalog/data/prices.csv, or pick another region, capacity type or machine type
        """, id="no-price-p5e-on-demand"),
    case("gke", {("region",): "us-east4", POOL + ("zones",): ["us-east4-a"], POOL + ("machineType",): "a4-highgpu-8g"},
         """
        error: gpu-cluster:nodePools[0].machineType: no on-demand price for a4-highgpu-8g in us-east4; refusing to guess (unknown is not $0)
          received: 'a4-highgpu-8g'
          allowed:  regions with an on-demand price: us-central1
          fix:      add a dated, sourced row to catalog/data/prices.csv, or pick another region, capacity type or machine type
        """, id="no-price-in-region-priced-elsewhere"),
    case("eks", {POOL + ("machineType",): "p5e.48xlarge",
                 POOL + ("capacity",): {"type": "reservation", "reservation": "cr-0123456789abcdef0"}}, """
        error: gpu-cluster:nodePools[0].machineType: no on-demand price for p5e.48xlarge in us-east-1 (reservations are billed at the on-demand rate); refusing to guess (unknown is not $0)
          received: 'p5e.48xlarge'
          allowed:  no region has an on-demand price; spot is priced in us-west-2
          fix:      add a dated, sourced row to catalog/data/prices.csv, or pick another region, capacity type or machine type
        """, id="no-price-reservation-billed-on-demand"),
    case("gke", {POOL + ("machineType",): "a3-edgegpu-8g"}, """
        error: gpu-cluster:nodePools[0].machineType: no on-demand price for a3-edgegpu-8g in us-central1; refusing to guess (unknown is not $0)
          received: 'a3-edgegpu-8g'
          allowed:  no region has an on-demand price; the catalog has no price for a3-edgegpu-8g at all
          fix:      add a dated, sourced row to catalog/data/prices.csv, or pick another region, capacity type or machine type
        """, id="no-price-anywhere-a3-edgegpu"),
    # -- labels and taints ------------------------------------------------------------------------------------
    case("gke", {POOL + ("labels",): {"gpu-cluster/pool": "other"}}, """
        error: gpu-cluster:nodePools[0].labels.gpu-cluster/pool: label key is reserved
          received: 'gpu-cluster/pool'
          allowed:  any key outside kubernetes.io/, k8s.io/, cloud.google.com/, eks.amazonaws.com/, gpu-cluster/
          fix:      drop it: gpu-cluster sets gpu-cluster/pool itself, and the cloud owns its prefixes
        """, id="label-key-reserved-pool-label"),
    case("eks", {POOL + ("labels",): {"kubernetes.io/role": "gpu"}}, """
        error: gpu-cluster:nodePools[0].labels.kubernetes.io/role: label key is reserved
          received: 'kubernetes.io/role'
          allowed:  any key outside kubernetes.io/, k8s.io/, cloud.google.com/, eks.amazonaws.com/, gpu-cluster/
          fix:      drop it: gpu-cluster sets gpu-cluster/pool itself, and the cloud owns its prefixes
        """, id="label-key-reserved-prefix"),
    case("gke", {POOL + ("labels",): {"team": "ML Platform"}}, """
        error: gpu-cluster:nodePools[0].labels.team: not a valid Kubernetes label value
          received: 'ML Platform'
          allowed:  ≤ 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric
          fix:      shorten or simplify the value
        """, id="label-value-invalid"),
    case("gke", {POOL + ("taints",): [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}, """
        error: gpu-cluster:nodePools[0].taints[0].key: the GPU taint is already set on every GPU pool
          received: 'nvidia.com/gpu'
          allowed:  any key except nvidia.com/gpu
          fix:      remove this taint
        """, id="gpu-taint-duplicated-by-user"),
    case("gke", {POOL + ("taints",): [{"key": "dedicated", "effect": "NoSchedule"},
                                       {"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}, """
        error: gpu-cluster:nodePools[0].taints[1]: duplicate taint
          received: 'dedicated'
          allowed:  one taint per key and effect
          fix:      remove the duplicate
        """, id="taint-duplicate"),
    case("gke", {POOL + ("taints",): [{"key": "dedicated", "effect": "NoSchedul"}]}, """
        error: gpu-cluster:nodePools[0].taints[0].effect: not one of the allowed values
          received: 'NoSchedul'
          allowed:  NoSchedule, PreferNoSchedule, NoExecute
          fix:      did you mean 'NoSchedule'?
        """, id="taint-effect-typo"),
    # -- EKS: upgrades, reservation placement, cluster autoscaler ----------------------------------------------
    case("eks", {POOL + ("upgrade",): {"maxSurge": 2, "maxUnavailable": 0}}, """
        error: gpu-cluster:nodePools[0].upgrade.maxUnavailable: EKS managed node groups update at least one node at a time; maxUnavailable 0 is not accepted
          received: 0
          allowed:  1 … 100
          fix:      set maxUnavailable: 1 (EKS has no surge count to keep every node available)
        """, id="eks-surge-without-unavailable"),
    case("eks", {POOL + ("upgrade",): {"maxUnavailable": 101}}, """
        error: gpu-cluster:nodePools[0].upgrade.maxUnavailable: EKS updates at most 100 nodes at once
          received: 101
          allowed:  1 … 100
          fix:      set maxUnavailable: 100 or less
        """, id="eks-unavailable-over-100"),
    case("gke", {POOL + ("capacity",): {"type": "reservation", "reservation": "h100-res", "placementGroup": "pg-a"}},
         """
        error: gpu-cluster:nodePools[0].capacity.placementGroup: placementGroup is an EKS setting
          received: 'pg-a'
          fix:      remove capacity.placementGroup (GKE: multiNode: true adds compact placement)
        """, id="placement-group-on-gke"),
    case("eks", {POOL + ("capacity",): {"type": "reservation", "reservation": "cr-0123456789abcdef0",
                                         "reservationKind": "capacity-block", "placementGroup": "train-pg"}}, """
        error: gpu-cluster:nodePools[0].capacity.placementGroup: a capacity block takes no placement group: its instances are already placed close together in an EC2 UltraCluster
          received: 'train-pg'
          allowed:  omitted for capacity blocks
          fix:      remove capacity.placementGroup
        """, id="placement-group-on-capacity-block"),
    case("eks", {POOL + ("capacity",): {"placementGroup": "train-pg"}}, """
        error: gpu-cluster:nodePools[0].capacity.type: reservation settings are given but capacity.type is on-demand
          received: 'on-demand'
          allowed:  reservation
          fix:      set capacity.type: reservation, or drop the reservation fields (spot nodes cannot consume a reservation)
        """, id="placement-group-without-reservation"),
    case("eks", {POOL + ("capacity",): {"type": "reservation", "reservation": "cr-0123456789abcdef0",
                                         "placementGroup": "pg-0123456789abcdef0"}}, """
        error: gpu-cluster:nodePools[0].capacity.placementGroup: this is a placement group ID; give its name
          received: 'pg-0123456789abcdef0'
          allowed:  the placement group name (1-255 ASCII characters)
          fix:      copy GroupName from `aws ec2 describe-placement-groups --group-ids pg-0123456789abcdef0`
        """, id="placement-group-id-not-name"),
    case("gke", {("cluster", "clusterAutoscaler"): False}, """
        error: gpu-cluster:cluster.clusterAutoscaler: clusterAutoscaler is an EKS setting; this stack's cloud is gcp
          received: false
          fix:      remove cluster.clusterAutoscaler
        """, id="cluster-autoscaler-on-gke"),
]


def test_settings_lists_start_with_the_core_keys():
    assert TOP_KEYS.startswith("cloud, region, project, accountId, labels, cluster, nodePools")
    assert POOL_KEYS.startswith("name, machineType, accelerator, zones, minNodes, maxNodes, capacity, multiNode")


def test_case_table_is_large_and_ids_unique():
    ids = [c.id for c in CASES]
    assert len(ids) >= 30
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("base, edits, expected", CASES)
def test_bad_config_is_rejected_with_exact_message(base, edits, expected):
    assert errors_of(mutate(BASELINES[base], edits)) == expected


@pytest.mark.parametrize("base, edits, expected", CASES)
def test_every_issue_has_path_problem_and_fix(base, edits, expected):
    with pytest.raises(SpecError) as info:
        load_spec(mutate(BASELINES[base], edits))
    for issue in info.value.issues:
        assert issue.path.startswith("gpu-cluster:")
        assert issue.problem and issue.fix
    assert str(info.value).startswith(
        f"{len(info.value.errors)} configuration error{'s' if len(info.value.errors) != 1 else ''} in the stack config:")


@pytest.mark.parametrize("base", sorted(BASELINES))
def test_baselines_are_valid_without_warnings(base):
    spec, warnings = load_spec(copy.deepcopy(BASELINES[base]))
    assert warnings == []
    assert spec.node_pools[0].name == "h100"


VALID_VARIATIONS = [
    pytest.param("gke", {POOL + ("capacity",): {"type": "reservation", "reservation": "h100-res",
                                                 "reservationProject": "shared-reservations"}}, id="gke-reservation"),
    pytest.param("gke", {("region",): "us-east4", POOL + ("zones",): ["us-east4-b"],
                         POOL + ("machineType",): "a3-ultragpu-8g", POOL + ("multiNode",): True,
                         POOL + ("maxNodes",): 150}, id="gke-a3-ultra-multi-node-150"),
    pytest.param("gke", {POOL + ("machineType",): "n1-standard-8", POOL + ("capacity",): {"type": "spot"},
                         POOL + ("accelerator",): {"type": "nvidia-tesla-t4", "count": 2}}, id="gke-n1-t4-spot"),
    pytest.param("gke", {POOL + ("accelerator",): {"type": "nvidia-h100-80gb", "count": 8}}, id="gke-count-matches"),
    pytest.param("gke", {("cluster", "authorizedNetworks"): ["203.0.113.0/24"], ("labels",): {"team": "ml"},
                         POOL + ("labels",): {"example.com/team": "ml-platform"}}, id="gke-labels-and-networks"),
    pytest.param("eks", {POOL + ("capacity",): {"type": "reservation", "reservation": "cr-0123456789abcdef0",
                                                 "reservationKind": "capacity-block"},
                         POOL + ("multiNode",): True, ("accountId",): "012345678901"}, id="eks-capacity-block"),
    pytest.param("eks", {("region",): "us-west-2", POOL + ("machineType",): "p5e.48xlarge",
                         POOL + ("capacity",): {"type": "spot"}, POOL + ("zones",): ["us-west-2a"],
                         ("cluster", "subnets"): {"us-west-2a": "subnet-0123456789abcdef0",
                                                  "us-west-2b": "subnet-01234567"}}, id="eks-p5e-spot-us-west-2"),
    pytest.param("eks", {POOL + ("capacity",): {"type": "reservation", "reservation": "cr-0123456789abcdef0",
                                                 "placementGroup": "p5-odcr-pg"}, POOL + ("multiNode",): True},
                 id="eks-odcr-in-its-placement-group"),
    pytest.param("eks", {("cluster", "mode"): "existing", ("cluster", "clusterAutoscaler"): False,
                         ("cluster", "kubernetesVersion"): "1.33"}, id="eks-existing-own-autoscaler-old-version"),
]


@pytest.mark.parametrize("base, edits", VALID_VARIATIONS)
def test_valid_variations_pass_without_warnings(base, edits):
    spec, warnings = load_spec(mutate(BASELINES[base], edits))
    assert [str(w) for w in warnings] == []
    assert len(spec.node_pools) == 1


# -- every mistake at once ---------------------------------------------------------------------------------------
SEVERAL_MISTAKES = {
    ("nodePool",): [],                                                   # unknown top-level key
    ("cluster", "name"): "ML_Train",                                     # invalid cluster name
    ("cluster", "authorizedNetworks"): ["0.0.0.0/0"],                    # world-open API
    POOL + ("minNodes",): 9,                                             # min > max
    POOL + ("zones",): ["us-east4-a"],                                   # zone outside the region
    POOL + ("labels",): {"team": "ML Platform"},                         # bad label value
    ("nodePools", 1): dict(H100, name="l4", machineType="g2-standard-5"),  # unknown machine type
    ("nodePools", 2): dict(H100, name="h100"),                           # duplicate pool name
}
SEVERAL_PATHS = [
    "gpu-cluster:cluster.authorizedNetworks[0]", "gpu-cluster:cluster.name", "gpu-cluster:nodePool",
    "gpu-cluster:nodePools[0].labels.team", "gpu-cluster:nodePools[0].minNodes", "gpu-cluster:nodePools[0].zones[0]",
    "gpu-cluster:nodePools[1].machineType", "gpu-cluster:nodePools[2].name",
]


def _several_mistakes() -> dict[str, Any]:
    cfg = copy.deepcopy(GKE_BASELINE)
    cfg["nodePools"] += [{}, {}]
    return mutate(cfg, SEVERAL_MISTAKES)


def test_independent_mistakes_are_all_reported_in_one_error():
    with pytest.raises(SpecError) as first:
        load_spec(_several_mistakes())
    errors = first.value.errors
    assert len(errors) >= len(SEVERAL_MISTAKES)
    assert sorted({e.path for e in errors}) == sorted(SEVERAL_PATHS)
    assert [e.path for e in errors] == SEVERAL_PATHS  # config order: by path, list indexes numerically
    assert errors == sorted(errors, key=sort_key)

    with pytest.raises(SpecError) as second:
        load_spec(_several_mistakes())
    assert [str(e) for e in second.value.issues] == [str(e) for e in first.value.issues]
    assert str(second.value) == str(first.value)
    assert str(first.value).startswith(f"{len(errors)} configuration errors in the stack config:\n")


def test_list_indexes_sort_numerically():
    pools = [dict(H100, name=f"p{i}") for i in range(12)]
    pools[2]["minNodes"] = pools[10]["minNodes"] = 9
    with pytest.raises(SpecError) as info:
        load_spec(mutate(GKE_BASELINE, {("nodePools",): pools}))
    assert [e.path for e in info.value.errors] == ["gpu-cluster:nodePools[2].minNodes",
                                                   "gpu-cluster:nodePools[10].minNodes"]


# -- warnings ------------------------------------------------------------------------------------------------------
WARNING_CASES = [
    case("gke", {POOL + ("capacity",): {"type": "reservation", "reservation": "h100-res"},
                 POOL + ("upgrade",): {"maxSurge": 1}}, """
        warning: gpu-cluster:nodePools[0].upgrade.maxSurge: a surge node needs spare reservation capacity; an exact-size reservation blocks the upgrade
          received: 1
          allowed:  0
          fix:      use maxSurge: 0, maxUnavailable: 1 unless the reservation has spare nodes
        """, id="reservation-with-surge"),
    case("gke", {POOL + ("machineType",): "a3-ultragpu-8g"}, """
        warning: gpu-cluster:nodePools[0].zones: the catalog (as of 2025-01-01) did not see a3-ultragpu-8g in us-central1-a
          received: ["us-central1-a"]
          allowed:  us-central1-b
          fix:      check `gcloud compute machine-types list --filter=name=a3-ultragpu-8g`; capacity may have moved since
        """, id="zone-outside-catalog-availability"),
    case("eks", {POOL + ("multiNode",): True, POOL + ("machineType",): "g6e.8xlarge"}, """
        warning: gpu-cluster:nodePools[0].multiNode: no stored source confirms EFA on g6e.8xlarge; assuming 1 interface
          received: true
          fix:      check `aws ec2 describe-instance-types --instance-types g6e.8xlarge` (NetworkInfo.EfaInfo)
        """, id="efa-unconfirmed"),
    case("eks", {("cluster", "kubernetesVersion"): "1.34"}, """
        warning: gpu-cluster:cluster.kubernetesVersion: EKS 1.34 is past standard support (extended-support billing from 2026-12-02, 00:00 UTC), so the control plane costs $0.60/h instead of $0.10/h
          received: '1.34'
          allowed:  versions in standard support on 2026-12-02: 1.35, 1.36
          fix:      set kubernetesVersion: "1.35" (a deployed cluster upgrades one minor version at a time)
        """, id="eks-version-in-extended-support"),
    case("eks", {POOL + ("upgrade",): {"maxSurge": 1, "maxUnavailable": 1}, POOL + ("multiNode",): True,
                 POOL + ("capacity",): {"type": "reservation", "reservation": "cr-0123456789abcdef0",
                                        "reservationKind": "capacity-block"}}, """
        warning: gpu-cluster:nodePools[0].upgrade.maxSurge: EKS managed node groups have no surge count: maxSurge > 0 selects the DEFAULT update strategy, which launches up to 2 new nodes (the larger of 2 × 1 Availability Zone and maxUnavailable) before terminating old ones; a reservation without that many spare nodes blocks the update
          received: 1
          allowed:  0 (update strategy MINIMAL: old nodes are terminated before new ones launch)
          fix:      use maxSurge: 0 on GPU pools (no spare GPUs needed), or keep it to accept EKS's surge
        """, id="eks-surge-is-not-a-count"),
    case("eks", {POOL + ("capacity",): {"type": "reservation", "reservation": "cr-0123456789abcdef0"},
                 POOL + ("multiNode",): True}, """
        warning: gpu-cluster:nodePools[0].capacity.placementGroup: a multi-node ODCR pool gets no new placement group (a reservation serves only the placement group it was created in, if any), so its nodes are close together only if the reservation was created in a cluster placement group
          allowed:  the name of the cluster placement group the reservation was created in
          fix:      set capacity.placementGroup to it (PlacementGroupArn in `aws ec2 describe-capacity-reservations --capacity-reservation-ids cr-0123456789abcdef0`), or leave it out if the reservation has none
        """, id="eks-multi-node-odcr-without-placement-group"),
]


@pytest.mark.parametrize("base, edits, expected", WARNING_CASES)
def test_warnings_do_not_raise_and_are_returned(base, edits, expected):
    spec, warnings = load_spec(mutate(BASELINES[base], edits))
    assert all(isinstance(w, SpecIssue) and w.warning for w in warnings)
    assert [str(w) for w in warnings] == expected
    assert spec.node_pools


def test_warnings_ride_along_with_errors_but_do_not_count():
    cfg = mutate(GKE_BASELINE, {POOL + ("machineType",): "a3-ultragpu-8g", ("cluster", "name"): "ML_Train"})
    with pytest.raises(SpecError) as info:
        load_spec(cfg)
    assert [e.path for e in info.value.errors] == ["gpu-cluster:cluster.name"]
    assert [w.path for w in info.value.issues if w.warning] == ["gpu-cluster:nodePools[0].zones"]
    assert str(info.value).startswith("1 configuration error in the stack config:\n")
    assert "warning:" not in str(info.value)


def test_unicode_digits_in_a_key_are_reported_not_crashed():
    """Regression: sort_key used str.isdigit(), true for '²', and int('²') raised ValueError (found by hypothesis)."""
    with pytest.raises(SpecError) as info:
        load_spec(mutate(GKE_BASELINE, {("nodePools²",): 1}))
    assert [e.path for e in info.value.errors] == ["gpu-cluster:nodePools²"]
