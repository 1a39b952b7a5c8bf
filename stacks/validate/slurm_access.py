"""Rules of ``scheduling.slurm.access`` (the LoginSet and slurmrestd tokens) that need several fields at once.

The login Service is never public: an internal load balancer must say which private ranges may reach it, and a
range that is public or wider than a /8 is refused (the same width limit as ``authorizedNetworks``).
"""

from __future__ import annotations

import ipaddress
import re

from stacks.spec.slurm_access import LoginServiceType, SlurmAccess
from stacks.validate.cluster import AUTHORIZED_MIN_PREFIX
from stacks.validate.issues import Issues

SSH_KEY = re.compile(
    r"(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|"
    r"sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]+={0,3}( [^\n\r]*)?"
)
"""One OpenSSH public key line: type, base64 body, optional comment (no options, no newline)."""
K8S_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


def check_slurm_access(slurm: Issues, access: SlurmAccess) -> None:
    login = slurm.at("access", "login")
    spec = access.login
    ranges = login.at("sourceRanges")
    if spec.service_type == LoginServiceType.CLUSTER_IP and spec.source_ranges:
        login.error(
            "sourceRanges",
            "source ranges apply only to a load balancer; a ClusterIP Service ignores them",
            spec.source_ranges,
            allowed="sourceRanges only with serviceType: InternalLoadBalancer",
            fix="remove sourceRanges, or set serviceType: InternalLoadBalancer",
        )
    if spec.service_type == LoginServiceType.INTERNAL_LOAD_BALANCER and not spec.source_ranges:
        login.error(
            "sourceRanges",
            "an internal load balancer without source ranges admits every address that "
            "routes to it (peered VPCs, VPN users)",
            [],
            allowed="private CIDRs of /8 or narrower, e.g. 10.20.0.0/16",
            fix="list the ranges your users ssh from",
        )
    for i, cidr in enumerate(spec.source_ranges):
        try:
            net = ipaddress.ip_network(cidr, strict=True)
        except ValueError as exc:
            ranges.error(
                i,
                f"not a valid CIDR ({exc})",
                cidr,
                allowed="a private network such as 10.20.0.0/16",
                fix="write the network address with its prefix length",
            )
            continue
        if not net.is_private:
            ranges.error(
                i,
                "the login pods must not be reachable from public addresses",
                cidr,
                allowed="private ranges (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7)",
                fix="list your VPC's or VPN's private ranges",
            )
        elif net.version == 4 and net.prefixlen < AUTHORIZED_MIN_PREFIX:
            ranges.error(
                i,
                f"{net.num_addresses:,} addresses may reach the login pods",
                cidr,
                allowed=f"IPv4 networks of /{AUTHORIZED_MIN_PREFIX} or narrower",
                fix="list the ranges your users ssh from",
            )
    keys = login.at("operatorSshKeys")
    for i, key in enumerate(spec.operator_ssh_keys):
        if not SSH_KEY.fullmatch(key.strip()):
            keys.error(
                i,
                "not one OpenSSH public key line",
                key[:40] + ("…" if len(key) > 40 else ""),
                allowed="`ssh-ed25519 AAAA… comment` (ed25519, rsa, ecdsa, sk keys; no options)",
                fix="paste the single line of the operator's .pub file",
            )
    if spec.sssd_conf_secret is not None and not K8S_NAME.fullmatch(spec.sssd_conf_secret):
        login.error(
            "sssdConfSecret",
            "not a Kubernetes Secret name",
            spec.sssd_conf_secret,
            allowed="lowercase letters, digits, '-' and '.', starting and ending alphanumeric",
            fix="name the Secret in namespace slurm that holds sssd.conf",
        )
