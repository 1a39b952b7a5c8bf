"""cross-layer-slurm-fairshare-accounting: a Slurm cluster whose slurm.conf weighs fair-share or age in job priority
has accounting (slurmdbd) on, read from the slurm chart's Helm release values."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.resources import HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import controller_conf, is_slurm_release
from policies.values import as_bool, as_int, dig

ID = "cross-layer-slurm-fairshare-accounting"
SLURMDBD = "accounting_storage/slurmdbd"
NONE = "accounting_storage/none"
WEIGHTS = ("PriorityWeightFairshare", "PriorityWeightAge")
"""Priority factors slurmctld computes from slurmdbd's usage records (it ignores them, with an error, without)."""


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    for r in (r for r in resources if is_slurm_release(r)):
        where, conf = controller_conf(r)
        weights = [(w, conf[w.lower()]) for w in WEIGHTS if _positive(conf.get(w.lower()))]
        if not weights:
            continue
        storage = conf.get("accountingstoragetype")
        enabled = as_bool(dig(r.props, "values", "accounting", "enabled"))
        if storage is not None:
            source = f"{where} sets AccountingStorageType={storage}"
        elif enabled is True:
            continue
        elif enabled is False or enabled is None:
            storage = NONE
            source = (
                f"accounting.enabled is {'false' if enabled is False else 'unset'}, so AccountingStorageType={NONE}"
            )
        else:
            continue  # unknown until deploy
        if storage == SLURMDBD:
            continue
        cluster = dig(r.props, "values", "clusterName")
        name = cluster if isinstance(cluster, str) and cluster else r.name
        release: str = r.props["name"] if isinstance(r.props.get("name"), str) else r.name
        shown = " and ".join(f"{w}={v}" for w, v in weights)
        yield Finding(
            f"Slurm cluster '{name}'",
            "priority weights are set but accounting is off, so slurmctld ignores "
            f"{'this weight' if len(weights) == 1 else 'these weights'} and never orders jobs by "
            + " or ".join("fair share" if w == WEIGHTS[0] else "age" for w, _ in weights),
            observed=f"slurm.conf sets {shown}; {source}",
            required=f"{' and '.join(w for w, _ in weights)} need{'s' if len(weights) == 1 else ''} "
            f"AccountingStorageType={SLURMDBD}",
            fix="turn accounting on (values accounting.enabled: true; gpu-cluster: remove "
            f"scheduling.slurm.accounting: false), or set {' and '.join(w for w, _ in weights)} to 0",
            keys=(name, release, r.name, r.urn),
            urn=r.urn,
        )


def _positive(value: str | None) -> bool:
    number = as_int(value) if value is not None else None
    return isinstance(number, int) and number > 0


RULE = register(
    Rule(
        id=ID,
        title="Slurm fair-share has accounting",
        category=Category.CROSS_LAYER,
        description="A Slurm cluster whose slurm.conf gives PriorityWeightFairshare or PriorityWeightAge a weight above 0 "
        "runs accounting (slurmdbd).",
        why=(
            "slurmctld computes fair-share and age from the usage records of slurmdbd. Without accounting "
            "(AccountingStorageType=accounting_storage/none, the slurm chart's accounting.enabled false) it logs an "
            "error and ignores both weights: jobs are then ordered by size and QOS only, and the shares the accounts "
            "were given have no effect, with no error at deploy time. The directives are read from the slurm release's "
            "controller.extraConf (or extraConfMap), accounting from its accounting.enabled or an "
            "AccountingStorageType line there."
        ),
        remediation=(
            "1. Turn accounting on: the slurm chart's accounting.enabled true with a database (gpu-cluster: "
            "omit scheduling.slurm.accounting or set it true; it then runs slurmdbd and MariaDB). 2. Or set "
            "PriorityWeightFairshare and PriorityWeightAge to 0 (gpu-cluster: "
            "scheduling.slurm.priorityWeights.fairShare and .age)."
        ),
        severity=Severity.MEDIUM,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(HELM_RELEASE,),
        check=check,
        stack=True,
    ),
    order=3060,
)
