"""The LoginSet of a Slurm stack (``scheduling.slurm.access.login``): derived facts, no Pulumi."""

from __future__ import annotations

from dataclasses import dataclass

from catalog import Cloud
from stacks.spec.slurm_access import LoginServiceType, SlurmLogin


@dataclass(frozen=True)
class LoginPlan:
    cloud: Cloud
    replicas: int
    internal_load_balancer: bool
    source_ranges: tuple[str, ...]
    sssd_conf_secret: str | None
    operator_ssh_keys: tuple[str, ...]


def plan_login(login: SlurmLogin, cloud: Cloud) -> LoginPlan | None:
    if not login.enabled:
        return None
    return LoginPlan(
        cloud=cloud,
        replicas=login.replicas,
        internal_load_balancer=login.service_type == LoginServiceType.INTERNAL_LOAD_BALANCER,
        source_ranges=tuple(login.source_ranges),
        sssd_conf_secret=login.sssd_conf_secret,
        operator_ssh_keys=tuple(k.strip() for k in login.operator_ssh_keys),
    )
