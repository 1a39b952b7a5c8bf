"""What the clouds answer the program offline: the recording engine's Pulumi mocks (``preview/engine.py``) echo
inputs and invent the few computed outputs the program reads (ids, ARNs, endpoints, tokens, random bytes, the
outputs of referenced stacks, the data sources' answers), deterministic so tests can look for them."""

from __future__ import annotations

import base64
import hashlib
import threading
from typing import Any

import pulumi

from catalog.image_digests import DEPLOY_DIGEST
from stacks.spec.fleet import KUBECONFIG_OUTPUT

FAKE_ACCOUNT = "123456789012"
FAKE_PROJECT_NUMBER = "123456789012"
"""What ``gcp.organizations.get_project`` answers offline (the GKE service agent's address embeds it)."""
FAKE_DEPLOYER_ROLE = f"arn:aws:iam::{FAKE_ACCOUNT}:role/offline-deployer"
"""The IAM role the offline preview pretends runs ``pulumi up`` (EKS admin access entry by default)."""
FAKE_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCm9mZmxpbmUtcHJldmlldwotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="


def fake_random_bytes(name: str, length: int) -> bytes:
    """Deterministic stand-in for a ``random`` provider value, so tests can look for it in recorded output."""
    out = b""
    while len(out) < length:
        out += hashlib.sha256(f"gpu-cluster-offline:{name}:{len(out)}".encode()).digest()
    return out[:length]


OFFLINE_TOKEN_PREFIX = "gpu-cluster-offline-token-canary-"
SECRET_STACK_OUTPUTS = frozenset({KUBECONFIG_OUTPUT, "kubeconfig"})
"""Outputs a stack exports as Pulumi secrets (what a StackReference marks secret)."""


def offline_token(secret_name: str) -> str:
    """Stand-in for a ServiceAccount token: a canary tests look for in every output (it must never be shown)."""
    return OFFLINE_TOKEN_PREFIX + hashlib.sha256(secret_name.encode()).hexdigest()[:16]


