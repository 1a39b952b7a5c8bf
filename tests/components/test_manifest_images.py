"""The outdated or moving images of the Katib and Kubeflow Pipelines manifests are replaced (no unpatched or moving
image in a tenant's path): MySQL by the pinned 8.4 LTS digest in both, MinIO of 2019 by a current release reading the
same Secret under today's variable names. The documents have the shape of the upstream manifests at the pinned tags
(tests/support/kube/upstream_manifests.py); that the components attach these rewrites to their kustomize Directory is
checked in test_scheduling_components.py."""
from __future__ import annotations

import copy

from components.charts import KFP_MINIO_IMAGE, MANIFEST_MYSQL_IMAGE
from components.k8s.katib import katib_rewrites
from components.k8s.kubeflow_pipelines import pipelines_rewrites
from components.k8s.manifest_secrets import rewrite_object
from stacks.plan.host_access import by_digest
from tests.support.kube.upstream_manifests import KATIB_MYSQL_DEPLOYMENT, MINIO_DEPLOYMENT, MYSQL_DEPLOYMENT

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def container(obj: dict) -> dict:
    return obj["spec"]["template"]["spec"]["containers"][0]


def test_katib_mysql_runs_the_pinned_lts_image_instead_of_the_moving_8_0_tag():
    new = rewrite_object(DEPLOYMENT, KATIB_MYSQL_DEPLOYMENT, katib_rewrites("k"))
    assert container(new)["image"] == MANIFEST_MYSQL_IMAGE and by_digest(MANIFEST_MYSQL_IMAGE)
    assert container(new)["env"] == container(KATIB_MYSQL_DEPLOYMENT)["env"]  # its password still from the Secret
    assert container(KATIB_MYSQL_DEPLOYMENT)["image"] == "mysql:8.0"  # not mutated


def test_pipelines_mysql_gets_the_pinned_image_and_its_password_from_the_secret():
    new = rewrite_object(DEPLOYMENT, MYSQL_DEPLOYMENT, pipelines_rewrites("a", "s", "m"))
    assert container(new)["image"] == MANIFEST_MYSQL_IMAGE
    assert [e["name"] for e in container(new)["env"]] == ["MYSQL_ROOT_PASSWORD"]


def test_pipelines_minio_of_2019_is_replaced_and_reads_the_same_secret_under_the_current_names():
    new = rewrite_object(DEPLOYMENT, MINIO_DEPLOYMENT, pipelines_rewrites("a", "s", "m"))
    assert container(new)["image"] == KFP_MINIO_IMAGE and "2019" not in KFP_MINIO_IMAGE
    assert container(new)["env"] == [
        {"name": "MINIO_ROOT_USER", "valueFrom": {"secretKeyRef": {"name": "mlpipeline-minio-artifact",
                                                                    "key": "accesskey"}}},
        {"name": "MINIO_ROOT_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "mlpipeline-minio-artifact",
                                                                        "key": "secretkey"}}}]


def test_other_deployments_and_containers_keep_their_images():
    other = copy.deepcopy(MINIO_DEPLOYMENT)
    other["metadata"]["name"] = "ml-pipeline"
    assert rewrite_object(DEPLOYMENT, other, pipelines_rewrites("a", "s", "m")) is None
    sidecar = copy.deepcopy(KATIB_MYSQL_DEPLOYMENT)
    sidecar["spec"]["template"]["spec"]["containers"].append({"name": "exporter", "image": "exporter:1"})
    new = rewrite_object(DEPLOYMENT, sidecar, katib_rewrites("k"))
    assert [c["image"] for c in new["spec"]["template"]["spec"]["containers"]] == [MANIFEST_MYSQL_IMAGE, "exporter:1"]
