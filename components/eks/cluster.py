"""An EKS cluster with secure defaults and an untainted system node group, or an existing cluster by name."""

from __future__ import annotations

import hashlib
import json

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.eks.node_defaults import metadata_options, root_volume
from components.eks.cluster_autoscaler import discovery_tags, tag_node_group_asg
from components.cluster_refs import EksClusterRef
from components.eks.node_role import EksNodeRole, assume_role_policy
from components.kubeconfig import eks_kubeconfig
from stacks.plan.cluster import ClusterPlan
from components.eks.access import ADMIN_POLICY_ARN

CONTROL_PLANE_LOGS = ["api", "audit", "authenticator", "controllerManager", "scheduler"]  # CKV_AWS_37
VPC_CNI_CONFIGURATION = {"enableNetworkPolicy": "true"}
"""The ``vpc-cni`` add-on's configuration: its network policy agent enforces NetworkPolicies (the default add-on
ignores them). The add-on takes over the ``aws-node`` DaemonSet EKS installs (``OVERWRITE`` on create)."""
SYSTEM_NODE_LABELS = {"gpu-cluster/node-role": "system"}
"""On the system node group's nodes; add-ons the stack installs (Cluster Autoscaler) select them."""


class EksCluster(pulumi.ComponentResource):
    """Creates (mode `create`) or references (mode `existing`) the EKS cluster GPU node groups join.

    Created clusters: every control-plane log type, envelope encryption of Secrets with a rotating KMS key, the
    ``vpc-cni`` add-on with NetworkPolicy enforcement,
    access entries (`API` authentication) with no implicit admin for the creator and an explicit admin entry per
    ``adminPrincipalArns`` (default: the identity running ``pulumi up``), a private endpoint (public only for
    `authorizedNetworks`),
    and a system node group for add-ons (labelled ``gpu-cluster/node-role: system``; its Auto Scaling group is tagged
    for Cluster Autoscaler discovery, so it scales between its min and max). Either way the stack owns the node IAM
    role.
    """

    ref: EksClusterRef
    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        spec: ClusterPlan,
        admitted_egress: pulumi.Input[list[str]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """``admitted_egress``: a fleet worker's manager's egress addresses (a StackReference output), admitted by the
        public endpoint besides ``authorized_networks``."""
        super().__init__("gpu-cluster:aws:EksCluster", name, None, opts)
        self.admitted_egress = admitted_egress
        child = pulumi.ResourceOptions(parent=self)
        region, tags = spec.region, spec.labels
        node_role = EksNodeRole(f"{name}-nodes", tags, region, opts=child)
        admins: list[aws.eks.AccessPolicyAssociation] = []
        if spec.create:
            cluster = self._create(name, spec, tags, child)
            admins = self._admins(name, spec, cluster, tags)
            cluster_name, endpoint, arn = cluster.name, cluster.endpoint, cluster.arn
            ca = cluster.certificate_authority.apply(lambda c: c.data if c else "")
            vpc = cluster.vpc_config
            sg = vpc.apply(lambda v: v.cluster_security_group_id)
            vpc_id = vpc.apply(lambda v: v.vpc_id)
            self._system_node_group(name, spec, cluster, node_role, tags)
            version, system_selector = spec.kubernetes_version, dict(SYSTEM_NODE_LABELS)
        else:
            found = aws.eks.get_cluster_output(name=spec.name, opts=pulumi.InvokeOptions(parent=self))
            cluster_name, endpoint, arn = pulumi.Output.from_input(spec.name), found.endpoint, found.arn
            ca = found.certificate_authorities.apply(lambda c: c[0].data if c else "")
            sg = found.vpc_config.apply(lambda v: v.cluster_security_group_id)
            vpc_id = found.vpc_config.apply(lambda v: v.vpc_id)
            version, system_selector = found.version, None
        self.name = cluster_name
        self.endpoint = endpoint
        # the admin grants are in the kubeconfig's dependencies: no Kubernetes object is sent before they exist
        self.kubeconfig = pulumi.Output.all(endpoint, ca, *[a.id for a in admins]).apply(
            lambda a: eks_kubeconfig(spec.name, region, a[0] or "", a[1] or "")
        )
        provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)
        self.ref = EksClusterRef(
            spec_name=spec.name,
            name=cluster_name,
            region=region,
            node_role_arn=node_role.arn,
            cluster_security_group_id=sg,
            vpc_id=vpc_id,
            subnets={**spec.subnets, **spec.node_subnets},
            k8s_provider=provider,
            kubernetes_version=version,
            system_node_selector=system_selector,
            arn=arn,
        )
        self.register_outputs({"name": self.name, "endpoint": self.endpoint})

    def _create(
        self, name: str, spec: ClusterPlan, tags: dict[str, str], child: pulumi.ResourceOptions
    ) -> aws.eks.Cluster:
        role = aws.iam.Role(
            f"{name}-cluster-role",
            assume_role_policy=assume_role_policy("eks.amazonaws.com", ("sts:AssumeRole", "sts:TagSession")),
            description="EKS control plane, managed by gpu-cluster",
            tags=tags or None,
            opts=child,
        )
        attach = aws.iam.RolePolicyAttachment(
            f"{name}-cluster-policy",
            role=role.name,
            policy_arn="arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",
            opts=child,
        )
        key = aws.kms.Key(
            f"{name}-secrets-key",
            description=f"EKS Secrets envelope encryption for {spec.name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=tags or None,
            opts=pulumi.ResourceOptions(parent=self, protect=spec.deletion_protection),
        )
        literal = list(spec.authorized_networks)
        public: pulumi.Input[bool] = bool(literal)
        public_cidrs: pulumi.Input[list[str] | None] = literal or None
        if self.admitted_egress is not None:  # a fleet worker: + the manager's addresses, known at deploy
            admitted = pulumi.Output.from_input(self.admitted_egress).apply(lambda e: literal + list(e or []))
            # EKS reads an empty publicAccessCidrs as 0.0.0.0/0: with nothing to admit yet the endpoint stays private
            public, public_cidrs = admitted.apply(bool), admitted.apply(lambda c: c or None)
        cluster = aws.eks.Cluster(
            name,
            name=spec.name,  # a cluster is never replaced in place: it is protected instead
            role_arn=role.arn,
            version=spec.kubernetes_version,
            vpc_config={
                "subnet_ids": list(spec.subnets.values()),
                "endpoint_private_access": True,
                "endpoint_public_access": public,
                "public_access_cidrs": public_cidrs,
            },
            enabled_cluster_log_types=CONTROL_PLANE_LOGS,
            encryption_config={"provider": {"key_arn": key.arn}, "resources": ["secrets"]},
            # nobody is admin by having created the cluster: admins are the explicit access entries of _admins
            access_config={"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": False},
            tags=tags or None,
            # the bootstrap flag forces a new cluster: one created with the old default keeps it (docs/security.md)
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=spec.deletion_protection,
                depends_on=[attach],
                ignore_changes=["accessConfig.bootstrapClusterCreatorAdminPermissions"],
            ),
        )
        # NetworkPolicies are ignored on EKS unless the VPC CNI runs its network policy agent
        aws.eks.Addon(
            f"{name}-vpc-cni",
            cluster_name=cluster.name,
            addon_name="vpc-cni",
            configuration_values=json.dumps(VPC_CNI_CONFIGURATION),
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="PRESERVE",
            tags=tags or None,
            opts=child,
        )
        return cluster

    def _admins(
        self, name: str, spec: ClusterPlan, cluster: aws.eks.Cluster, tags: dict[str, str]
    ) -> list[aws.eks.AccessPolicyAssociation]:
        """An access entry with AmazonEKSClusterAdminPolicy (cluster scope) per admin: ``adminPrincipalArns``, or the
        IAM role (or user) running ``pulumi up`` when none is configured, so the same run can install the add-ons."""
        principals: list[tuple[str, pulumi.Input[str]]] = [
            (hashlib.sha256(arn.encode()).hexdigest()[:8], arn) for arn in spec.admin_principal_arns
        ]
        if not principals:
            caller = aws.get_caller_identity_output(opts=pulumi.InvokeOptions(parent=self))
            deployer = aws.iam.get_session_context_output(arn=caller.arn, opts=pulumi.InvokeOptions(parent=self))
            principals = [("deployer", deployer.issuer_arn)]
        out = []
        for key, arn in principals:
            entry = aws.eks.AccessEntry(
                f"{name}-admin-{key}",
                cluster_name=cluster.name,
                principal_arn=arn,
                type="STANDARD",
                tags=tags or None,
                opts=pulumi.ResourceOptions(parent=self),
            )
            out.append(
                aws.eks.AccessPolicyAssociation(
                    f"{name}-admin-{key}",
                    cluster_name=cluster.name,
                    principal_arn=arn,
                    policy_arn=ADMIN_POLICY_ARN,
                    access_scope={"type": "cluster"},
                    opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]),
                )
            )
        return out

    def _system_node_group(
        self, name: str, spec: ClusterPlan, cluster: aws.eks.Cluster, node_role: EksNodeRole, tags: dict[str, str]
    ) -> None:
        child = pulumi.ResourceOptions(parent=self)
        lt = aws.ec2.LaunchTemplate(
            f"{name}-system-lt",
            metadata_options=metadata_options(),
            block_device_mappings=root_volume(100),
            update_default_version=True,
            tags=tags or None,
            opts=child,
        )
        group = aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=cluster.name,
            node_role_arn=node_role.arn,
            subnet_ids=list(spec.subnets.values()),
            ami_type="AL2023_x86_64_STANDARD",
            instance_types=[spec.system_machine_type],
            capacity_type="ON_DEMAND",
            scaling_config={
                "min_size": spec.system_min_nodes,
                "desired_size": spec.system_min_nodes,
                "max_size": spec.system_max_nodes,
            },
            launch_template={"id": lt.id, "version": lt.latest_version.apply(str)},
            labels=dict(SYSTEM_NODE_LABELS),
            update_config={"max_unavailable": 1},
            tags=tags or None,
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["scalingConfig.desiredSize"]),
        )
        tag_node_group_asg(f"{name}-system", group, discovery_tags(spec.name), parent=self)
