"""The LoginSet users submit from, rendered by real Helm with the pinned slurm chart 1.2.1 and checked against
Slinky's LoginSet CRD: never the chart's public LoadBalancer (ClusterIP by default, or an internal load balancer with
the stack's source ranges), sshd keys-only with the users' keys from sssd, root login only for operator keys, a
directory's sssd.conf by Secret reference, pinned images. Bad settings are refused with their exact message."""

from __future__ import annotations

import functools
import textwrap

import pytest

from preview.engine import Recording, run_program
from catalog.image_digests import DEPLOY_DIGEST
from render.slurm_login import INITCONF_IMAGE, OPERATOR_SET_SSHD
from tests.support.helm.render import RELEASE, kube_version, release_call, render
from tests.support.kube.crd_schemas import schema_errors
from tests.support.preview.recorded import one
from tests.support.slurm.configs import EKS_ZONES, GKE_NO_ACCOUNTING
from tests.support.spec.cases import errors_of
from tests.support.spec.edit import edits
from tests.support.spec.slurm_baseline import BASE

LOGIN = ("scheduling", "slurm", "access", "login")
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@example"
INTERNAL = {LOGIN + ("serviceType",): "InternalLoadBalancer", LOGIN + ("sourceRanges",): ["10.20.0.0/16"]}


@functools.cache
def _rendered(which: str) -> tuple[Recording, list[dict]]:
    config = {
        "gke": GKE_NO_ACCOUNTING,
        "gke-internal": edits(
            GKE_NO_ACCOUNTING,
            {**INTERNAL, LOGIN + ("operatorSshKeys",): [KEY], LOGIN + ("sssdConfSecret",): "corp-sssd"},
        ),
        "eks-internal": edits(EKS_ZONES, INTERNAL),
        "off": edits(GKE_NO_ACCOUNTING, {LOGIN + ("enabled",): False}),
    }[which]
    rec = run_program(config)
    release = one(rec, RELEASE, "slurm-slurm")
    return rec, render(release_call(release, kube_version(rec)))


def _loginset(which: str) -> dict:
    sets = [o for o in _rendered(which)[1] if o["kind"] == "LoginSet"]
    assert len(sets) == 1, [o["metadata"]["name"] for o in sets]
    return sets[0]


def test_the_default_loginset_is_cluster_ip_keys_only_and_valid_against_the_crd():
    login = _loginset("gke")
    assert login["metadata"]["name"] == "slurm-login-login"
    assert schema_errors(login) == []
    spec = login["spec"]
    assert spec["service"]["spec"]["type"] == "ClusterIP"  # the chart's default would be LoadBalancer
    assert "loadBalancerSourceRanges" not in spec["service"]["spec"]
    # the Alpine release over the chart's alpine:latest, by the digest resolved at deploy: it copies slurm.key
    assert spec["initconf"]["image"] == f"{INITCONF_IMAGE['repository']}@{DEPLOY_DIGEST}"
    assert spec["login"]["securityContext"] == {"privileged": False}
    sshd = spec["extraSshdConfig"].splitlines()
    assert {
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin no",
        "AuthorizedKeysCommand /usr/bin/sss_ssh_authorizedkeys %u",
        "AllowTcpForwarding no",
    } <= set(sshd)
    # sshd keeps the first value of a keyword: none of ours may be one the operator writes before them
    assert not {line.split()[0] for line in sshd} & set(OPERATOR_SET_SSHD)
    assert "rootSshAuthorizedKeys" not in spec
    # without a directory the chart's own files-only sssd.conf Secret is what the LoginSet reads
    sssd = [
        o for o in _rendered("gke")[1] if o["kind"] == "Secret" and o["metadata"]["name"] == spec["sssdConfRef"]["name"]
    ]
    assert len(sssd) == 1


@pytest.mark.parametrize(
    "which,annotations",
    [
        ("gke-internal", {"networking.gke.io/load-balancer-type": "Internal"}),
        (
            "eks-internal",
            {
                "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
                "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
            },
        ),
    ],
)
def test_an_internal_load_balancer_is_private_and_limited_to_the_source_ranges(which, annotations):
    login = _loginset(which)
    assert schema_errors(login) == []
    service = login["spec"]["service"]
    assert service["spec"] == {"type": "LoadBalancer", "loadBalancerSourceRanges": ["10.20.0.0/16"]}
    assert service["metadata"]["annotations"] == annotations


