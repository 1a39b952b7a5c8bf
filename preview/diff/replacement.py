"""Which input changes force the cloud provider to replace a node pool, for the inputs gpu-cluster sets.

Data, not logic: one table per resource type, keyed by the Pulumi input path (engine wire names, camelCase), so a
reviewer can check each fact against its source. Pulumi's GCP and AWS providers bridge the Terraform providers, so
"forces replacement" is Terraform's ``ForceNew`` on the bridged schema (Pulumi renames ``guest_accelerator`` to
``guestAccelerators`` and ``taint`` to ``taints``). A path covers everything below it (``placementPolicy`` covers
``placementPolicy.type``). A changed input that is in neither set is reported as an update whose replacement was not
assessed: add it here.

Sources (read 2026-12; Terraform SDKv2 schema, ``ForceNew: true``):
- GKE ``gcp.container.NodePool`` = ``google_container_node_pool``: top level from hashicorp/terraform-provider-google
  ``google/services/container/resource_container_node_pool.go`` @ 069a33d4 (``schemaNodePool`` + the resource's own
  ``project``/``cluster``/``location``); ``nodeConfig`` from the v7 ``schemaNodeConfig`` in
  GoogleCloudPlatform/terraform-google-conversion ``pkg/services/container/node_config.go`` @ cca1492d (a generated
  copy of the provider's ``node_config.go``; pulumi-gcp 9+/10 bridge provider v7). In v7 ``machine_type``,
  ``disk_size_gb``, ``disk_type``, ``gvnic`` and ``taint`` update in place (older v5 schemas marked them ForceNew);
  every ``guest_accelerator`` field still forces a new pool, so a machine type change that changes the GPU type or
  count replaces the pool.
- EKS ``aws.eks.NodeGroup`` = ``aws_eks_node_group``: hashicorp/terraform-provider-aws
  ``internal/service/eks/node_group.go`` @ 012e0a32 (``resourceNodeGroup`` schema).
"""

from __future__ import annotations

from dataclasses import dataclass, field

GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EKS_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


@dataclass(frozen=True)
class ReplacementRules:
    replaces: dict[str, str]
    """Input path -> the provider field that is ForceNew."""
    in_place: frozenset[str]
    """Input paths the provider updates without replacing the resource."""
    rolling: tuple[str, ...] = ()
    """Input paths whose in-place update recreates the running nodes."""
    note: str = ""
    """What an update of a ``rolling`` path means for running nodes, for reviewers."""


GKE_NODE_POOL_RULES = ReplacementRules(
    replaces={
        "cluster": "cluster",
        "location": "location",
        "project": "project",
        "initialNodeCount": "initial_node_count",  # in ignore_changes: the autoscaler owns the count
        "placementPolicy": "placement_policy",
        # the GPU fabric's extra NICs (ForceNew in schemaNodePool's network_config block)
        "networkConfig.additionalNodeNetworkConfigs": "network_config.additional_node_network_configs",
        # GKE-managed fabric: the API marks NodeNetworkConfig.acceleratorNetworkProfile "Immutable"
        "networkConfig.acceleratorNetworkProfile": "network_config.accelerator_network_profile",
        "nodeConfig.ephemeralStorageLocalSsdConfig": "node_config.ephemeral_storage_local_ssd_config",
        "nodeConfig.guestAccelerators": "node_config.guest_accelerator (type, count, driver, sharing, partitions)",
        "nodeConfig.spot": "node_config.spot",
        "nodeConfig.reservationAffinity": "node_config.reservation_affinity",
        "nodeConfig.serviceAccount": "node_config.service_account",
        "nodeConfig.shieldedInstanceConfig": "node_config.shielded_instance_config",
        "nodeConfig.metadata": "node_config.metadata",
        "nodeConfig.oauthScopes": "node_config.oauth_scopes",
    },
    in_place=frozenset(
        {
            "nodeLocations",
            "autoscaling",
            "management",
            "upgradeSettings",
            "nodeCount",
            "nodeConfig.machineType",
            "nodeConfig.diskSizeGb",
            "nodeConfig.diskType",
            "nodeConfig.gvnic",
            "nodeConfig.labels",
            "nodeConfig.resourceLabels",
            "nodeConfig.taints",
            "nodeConfig.imageType",
            "nodeConfig.workloadMetadataConfig",
            "nodeConfig.linuxNodeConfig",  # no ForceNew on linux_node_config (v7 schemaNodeConfig); nodes recreated
        }
    ),
    rolling=(
        "nodeConfig.machineType",
        "nodeConfig.diskSizeGb",
        "nodeConfig.diskType",
        "nodeConfig.gvnic",
        "nodeConfig.imageType",
        "nodeConfig.workloadMetadataConfig",
        "nodeConfig.linuxNodeConfig",
    ),
    note="GKE recreates the pool's nodes to apply this, a few at a time per its upgrade settings (surge)",
)

EKS_NODE_GROUP_RULES = ReplacementRules(
    replaces={
        "clusterName": "cluster_name",
        "nodeRoleArn": "node_role_arn",
        "subnetIds": "subnet_ids",
        "amiType": "ami_type",
        "instanceTypes": "instance_types",
        "capacityType": "capacity_type",
        "launchTemplate.id": "launch_template.id",
        "launchTemplate.name": "launch_template.name",
        "nodeGroupName": "node_group_name",
        "nodeGroupNamePrefix": "node_group_name_prefix",
        "diskSize": "disk_size",
        "remoteAccess": "remote_access",
    },
    in_place=frozenset(
        {
            "scalingConfig",
            "launchTemplate.version",
            "labels",
            "taints",
            "updateConfig",
            "nodeRepairConfig",
            "tags",
            "version",
            "releaseVersion",
        }
    ),
    rolling=("launchTemplate.version", "releaseVersion", "version"),
    note="EKS rolls the group's nodes to apply this (updateConfig.maxUnavailable at a time)",
)

RULES: dict[str, ReplacementRules] = {GKE_NODE_POOL: GKE_NODE_POOL_RULES, EKS_NODE_GROUP: EKS_NODE_GROUP_RULES}

UPDATE_NOTES: dict[str, str] = {
    EKS_LAUNCH_TEMPLATE: "a launch template change makes a new template version; EKS then rolls every node of the "
    "node group that uses it",
}
"""What an update of a resource type without a replacement table means for running nodes."""


def covers(prefix: str, path: str) -> bool:
    """``placementPolicy`` covers ``placementPolicy``, ``placementPolicy.type`` and ``placementPolicy[0]``."""
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


@dataclass(frozen=True)
class Verdict:
    replaces: dict[str, str] = field(default_factory=dict)
    """Changed path -> the ForceNew provider field that makes it a replacement."""
    unassessed: tuple[str, ...] = ()
    """Changed paths of a type with a table that the table does not classify."""


def classify(resource_type: str, changed_paths: list[str]) -> Verdict:
    """Which of ``changed_paths`` force a replacement of a resource of ``resource_type``."""
    rules = RULES.get(resource_type)
    if rules is None:
        return Verdict()
    replaces: dict[str, str] = {}
    unassessed: list[str] = []
    for path in changed_paths:
        field_name = next((f for p, f in rules.replaces.items() if covers(p, path)), None)
        if field_name is not None:
            replaces[path] = field_name
        elif not any(covers(p, path) for p in rules.in_place):
            unassessed.append(path)
    return Verdict(replaces=replaces, unassessed=tuple(unassessed))
