"""Each rendered vLLM pod can reach the weights path it is given, read-only and as its own identity: on GKE through a
Cloud Storage FUSE mount of its bucket prefix (vLLM v0.10.0 reads no gs://), on EKS by streaming s3:// with a role
that may read that prefix and nothing else; the pods run as the ServiceAccount the identity is bound to."""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase

import pytest

from catalog import load_catalog
from render.serving import render_serving
from render.serving_identity import GCS_FUSE_ANNOTATION, GCS_FUSE_DRIVER
from stacks.plan.serving import bucket_path
from stacks.plan.stack import plan_stack
from stacks.validate.load import load_spec
from tests.render.test_serving_render import _objects, _plan, _raw
from tests.support.spec.edit import edits


def _pods(workload):
    spec = workload["spec"]
    if workload["kind"] == "Deployment":
        return [spec["template"]]
    lws = spec["leaderWorkerTemplate"]
    return [lws["leaderTemplate"], lws["workerTemplate"]]


def _served_path(pod):
    match = re.search(r"vllm serve (\S+)", pod["spec"]["containers"][0]["command"][2])
    return match[1] if match else None


def _allows(policy, action, resource):
    return any(
        st["Effect"] == "Allow"
        and any(fnmatchcase(action, a) for a in st["Action"])
        and fnmatchcase(resource, st["Resource"])
        for st in policy["Statement"]
    )


@pytest.mark.parametrize("stack", ["gke-serving", "multi-node"])
def test_gke_vllm_serves_a_read_only_fuse_mount_of_exactly_its_bucket_prefix(stack):
    plan = _plan(stack)
    for svc, objs in zip(plan.spec.serving.services, _objects(stack).services):
        where = bucket_path(svc.model_uri)
        for pod in _pods(objs.workload):
            text = " ".join(pod["spec"]["containers"][0]["command"])
            assert "gs://" not in text  # vLLM v0.10.0 has no GCS loader
            assert pod["metadata"]["annotations"][GCS_FUSE_ANNOTATION] == "true"  # GKE injects the FUSE sidecar
            volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
            mounts = pod["spec"]["containers"][0]["volumeMounts"]
            fuse = [m for m in mounts if volumes[m["name"]].get("csi", {}).get("driver") == GCS_FUSE_DRIVER]
            assert len(fuse) == 1 and fuse[0]["readOnly"] is True
            csi = volumes[fuse[0]["name"]]["csi"]
            assert csi["readOnly"] is True and csi["volumeAttributes"]["bucketName"] == where.bucket
            assert f"only-dir={where.prefix}" in csi["volumeAttributes"]["mountOptions"].split(",")
        leader = _pods(objs.workload)[0]
        path = _served_path(leader)
        assert path is not None and path.startswith(fuse[0]["mountPath"]), path


@pytest.mark.parametrize("stack", ["gke-serving", "multi-node"])
def test_gke_pods_run_as_a_service_account_whose_google_identity_reads_the_bucket(stack):
    for objs in _objects(stack).services:
        ksa = objs.service_account
        assert all(p["spec"]["serviceAccountName"] == ksa["metadata"]["name"] for p in _pods(objs.workload))
        w = objs.weights
        assert ksa["metadata"]["annotations"]["iam.gke.io/gcp-service-account"] == w.gcp_account_email
        assert w.gcp_account_email.startswith(w.gcp_account_id + "@ml-platform-prod.")
        assert 6 <= len(w.gcp_account_id) <= 30 and re.fullmatch(r"[a-z][a-z0-9-]*[a-z0-9]", w.gcp_account_id)
        assert (w.namespace, w.service_account) == ("serving", ksa["metadata"]["name"])


def test_eks_vllm_streams_s3_with_a_role_that_reads_only_its_prefix():
    plan = _plan("eks-serving")
    svc, objs = plan.spec.serving.services[0], _objects("eks-serving").services[0]
    pod = _pods(objs.workload)[0]
    assert (
        _served_path(pod) == svc.model_uri
        and "--load-format runai_streamer" in pod["spec"]["containers"][0]["command"][2]
    )
    assert pod["spec"]["serviceAccountName"] == objs.service_account["metadata"]["name"] == objs.weights.service_account
    policy = json.loads(json.dumps(objs.weights.s3_read_policy))
    bucket, prefix = "llm-serving-models-us-east-1", "llama-3.1-8b-instruct-fp8"
    assert _allows(policy, "s3:GetObject", f"arn:aws:s3:::{bucket}/{prefix}/model-00001.safetensors")
    assert not _allows(policy, "s3:GetObject", f"arn:aws:s3:::{bucket}/other-model/model.safetensors")
    assert not _allows(policy, "s3:GetObject", f"arn:aws:s3:::another-bucket/{prefix}/config.json")
    for write in ("s3:PutObject", "s3:DeleteObject", "s3:PutBucketPolicy"):
        assert not _allows(policy, write, f"arn:aws:s3:::{bucket}/{prefix}/x")
    listing = next(st for st in policy["Statement"] if st["Action"] == ["s3:ListBucket"])
    assert listing["Condition"]["StringLike"]["s3:prefix"] == [prefix, f"{prefix}/*"]


def test_eks_vllm_keeps_the_streamers_boto3_credentials_that_read_pod_identity():
    """The streamer switches boto3 off when RUNAI_STREAMER_NO_BOTO3_SESSION is present at all (even "0"), and
    RUNAI_STREAMER_S3_UNSIGNED=1 drops credentials: neither may reach the container."""
    from render.serving_identity import STREAMER_BOTO3_OFF

    for pod in _pods(_objects("eks-serving").services[0].workload):
        env = {e["name"] for c in pod["spec"]["containers"] for e in c.get("env") or []}
        assert not env & set(STREAMER_BOTO3_OFF)


def test_a_hugging_face_model_needs_no_bucket_identity():
    raw = edits(_raw("eks-serving"), {("serving", "services", 0, "modelUri"): "meta-llama/Llama-3.1-8B-Instruct"})
    spec, _ = load_spec(raw)
    plan = plan_stack(spec, load_catalog())
    objs = render_serving(
        plan.spec.serving, {f.name: f for f in plan.facts}, plan.cloud, plan.spec.region, plan.spec.project, True
    ).services[0]
    assert objs.weights is None and _served_path(_pods(objs.workload)[0]) == "meta-llama/Llama-3.1-8B-Instruct"
