"""``python -m preview job-objects``: one TrainJob's own NVLink IMEX domain on a GB200 pool ("one
ComputeDomain per job is the documented practice"). The printed ComputeDomain, TrainingRuntime and TrainJob validate
against the driver chart's CRD, the Trainer v2.3.0 CRDs (schemas and CEL rules) and Kubernetes 1.35; they are wired
to each other (channel claim, runtimeRef, namespace, the stack's LocalQueue), the job's pod is admitted in its
namespace by the stack's own admission objects, and bad arguments are refused all at once (exit 2, nothing on
stdout)."""

from __future__ import annotations

import re
import subprocess
import sys

import kubernetes_validate
import pytest
import yaml

from catalog.image_digests import DEPLOY_DIGEST
from preview.__main__ import main
from render.compute_domain import POD_CLAIM
from tests.conftest import PROJECT_ROOT
from tests.support.helm.examples import recording
from tests.support.kube.admission import admission_failures, k8s_objects, runtime_pod
from tests.support.kube.crd_schemas import cel_errors, schema_errors

A4X = ["job-objects", "--stack", "gke-a4x-nvl72"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main([*A4X[:1], *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def printed() -> tuple[int, list[dict], str, str]:
    """The command as a user runs it: a fresh process from the project folder."""
    proc = subprocess.run(
        [sys.executable, "-m", "preview", *A4X, "--job", "llama-70b"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, [d for d in yaml.safe_load_all(proc.stdout) if d], proc.stderr, proc.stdout


@pytest.mark.slow
def test_it_prints_the_domain_the_runtime_and_the_trainjob(printed):
    code, docs, err, _ = printed
    assert code == 0, err
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("ComputeDomain", "llama-70b-imex"),
        ("TrainingRuntime", "torch-gb200-llama-70b"),
        ("TrainJob", "llama-70b"),
    ]
    assert {d["metadata"]["namespace"] for d in docs} == {"pretraining"}


def test_the_objects_are_wired_to_each_other_and_to_the_stack(printed):
    _, (domain, runtime, job), _, out = printed
    pod = runtime_pod(runtime)
    claims = {c["name"]: c["resourceClaimTemplateName"] for c in pod["spec"]["resourceClaims"]}
    assert claims == {POD_CLAIM: domain["spec"]["channel"]["resourceClaimTemplate"]["name"]}
    assert [c["name"] for c in pod["spec"]["containers"][0]["resources"]["claims"]] == [POD_CLAIM]
    assert job["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "TrainingRuntime",
        "name": runtime["metadata"]["name"],
    }
    assert job["spec"]["trainer"]["numNodes"] == 18  # one NVLink domain by default
    objects = k8s_objects(recording("gke-a4x-nvl72"))
    queues = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects if o["kind"] == "LocalQueue"}
    assert (job["metadata"]["namespace"], job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]) in queues
    (pool_runtime,) = [
        o for o in objects if o["kind"] == "ClusterTrainingRuntime" and o["metadata"]["name"] == "torch-gb200"
    ]
    shared = runtime_pod(pool_runtime)  # the same pod as the deployed runtime, only the claim differs
    deployed = yaml.safe_dump(shared["spec"])
    at_deploy = sorted(set(re.findall(rf"image: (\S+)@{DEPLOY_DIGEST}", deployed)))
    assert at_deploy, "the deployed runtime pins an image at deploy"  # else this check proves nothing
    for image in at_deploy:  # offline the job's copy cannot know that digest: it says where to take it from
        assert f"# {image} runs by the digest its registry gave at deploy" in out
    unpinned = yaml.safe_load(deployed.replace(f"@{DEPLOY_DIGEST}", ""))
    assert {**pod["spec"], "resourceClaims": None} == {**unpinned, "resourceClaims": None}
    assert pod["metadata"] == shared["metadata"]


@pytest.mark.slow
def test_every_object_validates_against_its_crd_and_kubernetes(printed):
    _, docs, _, _ = printed
    for doc in docs:
        assert schema_errors(doc) == [], doc["kind"]
    errors, evaluated = cel_errors(docs[2])
    assert errors == [] and evaluated >= 2  # the TrainJob's name rules ran
    kubernetes_validate.validate(runtime_pod(docs[1]), "1.35.0", strict=True)


@pytest.mark.slow
def test_the_jobs_pod_is_admitted_in_its_namespace():
    code = subprocess.run(
        [sys.executable, "-m", "preview", *A4X, "--job", "j1", "--nodes", "4"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert code.returncode == 0, code.stderr
    _, runtime, job = [d for d in yaml.safe_load_all(code.stdout) if d]
    assert job["spec"]["trainer"]["numNodes"] == 4
    objects = k8s_objects(recording("gke-a4x-nvl72"))
    assert admission_failures(objects, runtime_pod(runtime), job["metadata"]["namespace"]) == []


def test_the_trainjob_crd_check_can_fail():
    bad = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "Llama_70B", "namespace": "x"},
        "spec": {"runtimeRef": {"name": "r"}, "trainer": {"numNodes": "2"}},
    }
    assert schema_errors(bad) and cel_errors(bad)[0]


def test_bad_arguments_are_refused_all_at_once(capsys):
    code, out, err = run(capsys, "--stack", "gke-a4x-nvl72", "--job", "Llama_70B", "--queue", "nope", "--nodes", "99")
    assert code == 2 and out == ""
    assert "error: --job: is not a TrainJob name" in err and "RFC 1035" in err
    assert "error: --queue: is not a queue with quota on pool gb200" in err and "allowed:  pretraining" in err
    assert "error: --nodes: pool gb200 has 36 nodes at most" in err and "allowed:  1..36" in err
    assert "Traceback" not in err


def test_a_job_named_like_the_pool_would_take_the_shared_domain(capsys):
    code, _, err = run(capsys, "--stack", "gke-a4x-nvl72", "--job", "gb200")
    assert code == 2 and "ComputeDomain gb200-imex is the domain the pool's jobs share" in err


def test_a_slurm_stack_shares_the_nodesets_domain(capsys):
    code, out, err = run(capsys, "--stack", "eks-p6e-gb200", "--job", "x")
    assert code == 2 and out == ""
    assert "gpu-cluster:scheduling.workload" in err and "slurmd pods" in err and "allowed:  kubeflow" in err


def test_a_pool_without_compute_domains_is_refused(capsys):
    code, _, err = run(capsys, "--stack", "gke-kueue", "--job", "x", "--pool", "h100")
    assert code == 2
    assert "error: --pool: does not use ComputeDomains" in err and "allowed:  none in this stack" in err
    code, _, err = run(capsys, "--stack", "gke-a4x-nvl72", "--job", "x", "--pool", "gb300")
    assert code == 2 and "error: --pool: is not a pool of the stack" in err and "allowed:  gb200" in err


def test_a_missing_or_invalid_stack_is_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, "--stack", "nope", "--job", "x")
    assert code == 2 and "no stack file Pulumi.nope.yaml" in err
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text((PROJECT_ROOT / "Pulumi.gke-a4x-nvl72.yaml").read_text().replace("maxNodes: 36", "maxNodes: -1"))
    code, _, err = run(capsys, "--stack", "bad", "--stack-file", str(bad), "--job", "x")
    assert code == 2 and "maxNodes" in err and "Traceback" not in err
