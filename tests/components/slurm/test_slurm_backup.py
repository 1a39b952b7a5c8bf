"""The accounting backup as registered (``components/slurm/backup.py``): the bucket is private, versioned, expires
dumps and is protected; the identity may only add objects (GCS ``objectCreator`` on that bucket through Workload
Identity for ``slurm/slurm-db-backup``; S3 ``PutObject`` under the prefix through Pod Identity); the CronJob runs
exactly the dump script ``tests/render/test_slurm_backup_real.py`` restores on real Slurm, validates against
Kubernetes 1.35 and runs locked down; the MariaDB volume uses the ``Retain`` StorageClass (encrypted on EKS)."""

from __future__ import annotations

import functools
import json

import kubernetes_validate

from preview.engine import Recording, run_program
from render.slurm_backup import BACKUP_NAME, STORAGE_CLASS, dump_script
from render.slurm_values import DATABASE, DATABASE_USER, MARIADB_PORT, SecretRefs
from tests.support.kube.schema import K8S_VERSION, unwrap_secrets
from tests.support.preview.recorded import of_type, one
from tests.support.slurm.configs import EKS_ZONES, slurm_configs
from tests.support.spec.edit import edit

CRONJOB = "kubernetes:batch/v1:CronJob"


@functools.cache
def _rec(which: str) -> Recording:
    return run_program(
        {
            "gke": slurm_configs()["gke-h100-512"],
            "eks": EKS_ZONES,
            "off": edit(slurm_configs()["gke-h100-512"], "scheduling.slurm.backup.enabled", False),
            "no-accounting": slurm_configs()["gke-no-accounting"],
        }[which]
    )


def _cronjob(rec: Recording):
    (job,) = of_type(rec, CRONJOB)
    return job


def test_the_cronjob_runs_the_tested_dump_locked_down_and_validates():
    for which in ("gke", "eks"):
        job = _cronjob(_rec(which))
        kubernetes_validate.validate(unwrap_secrets(job.inputs), K8S_VERSION, strict=True)
        pod = job.inputs["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        refs = SecretRefs()
        (dump,) = pod["initContainers"]
        assert dump["command"] == ["bash", "-c", dump_script(refs.db_host, MARIADB_PORT, DATABASE_USER, DATABASE)]
        assert dump["env"] == [
            {
                "name": "MYSQL_PWD",
                "valueFrom": {"secretKeyRef": {"name": refs.db_password, "key": refs.db_password_key}},
            }
        ]
        assert pod["serviceAccountName"] == BACKUP_NAME and pod["automountServiceAccountToken"] is False
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for c in pod["initContainers"] + pod["containers"]:
            assert c["securityContext"]["allowPrivilegeEscalation"] is False
            assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert job.inputs["spec"]["concurrencyPolicy"] == "Forbid"


def test_gcs_bucket_private_versioned_expiring_and_writable_only_by_the_backup_identity():
    rec = _rec("gke")
    bucket = one(rec, "gcp:storage/bucket:Bucket", "slurm-backup-bucket")
    assert bucket.protect
    assert bucket.inputs["publicAccessPrevention"] == "enforced" and bucket.inputs["uniformBucketLevelAccess"]
    assert bucket.inputs["versioning"] == {"enabled": True} and bucket.inputs["forceDestroy"] is False
    assert bucket.inputs["lifecycleRules"][0]["condition"]["age"] == 90
    (member,) = of_type(rec, "gcp:storage/bucketIAMMember:BucketIAMMember")
    assert member.inputs["role"] == "roles/storage.objectCreator"
    assert member.inputs["member"].startswith("serviceAccount:")
    (wi,) = [r for r in of_type(rec, "gcp:serviceaccount/iAMMember:IAMMember") if "slurm-backup" in r.name]
    assert wi.inputs["role"] == "roles/iam.workloadIdentityUser"
    assert wi.inputs["member"] == "serviceAccount:ml-research-prod.svc.id.goog[slurm/slurm-db-backup]"
    ksa = [r for r in of_type(rec, "kubernetes:core/v1:ServiceAccount") if r.inputs["metadata"]["name"] == BACKUP_NAME]
    assert list(ksa[0].inputs["metadata"]["annotations"]) == ["iam.gke.io/gcp-service-account"]


def test_s3_bucket_private_encrypted_and_the_role_may_only_put_under_the_prefix():
    rec = _rec("eks")
    assert one(rec, "aws:s3/bucket:Bucket", "slurm-backup-bucket").protect
    block = one(rec, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "slurm-backup-public-access").inputs
    assert all(block[k] for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"))
    sse = one(
        rec,
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "slurm-backup-encryption",
    ).inputs
    assert sse["rules"][0]["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "aws:kms"
    role = one(rec, "aws:iam/role:Role", "slurm-backup-role").inputs
    trust = json.loads(role["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    policy = json.loads(one(rec, "aws:iam/rolePolicy:RolePolicy", "slurm-backup-policy").inputs["policy"])
    (statement,) = policy["Statement"]
    assert statement["Action"] == ["s3:PutObject"] and statement["Resource"].endswith("/slurm-accounting/ml/*")
    assoc = one(rec, "aws:eks/podIdentityAssociation:PodIdentityAssociation", "slurm-backup-pod-identity").inputs
    assert (assoc["namespace"], assoc["serviceAccount"]) == ("slurm", BACKUP_NAME)


def test_the_database_volume_is_retained_and_encrypted_on_eks():
    for which, params in (("gke", {"type": "pd-balanced"}), ("eks", {"type": "gp3", "encrypted": "true"})):
        rec = _rec(which)
        sc = one(rec, "kubernetes:storage.k8s.io/v1:StorageClass", "slurm-database-storage-class").inputs
        assert (sc["metadata"]["name"], sc["reclaimPolicy"], sc["parameters"]) == (STORAGE_CLASS, "Retain", params)
        sts = one(rec, "kubernetes:apps/v1:StatefulSet", "slurm-database-statefulset")
        claim = sts.inputs["spec"]["volumeClaimTemplates"][0]["spec"]
        assert claim["storageClassName"] == STORAGE_CLASS


def test_no_backup_without_accounting_or_when_turned_off():
    for which in ("off", "no-accounting"):
        rec = _rec(which)
        assert not of_type(rec, CRONJOB) and not of_type(rec, "gcp:storage/bucket:Bucket")
