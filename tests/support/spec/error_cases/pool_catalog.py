"""Spec errors of a pool against the catalog: machine type and GPUs, zones, prices
(``stacks/validate/pool_catalog.py``).

Each row edits a baseline of ``tests/support/spec/cases.py`` and pins every error a user reads, exactly.
"""

from __future__ import annotations

from tests.support.spec.cases import SUBNETS_AB, case

P6E_ZONE = {
    "nodePools[0].zones": ["us-east-1-dfw-2a"],
    "cluster.nodeSubnets": {"us-east-1-dfw-2a": "subnet-0a1b2c3d4e5f60003"},
}
"""Where P6e-GB200 is sold (the Dallas Local Zone, a node-only subnet); other zones are refused in their own test."""

CASES = [
    # -- machine type and GPUs -------------------------------------------------------------------------------------
    case(
        "gke",
        {"nodePools[0].machineType": "a3-highgpu-8"},
        """
        error: gpu-cluster:nodePools[0].machineType: pool 'h100': unknown GPU machine type for gcp
          received: 'a3-highgpu-8'
          allowed:  a2-highgpu-1g, a2-highgpu-2g, a2-highgpu-4g, a2-highgpu-8g, a2-megagpu-16g, a2-ultragpu-1g, a2-ultragpu-2g, a2-ultragpu-4g, a2-ultragpu-8g, a3-edgegpu-8g, a3-highgpu-1g, a3-highgpu-2g, … (31 in all)
          fix:      did you mean 'a3-highgpu-8g'?
        """,
        id="machine-type-unknown-did-you-mean",
    ),
    case(
        "gke",
        {"nodePools[0].machineType": "p5.48xlarge"},
        """
        error: gpu-cluster:nodePools[0].machineType: pool 'h100': p5.48xlarge is an AWS machine type; this stack's cloud is gcp
          received: 'p5.48xlarge'
          allowed:  a2-highgpu-1g, a2-highgpu-2g, a2-highgpu-4g, a2-highgpu-8g, a2-megagpu-16g, a2-ultragpu-1g, a2-ultragpu-2g, a2-ultragpu-4g, a2-ultragpu-8g, a3-edgegpu-8g, a3-highgpu-1g, a3-highgpu-2g, … (31 in all)
          fix:      use a GCP type with the same GPUs (8 × H100_80GB): a3-highgpu-8g, a3-megagpu-8g; or move this pool to an AWS stack
        """,
        id="machine-type-from-aws-on-gke",
    ),
    case(
        "eks",
        {"nodePools[0].machineType": "a2-ultragpu-8g"},
        """
        error: gpu-cluster:nodePools[0].machineType: pool 'h100': a2-ultragpu-8g is a GCP machine type; this stack's cloud is aws
          received: 'a2-ultragpu-8g'
          allowed:  g4dn.12xlarge, g4dn.16xlarge, g4dn.2xlarge, g4dn.4xlarge, g4dn.8xlarge, g4dn.metal, g4dn.xlarge, g5.12xlarge, g5.16xlarge, g5.24xlarge, g5.2xlarge, g5.48xlarge, … (51 in all)
          fix:      use an AWS type with the same GPUs (8 × A100_80GB): p4de.24xlarge; or move this pool to a GCP stack
        """,
        id="machine-type-from-gcp-on-eks",
    ),
    case(
        "gke",
        {"nodePools[0].accelerator": {"type": "nvidia-h100-80gb", "count": 4}},
        """
        error: gpu-cluster:nodePools[0].accelerator.count: pool 'h100': a3-highgpu-8g has exactly 8 × nvidia-h100-80gb
          received: 4
          allowed:  8
          fix:      remove accelerator.count, or pick the machine size with that many GPUs
        """,
        id="fixed-gpu-count-mismatch",
    ),
    case(
        "gke",
        {"nodePools[0].accelerator": {"type": "nvidia-tesla-a100"}},
        """
        error: gpu-cluster:nodePools[0].accelerator.type: pool 'h100': a3-highgpu-8g comes with nvidia-h100-80gb GPUs; nvidia-tesla-a100 cannot be attached to it
          received: 'nvidia-tesla-a100'
          allowed:  nvidia-h100-80gb
          fix:      remove accelerator (the catalog knows it) or pick a machine type for that GPU
        """,
        id="fixed-type-wrong-accelerator",
    ),
    case(
        "gke",
        {"nodePools[0].machineType": "n1-standard-8"},
        """
        error: gpu-cluster:nodePools[0].accelerator: pool 'h100': n1-standard-8 has no built-in GPU; say which GPU to attach
          allowed:  nvidia-tesla-t4, nvidia-tesla-v100
          fix:      add accelerator: {type: nvidia-tesla-t4, count: 1}
        """,
        id="n1-host-without-accelerator",
    ),
    case(
        "gke",
        {
            "nodePools[0].machineType": "n1-standard-8",
            "nodePools[0].accelerator": {"type": "nvidia-tesla-t4", "count": 3},
        },
        """
        error: gpu-cluster:nodePools[0].accelerator.count: pool 'h100': nvidia-tesla-t4 attaches in fixed counts
          received: 3
          allowed:  1, 2, 4
          fix:      pick one of the allowed counts
        """,
        id="n1-disallowed-gpu-count",
    ),
    case(
        "gke",
        {"nodePools[0].machineType": "n1-standard-8", "nodePools[0].accelerator": {"type": "nvidia-tesla-v100"}},
        """
        error: gpu-cluster:nodePools[0].accelerator.count: pool 'h100': say how many nvidia-tesla-v100 GPUs to attach to n1-standard-8
          allowed:  1, 2, 4, 8
          fix:      add accelerator.count: 1 (or another allowed count)
        """,
        id="n1-gpu-count-missing",
    ),
    case(
        "gke",
        {
            "nodePools[0].machineType": "n1-standard-8",
            "nodePools[0].accelerator": {"type": "nvidia-tesla-t5", "count": 1},
        },
        """
        error: gpu-cluster:nodePools[0].accelerator.type: pool 'h100': GPU cannot be attached to n1-standard-8
          received: 'nvidia-tesla-t5'
          allowed:  nvidia-tesla-t4, nvidia-tesla-v100
          fix:      did you mean 'nvidia-tesla-t4'?
        """,
        id="n1-unknown-accelerator",
    ),
    # -- zones -----------------------------------------------------------------------------------------------------
    case(
        "gke",
        {"nodePools[0].zones": ["us-east4-a"]},
        """
        error: gpu-cluster:nodePools[0].zones[0]: pool 'h100': not a zone of region us-central1
          received: 'us-east4-a'
          allowed:  us-central1-a, us-central1-b, us-central1-c, us-central1-f
          fix:      did you mean 'us-central1-a'?
        """,
        id="zone-not-in-region",
    ),
    # AWS zone names are not sourced (AZ IDs are; a name maps to an ID per account): any letter of the region passes
    case(
        "eks",
        {"nodePools[0].zones": ["us-east-2a"]},
        """
        error: gpu-cluster:nodePools[0].zones[0]: pool 'h100': not a zone of region us-east-1
          received: 'us-east-2a'
          allowed:  us-east-1 followed by one letter (us-east-1a, us-east-1b, …; which AZ a letter names depends on the account: aws ec2 describe-availability-zones --region us-east-1)
          fix:      write the zone as us-east-1 plus its letter, e.g. us-east-1a
        """,
        id="eks-zone-of-another-region",
    ),
    case(
        "eks",
        {"nodePools[0].zones": ["use1-az4"]},
        """
        error: gpu-cluster:nodePools[0].zones[0]: pool 'h100': not a zone of region us-east-1
          received: 'use1-az4'
          allowed:  us-east-1 followed by one letter (us-east-1a, us-east-1b, …; which AZ a letter names depends on the account: aws ec2 describe-availability-zones --region us-east-1)
          fix:      write the zone's name, not its AZ ID: aws ec2 describe-availability-zones --region us-east-1 --zone-ids use1-az4 prints it
        """,
        id="eks-zone-given-as-az-id",
    ),
    case(
        "gke",
        {"nodePools[0].zones": ["us-central1-a", "us-central1-a"]},
        """
        error: gpu-cluster:nodePools[0].zones: pool 'h100': a zone is listed twice
          received: ["us-central1-a", "us-central1-a"]
          allowed:  each zone once
          fix:      remove the duplicate
        """,
        id="zone-listed-twice",
    ),
    case(
        "eks",
        {"nodePools[0].zones": ["us-east-1c"]},
        f"""
        error: gpu-cluster:nodePools[0].zones[0]: pool 'h100': no subnet is declared for this Availability Zone
          received: 'us-east-1c'
          allowed:  {SUBNETS_AB}
          fix:      add cluster.subnets.us-east-1c or cluster.nodeSubnets.us-east-1c: <subnet-id>, or use a zone that has one
        """,
        id="eks-pool-zone-without-subnet",
    ),
    # -- price -----------------------------------------------------------------------------------------------------
    case(
        "eks",
        {"nodePools[0].machineType": "g7e.48xlarge", "nodePools[0].capacity": {"type": "spot"}},
        """
        error: gpu-cluster:nodePools[0].machineType: pool 'h100': no spot price for g7e.48xlarge in us-east-1; refusing to guess (unknown is not $0)
          received: 'g7e.48xlarge'
          allowed:  no region has a spot price; on-demand is priced in ap-northeast-1, ap-northeast-2, ap-south-1, eu-central-1, eu-north-1, eu-west-2, us-east-1, us-east-2, us-west-2
          fix:      add a dated, sourced row to catalog/data/prices.csv, or pick another region, capacity type or machine type
        """,
        id="no-price-g7e-spot",
    ),
    case(
        "eks",
        {"nodePools[0].machineType": "p5e.48xlarge"},
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'h100': p5e.48xlarge is sold only as EC2 Capacity Blocks for ML; there are no on-demand instances of it
          received: 'on-demand'
          allowed:  capacity: {type: reservation, reservationKind: capacity-block, reservation: cr-…}
          fix:      buy a capacity block and declare it, or pick a machine sold on demand (p5en.48xlarge has the same 8 x H200)
        """,
        id="capacity-block-only-p5e-on-demand",
    ),
    case(
        "eks",
        {
            "nodePools[0].machineType": "p6e-gb200.36xlarge",
            "nodePools[0].multiNode": True,
            **P6E_ZONE,
            "nodePools[0].minNodes": 1,
        },
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'h100': p6e-gb200.36xlarge is sold only as part of an EC2 UltraServer, reserved as an UltraServer Capacity Block; there are no on-demand instances of it
          received: 'on-demand'
          allowed:  capacity: {type: reservation, reservationKind: capacity-block, reservation: cr-…, ultraserverType: u-p6e-gb200x72}
          fix:      buy an UltraServer capacity block and declare it
        """,
        id="ultraserver-only-p6e-gb200",
    ),
    case(
        "eks",
        {
            "nodePools[0].machineType": "p6e-gb200.36xlarge",
            "nodePools[0].multiNode": True,
            **P6E_ZONE,
            "nodePools[0].maxNodes": 18,
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservationKind": "capacity-block",
                "reservation": "cr-0123456789abcdef0",
                "ultraserverType": "u-p6e-gb200x63",
                "window": {"start": "2030-01-07T11:30:00Z", "durationHours": 336},
                "upfrontFeeUsd": 255997.44,
            },
        },
        """
        error: gpu-cluster:nodePools[0].capacity.ultraserverType: pool 'h100': say which UltraServer type the capacity block of p6e-gb200.36xlarge reserves (it fixes the NVLink domain: instances × GPUs)
          received: 'u-p6e-gb200x63'
          allowed:  u-p6e-gb200x36, u-p6e-gb200x72
          fix:      did you mean 'u-p6e-gb200x36'?
        """,
        id="ultraserver-type-unknown",
    ),
    case(
        "eks",
        {
            "nodePools[0].machineType": "p6e-gb200.36xlarge",
            "nodePools[0].multiNode": True,
            **P6E_ZONE,
            "nodePools[0].maxNodes": 12,
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservationKind": "capacity-block",
                "reservation": "cr-0123456789abcdef0",
                "ultraserverType": "u-p6e-gb200x72",
                "window": {"start": "2030-01-07T11:30:00Z", "durationHours": 336},
            },
        },
        """
        error: gpu-cluster:nodePools[0].capacity.reservedNodes: pool 'h100': an UltraServer capacity block holds whole u-p6e-gb200x72 UltraServers of 18 instances
          received: 12
          allowed:  a multiple of 18
          fix:      set capacity.reservedNodes (default maxNodes) to 18 × the UltraServers bought
        """,
        """
        error: gpu-cluster:nodePools[0].capacity.upfrontFeeUsd: pool 'h100': p6e-gb200.36xlarge has no list price: a capacity block of it costs only its upfront fee, so the fee and the window are needed to price it (unknown is not $0)
          allowed:  capacity.upfrontFeeUsd (the UpfrontFee of the offering you bought) and capacity.window ({start, durationHours} or {start, end})
          fix:      declare capacity.upfrontFeeUsd from `aws ec2 describe-capacity-reservations` / the purchase; for scale: AWS capacity-block rate (third-party scrape) $10.582/GPU-h as of 2026-01-31 = $42.33 per node-hour
        """,
        id="ultraserver-partial-and-no-fee",
    ),
    case(
        "gke",
        {"nodePools[0].machineType": "a4x-highgpu-4g", "nodePools[0].multiNode": True, "nodePools[0].maxNodes": 18},
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'h100': a4x-highgpu-4g is sold only through reservations (reservation-bound VMs of AI Hypercomputer); there are no on-demand VMs of it
          received: 'on-demand'
          allowed:  capacity: {type: reservation, reservation: <name>, reservationBlock: <block>}
          fix:      declare the reservation (and its block) you were granted
        """,
        id="a4x-reservation-only",
    ),
    case(
        "eks",
        {
            "nodePools[0].machineType": "p6e-gb200.36xlarge",
            "nodePools[0].multiNode": True,
            **P6E_ZONE,
            "nodePools[0].maxNodes": 18,
            "nodePools[0].amiReleaseVersion": "1.35.0-20251020",
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservationKind": "capacity-block",
                "reservation": "cr-0123456789abcdef0",
                "ultraserverType": "u-p6e-gb200x72",
                "window": {"start": "2030-01-07T11:30:00Z", "durationHours": 336},
                "upfrontFeeUsd": 255999.74,
            },
        },
        """
        error: gpu-cluster:nodePools[0].amiReleaseVersion: pool 'h100': p6e-gb200.36xlarge needs the AL2023 ARM NVIDIA AMI from release v20251103 on (NVIDIA driver 580 with CDMM, the EKS UltraServer guide)
          received: '1.35.0-20251020'
          allowed:  a release dated 20251103 or later, e.g. 1.35.2-20260304
          fix:      pin a newer release (`aws ssm get-parameter --name /aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/arm64/nvidia/recommended/release_version`), or remove amiReleaseVersion
        """,
        id="p6e-ami-below-the-guide-floor",
    ),
    case(
        "gke",
        {"region": "us-east4", "nodePools[0].zones": ["us-east4-b"], "nodePools[0].machineType": "a4-highgpu-8g"},
        """
        error: gpu-cluster:nodePools[0].machineType: pool 'h100': no on-demand price for a4-highgpu-8g in us-east4; refusing to guess (unknown is not $0)
          received: 'a4-highgpu-8g'
          allowed:  regions with an on-demand price: europe-west4, us-central1, us-east1, us-south1
          fix:      add a dated, sourced row to catalog/data/prices.csv, or pick another region, capacity type or machine type
        """,
        id="no-price-in-region-priced-elsewhere",
    ),
    case(
        "eks",
        {
            "nodePools[0].machineType": "p5e.48xlarge",
            "nodePools[0].capacity": {"type": "reservation", "reservation": "cr-0123456789abcdef0"},
        },
        """
        error: gpu-cluster:nodePools[0].capacity.type: pool 'h100': p5e.48xlarge is sold only as EC2 Capacity Blocks for ML; there are no capacity-reservation (ODCR) instances of it
          received: 'reservation'
          allowed:  capacity: {type: reservation, reservationKind: capacity-block, reservation: cr-…}
          fix:      buy a capacity block and declare it, or pick a machine sold on demand (p5en.48xlarge has the same 8 x H200)
        """,
        id="capacity-block-only-p5e-odcr",
    ),
    # the only form p5e exists in has no list price either: its declared fee and window are its price
    case(
        "eks",
        {
            "nodePools[0].machineType": "p5e.48xlarge",
            "nodePools[0].capacity": {
                "type": "reservation",
                "reservation": "cr-0123456789abcdef0",
                "reservationKind": "capacity-block",
            },
        },
        """
        error: gpu-cluster:nodePools[0].capacity.upfrontFeeUsd: pool 'h100': p5e.48xlarge has no list price: a capacity block of it costs only its upfront fee, so the fee and the window are needed to price it (unknown is not $0)
          allowed:  capacity.upfrontFeeUsd (the UpfrontFee of the offering you bought) and capacity.window ({start, durationHours} or {start, end})
          fix:      declare capacity.upfrontFeeUsd and capacity.window from `aws ec2 describe-capacity-reservations` / the purchase
        """,
        id="capacity-block-p5e-without-fee-and-window",
    ),
    case(
        "gke",
        {"nodePools[0].machineType": "a3-ultragpu-8g"},
        """
        error: gpu-cluster:nodePools[0].zones[0]: pool 'h100': a3-ultragpu-8g is not offered in us-central1-a (catalog sources as of 2026-07-09)
          received: 'us-central1-a'
          allowed:  us-central1-b
          fix:      use a listed zone; if you do have capacity there (a reservation), declare zoneAvailabilityOverride: {zones: [us-central1-a], reason: ...}
        """,
        id="zone-not-offering-the-machine",
    ),
    case(
        "gke",
        {"nodePools[0].zoneAvailabilityOverride": {"zones": ["us-central1-b"], "reason": "r"}},
        """
        error: gpu-cluster:nodePools[0].zoneAvailabilityOverride.zones[0]: pool 'h100': an override names a zone the pool does not use
          received: 'us-central1-b'
          allowed:  us-central1-a
          fix:      list only zones of this pool's zones
        """,
        id="zone-override-outside-the-pool",
    ),
    case(
        "gke",
        {"nodePools[0].machineType": "a3-edgegpu-8g"},
        """
        error: gpu-cluster:nodePools[0].machineType: pool 'h100': no on-demand price for a3-edgegpu-8g in us-central1; refusing to guess (unknown is not $0)
          received: 'a3-edgegpu-8g'
          allowed:  no region has an on-demand price; the catalog has no price for a3-edgegpu-8g at all
          fix:      add a dated, sourced row to catalog/data/prices.csv, or pick another region, capacity type or machine type
        """,
        id="no-price-anywhere-a3-edgegpu",
    ),
]