def test_operator_keys_allow_root_by_key_only_and_a_directory_secret_replaces_the_charts_sssd_conf():
    login = _loginset("gke-internal")
    assert login["spec"]["rootSshAuthorizedKeys"].strip() == KEY
    assert "PermitRootLogin prohibit-password" in login["spec"]["extraSshdConfig"].splitlines()
    assert login["spec"]["sssdConfRef"] == {"name": "corp-sssd", "key": "sssd.conf"}
    assert not [o for o in _rendered("gke-internal")[1] if o["kind"] == "Secret" and "sssd" in o["metadata"]["name"]]


def test_login_can_be_turned_off():
    assert not [o for o in _rendered("off")[1] if o["kind"] == "LoginSet"]


def test_no_rendered_service_of_the_slurm_release_is_public():
    for which in ("gke", "gke-internal", "eks-internal"):
        for obj in _rendered(which)[1]:
            if obj["kind"] == "Service":
                assert obj["spec"].get("type", "ClusterIP") == "ClusterIP", obj["metadata"]["name"]
            service = obj.get("spec", {}).get("service") if obj["kind"] in ("LoginSet", "RestApi") else None
            if service and service.get("spec", {}).get("type") == "LoadBalancer":
                assert service["spec"].get("loadBalancerSourceRanges") and service["metadata"]["annotations"], which


def _case(changes, expected, id):  # noqa: A002 - pytest's name
    return pytest.param(changes, [textwrap.dedent(e).strip("\n") for e in expected], id=id)


CASES = [
    _case(
        {LOGIN + ("sourceRanges",): ["10.0.0.0/16"]},
        [
            """
    error: gpu-cluster:scheduling.slurm.access.login.sourceRanges: source ranges apply only to a load balancer; a ClusterIP Service ignores them
      received: ["10.0.0.0/16"]
      allowed:  sourceRanges only with serviceType: InternalLoadBalancer
      fix:      remove sourceRanges, or set serviceType: InternalLoadBalancer
    """
        ],
        id="cluster-ip-with-ranges",
    ),
    _case(
        {LOGIN + ("serviceType",): "InternalLoadBalancer"},
        [
            """
    error: gpu-cluster:scheduling.slurm.access.login.sourceRanges: an internal load balancer without source ranges admits every address that routes to it (peered VPCs, VPN users)
      received: []
      allowed:  private CIDRs of /8 or narrower, e.g. 10.20.0.0/16
      fix:      list the ranges your users ssh from
    """
        ],
        id="internal-lb-without-ranges",
    ),
    _case(
        {**INTERNAL, LOGIN + ("sourceRanges",): ["8.8.8.0/24", "10.1.0.0/16x"]},
        [
            """
    error: gpu-cluster:scheduling.slurm.access.login.sourceRanges[0]: the login pods must not be reachable from public addresses
      received: '8.8.8.0/24'
      allowed:  private ranges (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7)
      fix:      list your VPC's or VPN's private ranges
    """,
            """
    error: gpu-cluster:scheduling.slurm.access.login.sourceRanges[1]: not a valid CIDR ('10.1.0.0/16x' does not appear to be an IPv4 or IPv6 network)
      received: '10.1.0.0/16x'
      allowed:  a private network such as 10.20.0.0/16
      fix:      write the network address with its prefix length
    """,
        ],
        id="public-and-broken-ranges",
    ),
    _case(
        {LOGIN + ("serviceType",): "LoadBalancer"},
        [
            """
    error: gpu-cluster:scheduling.slurm.access.login.serviceType: not one of the allowed values
      received: 'LoadBalancer'
      allowed:  ClusterIP, InternalLoadBalancer
      fix:      did you mean 'InternalLoadBalancer'?
    """
        ],
        id="public-load-balancer",
    ),
    _case(
        {LOGIN + ("operatorSshKeys",): [KEY, 'command="x" ssh-rsa AAAA']},
        [
            """
    error: gpu-cluster:scheduling.slurm.access.login.operatorSshKeys[1]: not one OpenSSH public key line
      received: 'command="x" ssh-rsa AAAA'
      allowed:  `ssh-ed25519 AAAA… comment` (ed25519, rsa, ecdsa, sk keys; no options)
      fix:      paste the single line of the operator's .pub file
    """
        ],
        id="key-with-options",
    ),
    _case(
        {LOGIN + ("sssdConfSecret",): "My_Secret"},
        [
            """
    error: gpu-cluster:scheduling.slurm.access.login.sssdConfSecret: not a Kubernetes Secret name
      received: 'My_Secret'
      allowed:  lowercase letters, digits, '-' and '.', starting and ending alphanumeric
      fix:      name the Secret in namespace slurm that holds sssd.conf
    """
        ],
        id="bad-secret-name",
    ),
]


@pytest.mark.parametrize("changes,expected", CASES)
def test_bad_login_setting_is_refused_with_its_exact_message(changes, expected):
    assert errors_of(edits(BASE, changes)) == expected
