"""LoginPlan -> the slurm chart's ``loginsets`` / ``sssd`` values (chart 1.2.1). Pure: no Pulumi.

Users reach Slurm through the login pods (sshd, sackd, sssd) instead of ``kubectl exec`` into the controller, which
would hand them ``slurm.key`` and the JWT key. The chart defaults the login Service to a ``LoadBalancer`` (public on
both clouds): it is always ``ClusterIP`` here, or a load balancer with only a private address and the source ranges
the stack lists.

sshd: Slinky's operator writes ``sshd_config`` as ``Include /etc/ssh/sshd_config.d/*.conf``, ``UsePAM yes``,
``X11Forwarding yes``, ``Subsystem sftp internal-sftp``, then ``extraSshdConfig`` (internal/builder/loginbuilder/
login_config.go, v1.2.1). sshd takes the FIRST value of a keyword, so the lines below must not name those four (a
test checks it): X11 forwarding therefore stays as Slinky sets it.
"""

from __future__ import annotations

from typing import Any

from catalog import Cloud
from stacks.plan.slurm_login import LoginPlan

LOGINSET = "login"
"""The LoginSet's key: the chart names it ``slurm-login-login`` (``<release>-login-<key>``)."""
SSH_PORT = 22
SSSD_CONF_KEY = "sssd.conf"
INITCONF_IMAGE = {"repository": "docker.io/library/alpine", "tag": "3.22.2"}
"""The login pod's initconf container: the chart defaults it to ``alpine:latest`` (a moving tag)."""
OPERATOR_SET_SSHD = ("Include", "UsePAM", "X11Forwarding", "Subsystem")
"""Keywords Slinky's operator writes before ``extraSshdConfig`` (first value wins in sshd)."""
INTERNAL_LB_ANNOTATIONS = {
    Cloud.GCP: {"networking.gke.io/load-balancer-type": "Internal"},
    # the AWS Load Balancer Controller reads the scheme; the in-tree controller the ``internal`` flag
    Cloud.AWS: {
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
    },
}


def sshd_lines(plan: LoginPlan) -> list[str]:
    """Keys only (no passwords or keyboard-interactive), users' keys from the directory through sssd, root only
    with an operator key, no forwarding that would turn the login pod into a tunnel into the cluster network."""
    return [
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin " + ("prohibit-password" if plan.operator_ssh_keys else "no"),
        "AuthorizedKeysCommand /usr/bin/sss_ssh_authorizedkeys %u",
        "AuthorizedKeysCommandUser nobody",
        "AllowTcpForwarding no",
        "AllowStreamLocalForwarding no",
        "GatewayPorts no",
        "PermitTunnel no",
    ]


def service_values(plan: LoginPlan) -> dict[str, Any]:
    if not plan.internal_load_balancer:
        return {"spec": {"type": "ClusterIP"}}
    return {
        "metadata": {"annotations": dict(INTERNAL_LB_ANNOTATIONS[plan.cloud])},
        "spec": {"type": "LoadBalancer", "loadBalancerSourceRanges": list(plan.source_ranges)},
    }


def login_values(plan: LoginPlan | None) -> dict[str, Any]:
    """The ``loginsets`` map and, with a directory, ``sssd.secretRef`` (merged into the chart's values)."""
    if plan is None:
        return {"loginsets": {}}
    loginset: dict[str, Any] = {
        "enabled": True,
        "replicas": plan.replicas,
        "login": {
            "securityContext": {"privileged": False},
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "4Gi"}},
        },
        "initconf": {"image": dict(INITCONF_IMAGE)},
        "extraSshdConfig": "\n".join(sshd_lines(plan)),
        "service": service_values(plan),
    }
    if plan.operator_ssh_keys:
        loginset["rootSshAuthorizedKeys"] = "\n".join(plan.operator_ssh_keys)
    out: dict[str, Any] = {"loginsets": {LOGINSET: loginset}}
    if plan.sssd_conf_secret:
        out["sssd"] = {"secretRef": {"name": plan.sssd_conf_secret, "key": SSSD_CONF_KEY}}
    return out
