"""The outdated or moving images of the Katib and Kubeflow Pipelines manifests are replaced (no unpatched or moving
image in a tenant's path): MySQL by the pinned 8.4 LTS digest in both, MinIO of 2019 by a current release reading the
same Secret under today's variable names. The documents have the shape of the upstream manifests at the pinned tags
(tests/support/kube/upstream_manifests.py); that the components attach these rewrites to their kustomize Directory is
checked in test_scheduling_components.py."""

from __future__ import annotations

import copy

import pulumi

from components.charts import KFP_MINIO_IMAGE, MANIFEST_MYSQL_IMAGE
from components.k8s.katib import katib_rewrites
from components.k8s.kubeflow_pipelines import pipelines_rewrites
from components.k8s.manifest_secrets import manifest_transform, rewrite_object
from render.manifest_images import pin_secret_holders
from catalog.image_digests import DEPLOY_DIGEST
from preview.engine import install_mocks, restored_config_environment
from stacks.plan.host_access import by_digest
from tests.support.kube.upstream_manifests import (
    KATIB_DB_MANAGER,
    KATIB_MYSQL_DEPLOYMENT,
    KATIB_UI,
    MINIO_DEPLOYMENT,
    MYSQL_DEPLOYMENT,
)

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
        {
            "name": "MINIO_ROOT_USER",
            "valueFrom": {"secretKeyRef": {"name": "mlpipeline-minio-artifact", "key": "accesskey"}},
        },
        {
            "name": "MINIO_ROOT_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": "mlpipeline-minio-artifact", "key": "secretkey"}},
        },
    ]


def test_other_deployments_and_containers_keep_their_images():
    other = copy.deepcopy(MINIO_DEPLOYMENT)
    other["metadata"]["name"] = "ml-pipeline"
    assert rewrite_object(DEPLOYMENT, other, pipelines_rewrites("a", "s", "m")) is None
    sidecar = copy.deepcopy(KATIB_MYSQL_DEPLOYMENT)
    sidecar["spec"]["template"]["spec"]["containers"].append({"name": "exporter", "image": "exporter:1"})
    new = rewrite_object(DEPLOYMENT, sidecar, katib_rewrites("k"))
    assert [c["image"] for c in new["spec"]["template"]["spec"]["containers"]] == [MANIFEST_MYSQL_IMAGE, "exporter:1"]


def _stub(image: str) -> str:
    return f"{image}@sha256:{'0' * 64}"


def test_every_container_holding_a_secret_on_a_tag_gets_a_digest_and_the_others_are_left_alone():
    """The DB manager (the MySQL password in its env) and MinIO (its keys) run what their tag named at deploy, by
    digest; MySQL already runs a cited digest; the Katib UI holds no Secret."""
    new = pin_secret_holders(DEPLOYMENT, KATIB_DB_MANAGER, _stub)
    assert container(new)["image"] == _stub("docker.io/kubeflowkatib/katib-db-manager")
    assert container(KATIB_DB_MANAGER)["image"] == "docker.io/kubeflowkatib/katib-db-manager"  # not mutated
    minio = rewrite_object(DEPLOYMENT, MINIO_DEPLOYMENT, pipelines_rewrites("a", "s", "m"))
    assert container(pin_secret_holders(DEPLOYMENT, minio, _stub))["image"] == _stub(KFP_MINIO_IMAGE)
    mysql = rewrite_object(DEPLOYMENT, KATIB_MYSQL_DEPLOYMENT, katib_rewrites("k"))
    assert pin_secret_holders(DEPLOYMENT, mysql, _stub) is None
    assert pin_secret_holders(DEPLOYMENT, KATIB_UI, _stub) is None
    mounted = copy.deepcopy(KATIB_UI)  # a mounted Secret (a webhook's serving key) counts as well
    spec = mounted["spec"]["template"]["spec"]
    spec["volumes"] = [{"name": "cert", "secret": {"secretName": "katib-webhook-cert"}}]
    spec["containers"][0]["volumeMounts"] = [{"name": "cert", "mountPath": "/tmp/cert"}]
    assert container(pin_secret_holders(DEPLOYMENT, mounted, _stub))["image"] == _stub(
        "docker.io/kubeflowkatib/katib-ui"
    )


def test_the_components_transform_asks_the_registry_for_the_digest_at_deploy():
    """The transform the Katib and Pipelines components attach resolves through the Docker provider's lookup (the
    offline mocks answer the stand-in digest): the DB manager's image is pinned before the Deployment is created."""
    seen: dict[str, str] = {}
    with restored_config_environment():
        install_mocks({})

        @pulumi.runtime.test
        def run():
            transform = manifest_transform(katib_rewrites("k"))
            result = transform(
                pulumi.ResourceTransformArgs(True, DEPLOYMENT, "katib:db", KATIB_DB_MANAGER, pulumi.ResourceOptions())
            )
            image = container(result.props)["image"]
            return pulumi.Output.from_input(image).apply(lambda v: seen.update(image=v))

        run()
    assert seen["image"] == f"docker.io/kubeflowkatib/katib-db-manager@{DEPLOY_DIGEST}"
