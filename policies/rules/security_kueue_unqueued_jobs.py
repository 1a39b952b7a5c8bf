"""security-kueue-unqueued-jobs: Kueue manages the team namespaces' jobs that name no queue
(``manageJobsWithoutQueueName`` with a ``managedJobsNamespaceSelector`` covering them), so quota cannot be
bypassed by leaving the queue label out."""

from __future__ import annotations

from typing import Any, Iterable

import yaml
from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.resources import HELM_RELEASE
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.tenancy import NAME_LABEL, team_namespaces
from policies.values import as_dict, as_list, dig

ID = "security-kueue-unqueued-jobs"


def _is_kueue(r: Resource) -> bool:
    chart = r.props.get("chart")
    return r.type == HELM_RELEASE and isinstance(chart, str) and chart.rstrip("/").split("/")[-1] == "kueue"


def _selected(selector: Any, namespace: str) -> bool:
    if selector is None:
        return True  # Kueue's default selects every namespace but its own and kube-system
    sel = as_dict(selector)
    if (
        any(
            as_dict(sel.get("matchLabels")).get(k) != v
            for k, v in as_dict(sel.get("matchLabels")).items()
            if k != NAME_LABEL
        )
        or as_dict(sel.get("matchLabels")).get(NAME_LABEL, namespace) != namespace
    ):
        return False
    for e in as_list(sel.get("matchExpressions")):
        e = as_dict(e)
        values = as_list(e.get("values"))
        if (
            e.get("key") != NAME_LABEL
            or (e.get("operator") == "In" and namespace not in values)
            or (e.get("operator") == "NotIn" and namespace in values)
        ):
            return False
    return True


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    teams = sorted(team_namespaces(resources))
    for r in (r for r in resources if _is_kueue(r)):
        text = dig(r.props, "values", "managerConfig", "controllerManagerConfigYaml")
        try:
            config = as_dict(yaml.safe_load(text)) if isinstance(text, str) else {}
        except yaml.YAMLError:
            config = {}
        managed = config.get("manageJobsWithoutQueueName") is True
        selector = config.get("managedJobsNamespaceSelector")
        missing = [ns for ns in teams if not _selected(selector, ns)]
        if managed and not missing:
            continue
        yield Finding(
            f"Helm release '{r.name}' (Kueue)",
            "a tenant's Job, JobSet or pod without a queue name runs at once, outside every quota",
            observed=(
                f"manageJobsWithoutQueueName {str(managed).lower()}"
                + (f", team namespaces outside managedJobsNamespaceSelector: {', '.join(missing)}" if managed else "")
            ),
            required="manageJobsWithoutQueueName: true with managedJobsNamespaceSelector selecting every "
            "team namespace",
            fix="keep the manager configuration gpu-cluster renders (render/kueue_config.py)",
            keys=(r.name, r.urn),
            urn=r.urn,
        )


RULE = register(
    Rule(
        id=ID,
        title="Jobs without a queue name cannot bypass quota",
        category=Category.SECURITY,
        stack=True,
        description="Kueue manages team-namespace jobs that name no queue (manageJobsWithoutQueueName + "
        "managedJobsNamespaceSelector).",
        why=(
            "By default Kueue ignores a job without the kueue.x-k8s.io/queue-name label: it starts at once and takes "
            "GPUs the queues promised to other teams. Quota is then a convention, not a limit."
        ),
        remediation=(
            "1. Set manageJobsWithoutQueueName: true. 2. Set managedJobsNamespaceSelector to the team "
            "namespaces (kubernetes.io/metadata.name In [...]), which also keeps Kueue's pod webhook out of "
            "system namespaces. 3. Enable the pod integration so bare pods are held too."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(HELM_RELEASE,),
        check=check,
    ),
    order=4180,
)
