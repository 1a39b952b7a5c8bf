"""Pod Security ``baseline`` written as ValidatingAdmissionPolicy CEL, with room for named exceptions. Pure: no Pulumi.

Why a second copy of baseline: Pod Security admission cannot be relaxed for one container or one host path (every
validating admission step must allow a pod), so a team namespace whose jobs use a GKE GPUDirect fabric carries the
Pod Security label ``enforce: privileged`` and this policy enforces baseline instead, minus exactly what the fabric
needs (``render/admission.py``). The checks follow the Kubernetes Pod Security Standards, baseline profile
(kubernetes.io/docs/concepts/security/pod-security-standards): host namespaces, privileged, capabilities, hostPath,
host ports, AppArmor, SELinux, /proc mount, seccomp, sysctls, Windows HostProcess.

The expressions use only standard CEL macros and ``has()`` (no optional types), so the suite can evaluate them with
cel-python; containers and init containers share one list (``variables.containers``), ephemeral containers (another
type) get their own checks.
"""

from __future__ import annotations

from typing import Any

from stacks.plan.host_access import BASELINE_CAPABILITIES  # one list for the CEL and the policy pack

SAFE_SYSCTLS = (
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
)
SELINUX_TYPES = ("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def cel_list(items: Any) -> str:
    """A CEL list literal of strings (single-quoted; our values never contain quotes or backslashes)."""
    items = list(items)
    for item in items:
        if "'" in item or "\\" in item:
            raise ValueError(f"cannot quote {item!r} in CEL")
    return "[" + ", ".join(f"'{i}'" for i in items) + "]"


def _sc(c: str, field: str) -> str:
    """``<c>.securityContext.<field>`` is set."""
    return f"has({c}.securityContext) && has({c}.securityContext.{field})"


def container_checks(c: str, exempt_caps: str) -> list[tuple[str, str]]:
    """(expression over one container ``c``, what it refuses). ``exempt_caps``: a CEL boolean over ``c`` saying the
    container may add capabilities beyond baseline (the fabric sidecar); ``false`` for none."""
    return [
        (f"!({_sc(c, 'privileged')} && {c}.securityContext.privileged)", "privileged containers"),
        (
            f"!({_sc(c, 'capabilities')} && has({c}.securityContext.capabilities.add)) || {exempt_caps} || "
            f"{c}.securityContext.capabilities.add.all(cap, cap in {cel_list(BASELINE_CAPABILITIES)})",
            "capabilities beyond baseline",
        ),
        (f"!has({c}.ports) || {c}.ports.all(p, !has(p.hostPort) || p.hostPort == 0)", "host ports"),
        (f"!({_sc(c, 'procMount')}) || {c}.securityContext.procMount == 'Default'", "an unmasked /proc mount"),
        (
            f"!({_sc(c, 'seccompProfile')}) || {c}.securityContext.seccompProfile.type != 'Unconfined'",
            "seccomp Unconfined",
        ),
        (
            f"!({_sc(c, 'appArmorProfile')}) || {c}.securityContext.appArmorProfile.type != 'Unconfined'",
            "AppArmor Unconfined",
        ),
        (
            f"!({_sc(c, 'seLinuxOptions')}) || ((!has({c}.securityContext.seLinuxOptions.type) || "
            f"{c}.securityContext.seLinuxOptions.type in {cel_list(SELINUX_TYPES)}) && "
            f"!has({c}.securityContext.seLinuxOptions.user) && !has({c}.securityContext.seLinuxOptions.role))",
            "custom SELinux options",
        ),
        (
            f"!({_sc(c, 'windowsOptions')} && has({c}.securityContext.windowsOptions.hostProcess) && "
            f"{c}.securityContext.windowsOptions.hostProcess)",
            "Windows HostProcess",
        ),
    ]


def pod_checks() -> list[tuple[str, str]]:
    """Pod-level baseline checks (expression, what it refuses)."""
    psc = "object.spec.securityContext"
    return [
        (
            "!(has(object.spec.hostNetwork) && object.spec.hostNetwork) && "
            "!(has(object.spec.hostPID) && object.spec.hostPID) && !(has(object.spec.hostIPC) && object.spec.hostIPC)",
            "host namespaces (hostNetwork, hostPID, hostIPC)",
        ),
        (
            f"!(has({psc}) && has({psc}.seccompProfile)) || {psc}.seccompProfile.type != 'Unconfined'",
            "seccomp Unconfined",
        ),
        (
            f"!(has({psc}) && has({psc}.appArmorProfile)) || {psc}.appArmorProfile.type != 'Unconfined'",
            "AppArmor Unconfined",
        ),
        (
            f"!(has({psc}) && has({psc}.seLinuxOptions)) || ((!has({psc}.seLinuxOptions.type) || "
            f"{psc}.seLinuxOptions.type in {cel_list(SELINUX_TYPES)}) && !has({psc}.seLinuxOptions.user) && "
            f"!has({psc}.seLinuxOptions.role))",
            "custom SELinux options",
        ),
        (
            f"!(has({psc}) && has({psc}.sysctls)) || {psc}.sysctls.all(s, s.name in {cel_list(SAFE_SYSCTLS)})",
            "unsafe sysctls",
        ),
        (
            f"!(has({psc}) && has({psc}.windowsOptions) && has({psc}.windowsOptions.hostProcess) && "
            f"{psc}.windowsOptions.hostProcess)",
            "Windows HostProcess",
        ),
        (
            "!has(object.metadata.annotations) || object.metadata.annotations.all(k, "
            f"!k.startsWith('{APPARMOR_ANNOTATION}') || object.metadata.annotations[k] == 'runtime/default' || "
            "object.metadata.annotations[k].startsWith('localhost/'))",
            "AppArmor unconfined (annotation)",
        ),
    ]


def validations(exempt_caps: str) -> list[dict[str, str]]:
    """Every baseline check but hostPath as a ValidatingAdmissionPolicy validation (expression + message);
    ``exempt_caps`` as in ``container_checks``. The caller adds its own hostPath rule."""
    out = [
        {"expression": e, "message": f"Pod Security baseline (enforced by gpu-cluster): refuses {what}"}
        for e, what in pod_checks()
    ]
    for expr, what in container_checks("c", exempt_caps):
        out.append(
            {
                "expression": f"variables.containers.all(c, {expr})",
                "message": f"Pod Security baseline (enforced by gpu-cluster): refuses {what}",
            }
        )
    for expr, what in container_checks("c", "false"):
        out.append(
            {
                "expression": f"variables.ephemeral.all(c, {expr})",
                "message": f"Pod Security baseline (enforced by gpu-cluster): refuses {what} in ephemeral containers",
            }
        )
    return out


CONTAINER_VARIABLES = [
    {
        "name": "containers",
        "expression": "object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])",
    },
    {"name": "ephemeral", "expression": "has(object.spec.ephemeralContainers) ? object.spec.ephemeralContainers : []"},
]
