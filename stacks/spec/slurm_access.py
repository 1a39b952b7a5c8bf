"""How people reach a Slurm cluster without its keys (``gpu-cluster:scheduling.slurm.access``): a Slinky LoginSet
(sshd + sackd + sssd; users log in with SSH keys from the directory sssd reads) and short-lived per-user JWTs for
slurmrestd. Cross-field rules live in ``stacks/validate/slurm_access.py``."""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from stacks.spec.model_base import SpecModel


class LoginServiceType(str, Enum):
    CLUSTER_IP = "ClusterIP"
    INTERNAL_LOAD_BALANCER = "InternalLoadBalancer"


class SlurmLogin(SpecModel):
    enabled: bool = Field(
        True,
        description=(
            "Run a LoginSet (`slurm-login-login`): sshd, sackd (submits with auth/slurm; users never see "
            "`slurm.key`) and sssd. Users `ssh` in and use `sbatch`/`srun`/`squeue`/`scontrol token`. Default true."
        ),
    )
    replicas: int = Field(1, ge=1, le=16, description="Login pods. Default 1.")
    service_type: LoginServiceType = Field(
        LoginServiceType.CLUSTER_IP,
        description=(
            "`ClusterIP` (default; reach it with `kubectl port-forward` or from inside the VPC through your own "
            "proxy) or `InternalLoadBalancer` (a load balancer with a private address only; needs `sourceRanges`). "
            "Never a public load balancer (the chart's default)."
        ),
    )
    source_ranges: list[str] = Field(
        default_factory=list,
        description=(
            "With `InternalLoadBalancer`: the private CIDRs that may reach port 22 (`loadBalancerSourceRanges`), each "
            "/8 or narrower. Required there, refused with `ClusterIP`."
        ),
    )
    sssd_conf_secret: str | None = Field(
        None,
        description=(
            "Name of a Secret in namespace `slurm` (key `sssd.conf`) with your directory's sssd configuration (LDAP, "
            "AD or an IdP): the users who may log in, their UIDs and their SSH public keys (sshd asks "
            "`sss_ssh_authorizedkeys`). You create it; gpu-cluster never holds the bind credentials. Omitted: the "
            "chart's files-only sssd.conf, so only `operatorSshKeys` can log in."
        ),
    )
    operator_ssh_keys: list[str] = Field(
        default_factory=list,
        description=(
            "SSH public keys (`ssh-ed25519 AAAA… comment`) allowed to log in as root on the login pods, for operators. "
            "Root there can read `slurm.key`: give it to cluster operators only. Default none (root login off)."
        ),
    )


class SlurmTokens(SpecModel):
    max_lifespan_minutes: int = Field(
        60,
        ge=5,
        le=1440,
        description=(
            "Longest lifetime a user may ask `scontrol token lifespan=…` for (auth/jwt `max_token_lifespan`); the "
            "JWT authenticates that user, and only that user, to slurmrestd. Default 60."
        ),
    )


class SlurmAccess(SpecModel):
    login: SlurmLogin = Field(default_factory=SlurmLogin, description="The LoginSet users submit from.")
    tokens: SlurmTokens = Field(default_factory=SlurmTokens, description="Per-user JWTs for slurmrestd.")
