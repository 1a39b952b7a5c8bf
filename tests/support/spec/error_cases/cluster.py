"""Spec errors in ``cluster``: name, settings of the other cloud, API access, EKS version and subnets, the
system pool (``stacks/validate/cluster.py``).

Each row edits a baseline of ``tests/support/spec/cases.py`` and pins every error a user reads, exactly.
"""

from __future__ import annotations

from tests.support.spec.cases import case

CASES = [
    case(
        "gke",
        {"cluster.network": "ml-vpc"},
        """
        error: gpu-cluster:cluster.network: a network of your own needs cluster.subnetwork (GKE picks a subnetwork only on the auto-mode `default` network; on a custom-mode one the cluster create fails)
          received: 'ml-vpc'
          allowed:  the name of the network's subnetwork in the stack region; or network 'default' (auto mode) or omitted
          fix:      set cluster.subnetwork to the subnetwork of ml-vpc in us-central1 (gcloud compute networks subnets list --network ml-vpc)
        """,
        id="custom-network-without-subnetwork",
    ),
    case(
        "gke",
        {"cluster.name": "ML_Train"},
        """
        error: gpu-cluster:cluster.name: not a valid cluster name
          received: 'ML_Train'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 40 characters
          fix:      rename the cluster, e.g. 'ml-train'
        """,
        id="cluster-name-invalid",
    ),
    case(
        "gke",
        {"cluster.name": "m" * 41},
        f"""
        error: gpu-cluster:cluster.name: not a valid cluster name
          received: '{"m" * 41}'
          allowed:  lower-case letters, digits and '-', starting with a letter, at most 40 characters
          fix:      rename the cluster, e.g. 'ml-train'
        """,
        id="cluster-name-too-long-for-gke",
    ),
    case(
        "gke",
        {"cluster.authorizedNetworks": ["0.0.0.0/0"]},
        """
        error: gpu-cluster:cluster.authorizedNetworks[0]: the Kubernetes API must not be reachable from the whole internet
          received: '0.0.0.0/0'
          allowed:  your office or VPN ranges, e.g. 203.0.113.0/24
          fix:      list only the ranges that run kubectl/pulumi; leave empty for a private endpoint
        """,
        id="authorized-network-whole-internet-v4",
    ),
    case(
        "eks",
        {"cluster.authorizedNetworks": ["203.0.113.0/24", "::/0"]},
        """
        error: gpu-cluster:cluster.authorizedNetworks[1]: the Kubernetes API must not be reachable from the whole internet
          received: '::/0'
          allowed:  your office or VPN ranges, e.g. 203.0.113.0/24
          fix:      list only the ranges that run kubectl/pulumi; leave empty for a private endpoint
        """,
        id="authorized-network-whole-internet-v6",
    ),
    case(
        "gke",
        {"cluster.authorizedNetworks": ["64.0.0.0/2"]},
        """
        error: gpu-cluster:cluster.authorizedNetworks[0]: 1,073,741,824 addresses may reach the Kubernetes API
          received: '64.0.0.0/2'
          allowed:  IPv4 networks of /8 or narrower
          fix:      list only the ranges that run kubectl/pulumi; leave empty for a private endpoint
        """,
        id="authorized-network-wider-than-a-slash-8",
    ),
    case(
        "gke",
        {"cluster.authorizedNetworks": ["10.0.0.1/24"]},
        """
        error: gpu-cluster:cluster.authorizedNetworks[0]: not a valid CIDR (10.0.0.1/24 has host bits set)
          received: '10.0.0.1/24'
          allowed:  an IPv4/IPv6 network such as 203.0.113.0/24
          fix:      write the network address with its prefix length
        """,
        id="authorized-network-host-bits",
    ),
    case(
        "gke",
        {"cluster.authorizedNetworks": ["office"]},
        """
        error: gpu-cluster:cluster.authorizedNetworks[0]: not a valid CIDR ('office' does not appear to be an IPv4 or IPv6 network)
          received: 'office'
          allowed:  an IPv4/IPv6 network such as 203.0.113.0/24
          fix:      write the network address with its prefix length
        """,
        id="authorized-network-not-a-cidr",
    ),
    case(
        "eks",
        {"cluster.releaseChannel": "RAPID"},
        """
        error: gpu-cluster:cluster.releaseChannel: releaseChannel is a GKE setting; this stack's cloud is aws
          received: 'RAPID'
          fix:      remove cluster.releaseChannel
        """,
        id="gke-only-field-on-aws",
    ),
    case(
        "gke",
        {"cluster.subnets": {"us-central1-a": "subnet-0123456789abcdef0"}},
        """
        error: gpu-cluster:cluster.subnets: subnets is an EKS setting; this stack's cloud is gcp
          received: {"us-central1-a": "subnet-0123456789abcdef0"}
          fix:      remove cluster.subnets
        """,
        id="eks-only-field-on-gcp",
    ),
    case(
        "eks",
        {"cluster.subnets": {"us-east-1a": "subnet-0123456789abcdef0"}},
        """
        error: gpu-cluster:cluster.subnets: a new EKS cluster needs subnets in at least two zones
          received: {"us-east-1a": "subnet-0123456789abcdef0"}
          allowed:  two or more {zone: subnet-id} entries
          fix:      add a private subnet for a second Availability Zone
        """,
        id="eks-cluster-single-subnet",
    ),
    case(
        "eks",
        {"cluster.subnets.us-east-1b": "subnet-xyz"},
        """
        error: gpu-cluster:cluster.subnets.us-east-1b: not an EC2 subnet ID
          received: 'subnet-xyz'
          allowed:  subnet- followed by 8 or 17 hex digits
          fix:      copy the ID from `aws ec2 describe-subnets`
        """,
        id="eks-subnet-id-malformed",
    ),
    case(
        "eks",
        {"cluster.subnets.use1-az4": "subnet-0123456789abcdef2"},
        """
        error: gpu-cluster:cluster.subnets.use1-az4: not an Availability Zone of us-east-1
          received: 'use1-az4'
          allowed:  us-east-1 followed by one letter (us-east-1a, us-east-1b, …; which AZ a letter names depends on the account: aws ec2 describe-availability-zones --region us-east-1)
          fix:      write the zone's name, not its AZ ID: aws ec2 describe-availability-zones --region us-east-1 --zone-ids use1-az4 prints it
        """,
        id="eks-subnet-keyed-by-az-id",
    ),
    case(
        "eks",
        {
            "cluster.adminPrincipalArns": [
                "arn:aws:iam::123456789012:role/platform-admin",
                "arn:aws:sts::123456789012:assumed-role/Admin/jane@example.com",
                "platform-admin",
            ]
        },
        """
        error: gpu-cluster:cluster.adminPrincipalArns[1]: an STS session ARN cannot be an access entry's principal
          received: 'arn:aws:sts::123456789012:assumed-role/Admin/jane@example.com'
          allowed:  an IAM role or user ARN
          fix:      use the role itself: arn:aws:iam::123456789012:role/Admin (add the role's path if it has one)
        """,
        """
        error: gpu-cluster:cluster.adminPrincipalArns[2]: not an IAM role or user ARN
          received: 'platform-admin'
          allowed:  arn:aws:iam::<12-digit account>:role/<name> or …:user/<name>
          fix:      copy the ARN from `aws iam get-role --role-name <name>`
        """,
        id="eks-admin-principal-not-an-iam-arn",
    ),
    case(
        "gke",
        {"cluster.adminPrincipalArns": ["arn:aws:iam::123456789012:role/platform-admin"]},
        """
        error: gpu-cluster:cluster.adminPrincipalArns: adminPrincipalArns is an EKS setting; this stack's cloud is gcp
          received: ["arn:aws:iam::123456789012:role/platform-admin"]
          fix:      remove cluster.adminPrincipalArns
        """,
        id="eks-admin-principals-on-gcp",
    ),
    case(
        "eks",
        {"cluster.kubernetesVersion": "1.24"},
        """
        error: gpu-cluster:cluster.kubernetesVersion: EKS version not in the supported set
          received: '1.24'
          allowed:  1.32, 1.33, 1.34, 1.35, 1.36
          fix:      quote the version in YAML ("1.35") and pick a supported one
        """,
        id="eks-kubernetes-version-unsupported",
    ),
    case(
        "eks",
        {"cluster.kubernetesVersion": 1.3},
        """
        error: gpu-cluster:cluster.kubernetesVersion: input should be a valid string
          received: 1.3
          fix:      write a string (quote it in YAML)
        """,
        id="eks-kubernetes-version-yaml-float",
    ),
    case(
        "gke",
        {"cluster.systemPool": {"machineType": "a3-highgpu-8g"}},
        """
        error: gpu-cluster:cluster.systemPool.machineType: the system pool must be a CPU type
          received: 'a3-highgpu-8g'
          allowed:  e2-standard-4 (or any CPU type)
          fix:      GPU types belong in nodePools; pick a CPU type for add-ons
        """,
        id="system-pool-gpu-type",
    ),
    case(
        "gke",
        {"cluster.systemPool": {"minNodes": 4}},
        """
        error: gpu-cluster:cluster.systemPool.minNodes: minNodes is larger than maxNodes
          received: 4
          allowed:  1 … 3 (maxNodes)
          fix:      lower minNodes or raise maxNodes
        """,
        id="system-pool-min-gt-max",
    ),
    case(
        "gke",
        {"cluster.clusterAutoscaler": False},
        """
        error: gpu-cluster:cluster.clusterAutoscaler: clusterAutoscaler is an EKS setting; this stack's cloud is gcp
          received: false
          fix:      remove cluster.clusterAutoscaler
        """,
        id="cluster-autoscaler-on-gke",
    ),
]
