"""cross-layer-serving-weights-identity on the examples as the program creates them: both pass; taking away any part
of the identity a vLLM pod reads its bucket with (the Workload Identity binding, the bucket grant, the Pod Identity
association, the read policy) is refused, naming what is missing."""

from __future__ import annotations

import json

import pytest

from tests.support.policy.harness import Pack, example, with_props, wire

RULE = "cross-layer-serving-weights-identity"


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def _ours(diags):
    return [d for d in diags if d[0] == RULE]


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving"])
def test_the_serving_examples_pods_can_read_their_weights(pack, stack):
    assert _ours(pack.stack(example(stack))) == []


@pytest.mark.parametrize(
    "stack, type_, name, missing",
    [
        (
            "gke-serving",
            "gcp:storage/bucketIAMMember:BucketIAMMember",
            "serving-identity-chat-reader",
            "has no read role on bucket ml-platform-prod-models",
        ),
        (
            "gke-serving",
            "gcp:serviceaccount/iAMMember:IAMMember",
            "serving-identity-chat-workload-identity",
            "no roles/iam.workloadIdentityUser binding lets serving/chat-vllm",
        ),
        (
            "eks-serving",
            "aws:eks/podIdentityAssociation:PodIdentityAssociation",
            "serving-identity-support-bot-pod-identity",
            "no EKS Pod Identity association for serving/support-bot-vllm",
        ),
        (
            "eks-serving",
            "aws:iam/rolePolicy:RolePolicy",
            "serving-identity-support-bot-policy",
            "may not s3:GetObject arn:aws:s3:::llm-serving-models-us-east-1/llama-3.1-8b-instruct-fp8/config.json",
        ),
    ],
)
def test_a_model_bucket_without_an_identity_is_refused(pack, stack, type_, name, missing):
    resources = [r for r in example(stack) if not (r.type == type_ and r.name == name)]
    found = _ours(pack.stack(resources))
    assert found and missing in found[0][2], found


def test_a_grant_on_another_prefix_is_not_enough(pack):
    out = []
    for r in example("eks-serving"):
        if r.name == "serving-identity-support-bot-policy":
            props = wire(r)
            policy = json.loads(props["policy"])
            policy["Statement"][0]["Resource"] = "arn:aws:s3:::llm-serving-models-us-east-1/other-model/*"
            props["policy"] = json.dumps(policy)
            r = with_props(r, props)
        out.append(r)
    assert _ours(pack.stack(out))