class RecordingMocks(pulumi.runtime.Mocks):
    """Echo inputs as outputs and invent the few computed outputs the program reads (ids, ARNs, endpoints)."""

    def __init__(self, stack_references: dict[str, dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.stack_references = stack_references or {}
        """Fully qualified stack name -> its outputs, for ``pulumi.StackReference`` (a fleet manager's workers,
        previewed first from their stack files: ``preview/fleet.py``)."""
        self.last = threading.local()
        """Per registering thread: the transforms of the resource being registered (read by the monitor)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.last.transforms = list(args.transforms)
        out = dict(args.inputs)
        name, typ = args.name, args.typ
        if typ == "gcp:serviceaccount/account:Account":
            out["email"] = (
                f"{args.inputs.get('accountId', name)}@{args.inputs.get('project', 'project')}.iam.gserviceaccount.com"
            )
        elif typ == "gcp:container/cluster:Cluster":
            out.update(
                endpoint="203.0.113.10",
                masterAuth={
                    "clusterCaCertificate": FAKE_CA,
                    "clientCertificateConfig": {"issueClientCertificate": False},
                },
            )
        elif typ == "aws:eks/cluster:Cluster":
            out.update(
                endpoint=f"https://{name}.gr7.offline.eks.amazonaws.com",
                certificateAuthority={"data": FAKE_CA},
                arn=f"arn:aws:eks:offline:{FAKE_ACCOUNT}:cluster/{args.inputs.get('name', name)}",
            )
            out["vpcConfig"] = {
                **args.inputs.get("vpcConfig", {}),
                "clusterSecurityGroupId": "sg-0offline0cluster0",
                "vpcId": "vpc-0offline00000000",
            }
        elif typ == "random:index/randomBytes:RandomBytes":  # the real engine marks these outputs secret
            raw = fake_random_bytes(name, int(args.inputs.get("length", 32)))
            out.update(base64=base64.b64encode(raw).decode(), hex=raw.hex())
        elif typ == "random:index/randomPassword:RandomPassword":
            out["result"] = fake_random_bytes(name, int(args.inputs.get("length", 16))).hex()[
                : int(args.inputs.get("length", 16))
            ]
        elif typ == "kubernetes:core/v1:Secret" and args.inputs.get("type") == "kubernetes.io/service-account-token":
            # the token controller fills these in; the provider waits for them (pulumi-kubernetes#2048)
            token = offline_token(args.inputs.get("metadata", {}).get("name", name))
            out["data"] = {"token": base64.b64encode(token.encode()).decode(), "ca.crt": FAKE_CA}
        elif typ == "pulumi:pulumi:StackReference":
            ref = args.inputs.get("name", name)
            if ref not in self.stack_references:
                raise LookupError(f"stack reference {ref}: no outputs recorded for it (preview the worker first)")
            out.update(outputs=self.stack_references[ref], secretOutputNames=sorted(SECRET_STACK_OUTPUTS))
        elif typ.startswith("aws:") and typ != "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
            out.setdefault("arn", f"arn:aws:offline:{FAKE_ACCOUNT}:{typ.split(':')[-1].lower()}/{name}")
        if typ == "aws:ec2/launchTemplate:LaunchTemplate":
            out["latestVersion"] = 1
        elif typ == "aws:eks/nodeGroup:NodeGroup":  # EKS names the group's Auto Scaling group eks-<group>-<uuid>
            out["resources"] = [
                {"autoscalingGroups": [{"name": f"eks-{name}-offline"}], "remoteAccessSecurityGroupId": ""}
            ]
        if typ.startswith(("gcp:", "aws:")):
            out.setdefault("name", name)  # provider auto-naming does not run under mocks
        return f"{name}-id", out

    def call(self, args: pulumi.runtime.MockCallArgs) -> Any:
        if args.token == "gcp:container/getCluster:getCluster":
            return {
                "name": args.args.get("name"),
                "location": args.args.get("location"),
                "endpoint": "203.0.113.20",
                "masterAuths": [{"clusterCaCertificate": FAKE_CA}],
            }
        if args.token == "gcp:organizations/getProject:getProject":
            return {"projectId": args.args.get("projectId"), "number": FAKE_PROJECT_NUMBER}
        if args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {
                "accountId": FAKE_ACCOUNT,
                "id": FAKE_ACCOUNT,
                "userId": "AROAOFFLINE:offline",
                "arn": f"arn:aws:sts::{FAKE_ACCOUNT}:assumed-role/offline-deployer/offline",
            }
        if args.token == "aws:iam/getSessionContext:getSessionContext":
            return {
                "arn": args.args.get("arn"),
                "issuerArn": FAKE_DEPLOYER_ROLE,
                "issuerId": "AROAOFFLINE",
                "issuerName": "offline-deployer",
                "sessionName": "offline",
            }
        if args.token == "aws:eks/getCluster:getCluster":
            return {
                "name": args.args.get("name"),
                "endpoint": "https://existing.offline.eks.amazonaws.com",
                "arn": f"arn:aws:eks:offline:{FAKE_ACCOUNT}:cluster/{args.args.get('name')}",
                "certificateAuthorities": [{"data": FAKE_CA}],
                "vpcConfig": {"clusterSecurityGroupId": "sg-0offline0existing", "vpcId": "vpc-0offline0existing"},
            }
        if args.token == "docker:index/getRegistryImage:getRegistryImage":
            # no registry offline: stand in for the digest without inventing one (catalog/image_digests.py)
            return {"name": args.args.get("name"), "sha256Digest": DEPLOY_DIGEST, "id": args.args.get("name")}
        if args.token == "aws:ecr/getAuthorizationToken:getAuthorizationToken":
            return {
                "userName": "AWS",
                "password": "offline-ecr-token",
                "authorizationToken": "offline-ecr-token",
                "proxyEndpoint": f"https://{args.args.get('registryId')}.dkr.ecr.offline.amazonaws.com",
                "expiresAt": "1970-01-01T00:00:00Z",
                "id": args.args.get("registryId"),
            }
        return {}
