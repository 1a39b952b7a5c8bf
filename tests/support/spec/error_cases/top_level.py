"""Spec errors in top-level settings: unknown keys, cloud, region, project or account, resource labels
(``stacks/validate/top_level.py`` and the shape checks).

Each row edits a baseline of ``tests/support/spec/cases.py`` and pins every error a user reads, exactly.
"""

from __future__ import annotations

from tests.support.spec.edit import DELETE
from tests.support.spec.cases import TOP_KEYS, case

CASES = [
    case(
        "gke",
        {"nodePool": []},
        f"""
        error: gpu-cluster:nodePool: unknown setting
          received: 'nodePool'
          allowed:  {TOP_KEYS}
          fix:      did you mean 'nodePools'?
        """,
        id="unknown-top-level-key-did-you-mean",
    ),
    case(
        "gke",
        {"cloud": "gke"},
        """
        error: gpu-cluster:cloud: not one of the allowed values
          received: 'gke'
          allowed:  gcp, aws
          fix:      did you mean 'gcp'?
        """,
        id="cloud-enum-product-name",
    ),
    case(
        "gke",
        {"cloud": "azure"},
        """
        error: gpu-cluster:cloud: not one of the allowed values
          received: 'azure'
          allowed:  gcp, aws
          fix:      set it to one of the allowed values
        """,
        id="cloud-enum-unsupported",
    ),
    case(
        "gke",
        {"cloud": DELETE},
        """
        error: gpu-cluster:cloud: required setting is missing
          allowed:  gcp, aws
          fix:      add gpu-cluster:cloud to the stack config
        """,
        id="cloud-missing",
    ),
    case(
        "gke",
        {"region": "us-centrl1"},
        """
        error: gpu-cluster:region: no catalog data for gcp region 'us-centrl1'
          received: 'us-centrl1'
          allowed:  asia-east1, asia-east2, asia-northeast1, asia-northeast3, asia-south1, asia-south2, asia-southeast1, asia-southeast2, australia-southeast1, europe-central2, europe-north1, europe-west1, … (32 in all)
          fix:      did you mean 'us-central1'?
        """,
        id="region-unknown-did-you-mean",
    ),
    case(
        "gke",
        {"region": "us-east-1"},
        """
        error: gpu-cluster:region: us-east-1 is an AWS region; this stack's cloud is gcp
          received: 'us-east-1'
          allowed:  asia-east1, asia-east2, asia-northeast1, asia-northeast3, asia-south1, asia-south2, asia-southeast1, asia-southeast2, australia-southeast1, europe-central2, europe-north1, europe-west1, … (32 in all)
          fix:      pick a GCP region, or set gpu-cluster:cloud to aws (and use aws machine types and zones)
        """,
        id="region-of-the-other-cloud",
    ),
    case(
        "gke",
        {"project": DELETE},
        """
        error: gpu-cluster:project: a GCP stack needs the project ID
          allowed:  a GCP project ID: 6-30 lower-case letters, digits or '-'
          fix:      pulumi config set gpu-cluster:project <your-project-id>
        """,
        id="gcp-project-missing",
    ),
    case(
        "gke",
        {"project": "My Project"},
        """
        error: gpu-cluster:project: not a valid GCP project ID
          received: 'My Project'
          allowed:  6-30 lower-case letters, digits or '-', starting with a letter
          fix:      use the project ID (not the display name or number) from `gcloud projects list`
        """,
        id="gcp-project-display-name",
    ),
    case(
        "gke",
        {"project": 123456789012},
        """
        error: gpu-cluster:project: not a valid GCP project ID
          received: '123456789012'
          allowed:  6-30 lower-case letters, digits or '-', starting with a letter
          fix:      use the project ID (not the display name or number) from `gcloud projects list`
        """,
        id="gcp-project-number-reported-once",
    ),
    case(
        "eks",
        {"project": "ml-platform-prod"},
        """
        error: gpu-cluster:project: project is a GCP setting; this stack's cloud is aws
          received: 'ml-platform-prod'
          fix:      remove gpu-cluster:project (use gpu-cluster:accountId to pin the AWS account)
        """,
        id="project-set-on-aws",
    ),
    case(
        "eks",
        {"accountId": "1234"},
        """
        error: gpu-cluster:accountId: not a valid AWS account ID
          received: '1234'
          allowed:  exactly 12 digits
          fix:      quote it in YAML so leading zeros survive, e.g. accountId: "012345678901"
        """,
        id="aws-account-id-malformed",
    ),
    case(
        "gke",
        {"labels": {"Team": "ml"}},
        """
        error: gpu-cluster:labels.Team: not a valid cloud label key
          received: 'Team'
          allowed:  1-63 lower-case letters, digits, '-' or '_', starting with a letter
          fix:      rename the key, e.g. 'cost-center'
        """,
        id="resource-label-key-upper-case",
    ),
]
