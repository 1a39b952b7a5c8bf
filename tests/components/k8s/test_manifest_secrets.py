"""The rewrites that keep Katib's and Kubeflow Pipelines' public default credentials out of the cluster.

The objects come from tests/support/kube/upstream_manifests.py: the shape of the upstream manifests at the pinned tags. That the
components really attach these rewrites to their kustomize Directory is checked in tests/components/k8s/test_scheduling_components.py."""

from __future__ import annotations

import json

import pulumi

from components.k8s.manifest_secrets import (
    KNOWN_DEFAULT_CREDENTIALS,
    EnvOverride,
    ManifestRewrites,
    SecretOverride,
    manifest_transform,
    rewrite_env,
    rewrite_secret,
)
from components.k8s.katib import katib_rewrites
from components.k8s.kubeflow_pipelines import pipelines_rewrites
from preview.engine import install_mocks
from tests.support.kube.upstream_manifests import KATIB_SECRET, MINIO_SECRET, MYSQL_DEPLOYMENT, MYSQL_SECRET

MYSQL_OVERRIDE = EnvOverride(
    deployment="mysql",
    container="mysql",
    drop="MYSQL_ALLOW_EMPTY_PASSWORD",
    name="MYSQL_ROOT_PASSWORD",
    secret="mysql-secret",
    key="password",
)


def test_katib_secret_loses_its_base64_default_and_gets_the_generated_value():
    new = rewrite_secret(KATIB_SECRET, (SecretOverride("katib-mysql-secrets", {"MYSQL_ROOT_PASSWORD": "GENERATED"}),))
    assert new == {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": "katib-mysql-secrets"},
        "stringData": {"MYSQL_ROOT_PASSWORD": "GENERATED"},
    }


def test_minio_secret_is_rewritten_and_other_secrets_are_left_alone():
    overrides = (SecretOverride("mlpipeline-minio-artifact", {"accesskey": "A", "secretkey": "S"}),)
    assert rewrite_secret(MINIO_SECRET, overrides)["stringData"] == {"accesskey": "A", "secretkey": "S"}
    assert rewrite_secret({**MINIO_SECRET, "metadata": {"name": "other"}}, overrides) is None


def test_mysql_takes_its_root_password_from_the_secret_instead_of_allowing_an_empty_one():
    new = rewrite_env(MYSQL_DEPLOYMENT, (MYSQL_OVERRIDE,))
    env = new["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [
        {"name": "MYSQL_ROOT_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "mysql-secret", "key": "password"}}}
    ]
    assert MYSQL_DEPLOYMENT["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == "true"  # not mutated
    assert rewrite_env({**MYSQL_DEPLOYMENT, "metadata": {"name": "ml-pipeline"}}, (MYSQL_OVERRIDE,)) is None


def test_the_transform_rewrites_secrets_deployments_and_keeps_the_shared_namespace():
    install_mocks({})
    seen: dict[str, object] = {}

    @pulumi.runtime.test
    def run():
        password = pulumi.Output.secret("GENERATED-PASSWORD")
        transform = manifest_transform(
            ManifestRewrites(
                secrets=(SecretOverride("katib-mysql-secrets", {"MYSQL_ROOT_PASSWORD": password}),),
                env=(MYSQL_OVERRIDE,),
            )
        )
        opts = pulumi.ResourceOptions()
        secret = transform(
            pulumi.ResourceTransformArgs(True, "kubernetes:core/v1:Secret", "katib:kubeflow/x", KATIB_SECRET, opts)
        )
        deployment = transform(
            pulumi.ResourceTransformArgs(True, "kubernetes:apps/v1:Deployment", "kfp:mysql", MYSQL_DEPLOYMENT, opts)
        )
        namespace = transform(
            pulumi.ResourceTransformArgs(
                True, "kubernetes:core/v1:Namespace", "katib:kubeflow", {"metadata": {"name": "kubeflow"}}, opts
            )
        )
        service = transform(
            pulumi.ResourceTransformArgs(
                True, "kubernetes:core/v1:Service", "katib:ui", {"metadata": {"name": "katib-ui"}}, opts
            )
        )
        seen.update(
            deployment=deployment.props,
            namespace=namespace.opts.retain_on_delete,
            service=service,
            data="data" in secret.props,
        )
        value = secret.props["stringData"]["MYSQL_ROOT_PASSWORD"]
        return pulumi.Output.all(value, value.is_secret()).apply(lambda v: seen.update(value=v[0], secret=v[1]))

    run()
    assert seen["value"] == "GENERATED-PASSWORD" and seen["secret"] is True and seen["data"] is False
    assert seen["namespace"] is True and seen["service"] is None
    # the image (now holding the password, on a tag here) becomes the digest resolved at deploy: an Output
    assert "MYSQL_ALLOW_EMPTY_PASSWORD" not in json.dumps(seen["deployment"], default=str)


def test_every_known_default_is_overridden_key_for_key_by_the_components_rewrites():
    rewrites = katib_rewrites("k").secrets + pipelines_rewrites("a", "s", "m").secrets
    covered = {o.name: o.string_data for o in rewrites}
    assert set(KNOWN_DEFAULT_CREDENTIALS) == {"katib-mysql-secrets", "mlpipeline-minio-artifact", "mysql-secret"}
    for name, defaults in KNOWN_DEFAULT_CREDENTIALS.items():
        assert set(defaults) <= set(covered[name]), name
        assert all(covered[name][k] != defaults[k] for k in defaults), name
    # the rewrite replaces the whole Secret, so it must keep every key upstream defines (mysql-secret's username)
    for upstream in (KATIB_SECRET, MINIO_SECRET, MYSQL_SECRET):
        keys = set(upstream.get("data", {})) | set(upstream.get("stringData", {}))
        assert keys <= set(covered[upstream["metadata"]["name"]]), upstream["metadata"]["name"]
    assert (
        pipelines_rewrites("a", "s", "m").env[0] == MYSQL_OVERRIDE
    )  # then MinIO's renamed variables (test_manifest_images)
