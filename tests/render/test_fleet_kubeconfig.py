"""The worker's kubeconfig output against Kueue 0.19's MultiKueue kubeconfig rules (ported as data from
``validateKubeconfig``/``validateRestConfig``), and parsed by the official Kubernetes Python client's loader (a real
peer): a static token, inline CA data, an https server whose host is an IP or a DNS name, nothing else."""

from __future__ import annotations

import base64
import copy

import os

import pytest
import yaml

try:  # pinned in requirements-dev.txt; an environment built before the pin lacks it: skip there, fail in CI
    from kubernetes.client import Configuration
    from kubernetes.config.kube_config import KubeConfigLoader
except ImportError:  # pragma: no cover - depends on the environment
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(
        "the Kubernetes Python client is not installed: bash scripts/venv.sh requirements-dev.txt",
        allow_module_level=True,
    )

from preview.mocks.cloud import FAKE_CA, offline_token
from render.fleet_worker import check_kubeconfig, token_secret_name, worker_kubeconfig
from tests.support.helm.examples import recording


def loaded(text: str) -> Configuration:
    config = Configuration()
    KubeConfigLoader(config_dict=yaml.safe_load(text)).load_and_set(config)
    return config


@pytest.mark.parametrize(
    "worker,host",
    [("fleet-gke", "https://203.0.113.10"), ("fleet-eks", "https://fleet-eks.gr7.offline.eks.amazonaws.com")],
)
def test_worker_kubeconfig_output_is_what_multikueue_accepts(worker, host):
    text = recording(worker).outputs["fleetKubeconfig"]
    assert check_kubeconfig(text) == []
    doc = yaml.safe_load(text)
    (user,) = doc["users"]
    assert set(user["user"]) == {"token"}  # no exec plugin (gke-gcloud-auth-plugin, aws eks get-token), no files
    assert user["user"]["token"] == offline_token(token_secret_name(1))  # the token Secret's token, decoded
    config = loaded(text)
    assert config.host == host
    assert config.api_key == {"BearerToken": f"Bearer {offline_token(token_secret_name(1))}"}
    with open(config.ssl_ca_cert, "rb") as ca:  # the loader wrote the inline CA data to a file it verifies with
        assert ca.read() == base64.b64decode(FAKE_CA)
    assert config.verify_ssl is True


def test_kubeconfig_output_is_a_pulumi_secret():
    from preview.mocks.cloud import SECRET_STACK_OUTPUTS

    assert "fleetKubeconfig" in SECRET_STACK_OUTPUTS
    text = recording("fleet-gke").outputs["fleetKubeconfig"]
    assert "fleetKubeconfig" not in str(recording("fleet-gke").resources)  # exported, never a resource input
    assert text  # resolved offline


BASE = yaml.safe_load(worker_kubeconfig("w", "203.0.113.10", FAKE_CA, "t0k3n"))
REFUSED = [  # (change to the base kubeconfig, Kueue's reason), as in multikueuecluster.go v0.19.2
    (
        {
            "users": [
                {
                    "name": "u",
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "gke-gcloud-auth-plugin",
                        }
                    },
                }
            ]
        },
        "exec plugins",
    ),
    (
        {
            "users": [
                {
                    "name": "u",
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": ["eks", "get-token"],
                        }
                    },
                }
            ]
        },
        "exec plugins",
    ),
    ({"users": [{"name": "u", "user": {"auth-provider": {"name": "gcp"}}}]}, "auth providers"),
    ({"users": [{"name": "u", "user": {"tokenFile": "/var/run/token"}}]}, "token files"),
    ({"users": [{"name": "u", "user": {"username": "admin", "password": "x"}}]}, "basic auth"),
    (
        {"clusters": [{"name": "c", "cluster": {"server": "https://203.0.113.10", "insecure-skip-tls-verify": True}}]},
        "insecure TLS",
    ),
    (
        {
            "clusters": [
                {"name": "c", "cluster": {"server": "https://203.0.113.10", "certificate-authority": "/ca.crt"}}
            ]
        },
        "CA file paths",
    ),
    (
        {
            "clusters": [
                {"name": "c", "cluster": {"server": "https://bad_host!", "certificate-authority-data": FAKE_CA}}
            ]
        },
        "neither an IP nor a DNS-1123 name",
    ),
    ({"clusters": [{"name": "c", "cluster": {"certificate-authority-data": FAKE_CA}}]}, "server URL is required"),
]
ACCEPTED = [
    "https://203.0.113.10",
    "https://203.0.113.10:443",
    "https://ABC.gr7.us-east-1.eks.amazonaws.com",
    "https://[2001:db8::1]:6443",
]


@pytest.mark.parametrize("change,reason", REFUSED, ids=[r for _, r in REFUSED])
def test_kueue_refuses(change, reason):
    doc = {**copy.deepcopy(BASE), **change}
    problems = check_kubeconfig(yaml.safe_dump(doc))
    assert len(problems) == 1 and reason in problems[0], problems


@pytest.mark.parametrize("server", ACCEPTED)
def test_kueue_accepts_hosts(server):
    doc = copy.deepcopy(BASE)
    doc["clusters"][0]["cluster"]["server"] = server
    assert check_kubeconfig(yaml.safe_dump(doc)) == []
