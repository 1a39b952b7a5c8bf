"""A GKE Standard cluster with secure defaults and an untainted system pool, or an existing cluster found by name."""

from __future__ import annotations


import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.cluster_refs import GkeClusterRef
from components.gke.cloud_nat import GkeCloudNat
from components.gke.node_service_account import GkeNodeServiceAccount, service_account_id
from components.gke.secrets_key import GkeSecretsKey
from components.kubeconfig import gke_kubeconfig
from stacks.plan.cluster import ClusterPlan

NODE_OAUTH_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]  # IAM, not scopes, limits access


def shielded_node_config() -> dict:
    """Node settings every pool shares: Shielded VM with Secure Boot, GKE metadata server, COS."""
    return {
        "image_type": "COS_CONTAINERD",
        "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "metadata": {"disable-legacy-endpoints": "true"},
        "oauth_scopes": NODE_OAUTH_SCOPES,
    }


class GkeCluster(pulumi.ComponentResource):
    """Creates (mode `create`) or references (mode `existing`) the GKE cluster GPU pools join.

    Created clusters: private nodes, Workload Identity, a release channel, Dataplane V2, Shielded Nodes, no
    client certificate, Secrets encrypted with a rotating Cloud KMS key, deletion protection, and no inline default pool (the default pool is removed; add-ons
    run on a separate autoscaled system pool with its own least-privilege service account).
    """

    ref: GkeClusterRef
    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    egress_addresses: pulumi.Output[list[str]]
    """The reserved static addresses of the Cloud NAT as /32 CIDRs (a fleet manager's ``fleetEgressAddresses``)."""

    def __init__(
        self,
        name: str,
        spec: ClusterPlan,
        multi_networking: bool = False,
        maintenance_policy: dict | None = None,
        admitted_egress: pulumi.Input[list[str]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """The system pool starts in the plan's ``system_zones`` (the region's first ``minNodes``).
        ``admitted_egress``: a fleet worker's manager's egress addresses (a StackReference output), admitted by the
        API besides ``authorized_networks``."""
        super().__init__("gpu-cluster:gcp:GkeCluster", name, None, opts)
        self.multi_networking = multi_networking
        self.maintenance_policy = maintenance_policy
        self.admitted_egress = admitted_egress
        self.egress_addresses = pulumi.Output.from_input([])
        child = pulumi.ResourceOptions(parent=self)
        project, region, labels = spec.project, spec.region, spec.labels
        if spec.create:
            location = region
            cluster = self._create(name, spec, project, region, labels, child)
            cluster_name, endpoint = cluster.name, cluster.endpoint
            ca = cluster.master_auth.apply(lambda m: m.cluster_ca_certificate if m else "")
        else:
            location = spec.location
            found = gcp.container.get_cluster_output(
                name=spec.name, location=location, project=project, opts=pulumi.InvokeOptions(parent=self)
            )
            cluster_name, endpoint = pulumi.Output.from_input(spec.name), found.endpoint
            ca = found.master_auths.apply(lambda auths: auths[0].cluster_ca_certificate if auths else "")
        self.name = cluster_name
        self.endpoint = endpoint
        self.kubeconfig = pulumi.Output.all(endpoint, ca).apply(lambda a: gke_kubeconfig(spec.name, a[0], a[1] or ""))
        provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)
        self.ref = GkeClusterRef(
            spec_name=spec.name, name=cluster_name, location=location, project=project, k8s_provider=provider
        )
        self.register_outputs({"name": self.name, "endpoint": self.endpoint})

    def _create(
        self,
        name: str,
        spec: ClusterPlan,
        project: str,
        region: str,
        labels: dict[str, str],
        child: pulumi.ResourceOptions,
    ) -> gcp.container.Cluster:
        system_sa = GkeNodeServiceAccount(
            f"{name}-system", service_account_id(spec.name, "system"), project, opts=child
        )
        if spec.cloud_nat:
            nat = GkeCloudNat(
                f"{name}-egress",
                spec.network or "default",
                region,
                project,
                static_addresses=spec.static_nat_addresses,
                opts=child,
            )
            self.egress_addresses = nat.addresses
        private_endpoint = spec.private_endpoint
        literal = [{"cidr_block": c, "display_name": f"authorized-{i}"} for i, c in enumerate(spec.authorized_networks)]
        cidr_blocks: pulumi.Input[list] = (
            literal
            if self.admitted_egress is None
            else pulumi.Output.from_input(self.admitted_egress).apply(
                lambda egress: (
                    literal
                    + [{"cidr_block": c, "display_name": f"fleet-manager-{i}"} for i, c in enumerate(egress or [])]
                )
            )
        )
        secrets_key = GkeSecretsKey(f"{name}-secrets", project, region, spec.deletion_protection, labels, opts=child)
        cluster = gcp.container.Cluster(
            name,
            name=spec.name,  # a cluster is never replaced in place: it is protected instead
            project=project,
            location=region,
            network=spec.network or "default",
            subnetwork=spec.subnetwork,
            remove_default_node_pool=True,
            initial_node_count=1,  # CKV_GCP_123: no inline node pools
            node_config={**shielded_node_config(), "service_account": system_sa.email},
            networking_mode="VPC_NATIVE",
            ip_allocation_policy={},
            datapath_provider="ADVANCED_DATAPATH",  # Dataplane V2 enforces NetworkPolicy
            # GPU fabric pools attach extra NICs (needs Dataplane V2); None keeps the field out for other clusters
            enable_multi_networking=True if self.multi_networking else None,
            private_cluster_config={"enable_private_nodes": True, "enable_private_endpoint": private_endpoint},
            master_authorized_networks_config={
                "cidr_blocks": cidr_blocks,  # + a fleet worker's manager's egress addresses, known at deploy
                # Google Cloud's public IP ranges (any GCP customer's VM) may not reach the API server either
                "gcp_public_cidrs_access_enabled": False,
            },
            master_auth={"client_certificate_config": {"issue_client_certificate": False}},
            workload_identity_config={"workload_pool": f"{project}.svc.id.goog"},
            # serving's inference Gateway (GKE Gateway controller + InferencePool); None keeps other clusters as they were
            gateway_api_config={"channel": "CHANNEL_STANDARD"} if spec.gateway_api else None,
            # serving: gs:// weights mounted by the Cloud Storage FUSE CSI driver; vLLM's metrics scraped by Managed
            # Service for Prometheus (PodMonitoring) for KEDA to query. None keeps other clusters as they were
            addons_config={"gcs_fuse_csi_driver_config": {"enabled": True}} if spec.gcs_fuse else None,
            monitoring_config={"enable_components": ["SYSTEM_COMPONENTS"], "managed_prometheus": {"enabled": True}}
            if spec.gateway_api
            else None,
            # application-layer Secrets encryption (security-gke-secrets-encryption), as EKS envelope-encrypts them
            database_encryption={"state": "ENCRYPTED", "key_name": secrets_key.key_name},
            release_channel={"channel": spec.release_channel},
            # pinned: validation checked it against the GPU fabric's version floor (stacks/validate/fabric_version.py)
            min_master_version=spec.min_master_version,
            maintenance_policy=self.maintenance_policy,  # stacks/plan/maintenance.py: window and exclusions, or None
            enable_shielded_nodes=True,
            enable_legacy_abac=False,
            deletion_protection=spec.deletion_protection,
            resource_labels=labels or None,
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=spec.deletion_protection,
                depends_on=[secrets_key],
                ignore_changes=["nodeConfig", "initialNodeCount", "nodePools"],
            ),
        )
        gcp.container.NodePool(
            f"{name}-system",
            cluster=cluster.name,
            location=region,
            project=project,
            # initialNodeCount is per zone: spread over as many zones as minNodes, so the pool starts at minNodes
            node_locations=spec.system_zones,
            initial_node_count=1,
            autoscaling={
                "total_min_node_count": spec.system_min_nodes,
                "total_max_node_count": spec.system_max_nodes,
                "location_policy": "BALANCED",
            },
            management={"auto_repair": True, "auto_upgrade": True},
            upgrade_settings={"strategy": "SURGE", "max_surge": 1, "max_unavailable": 0},
            node_config={
                **shielded_node_config(),
                "machine_type": spec.system_machine_type,
                "disk_size_gb": 100,
                "disk_type": "pd-balanced",
                "service_account": system_sa.email,
                "resource_labels": labels or None,
                # fabric clusters: gVNIC on the system pool too, as on the GPU pools (cluster-toolkit's A3/A4
                # blueprints do the same); None leaves other clusters' pools as they were (ForceNew field)
                "gvnic": {"enabled": True} if self.multi_networking else None,
            },
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["initialNodeCount", "nodeCount"]),
        )
        return cluster
