"""topology-nvlink-domain: a training runtime on a rack-scale NVLink pool (GB200 NVL72) places its gang by topology:
a gang that fits one NVLink domain is kept in one (else it straddles racks and IMEX/NVLink traffic between its nodes
has to cross the slower RDMA/EFA network), and a gang larger than a domain names an explicit level above the domain
(a GKE block), never the domain itself (it could never be admitted) and never nothing."""

from __future__ import annotations

from typing import Any, Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog
from policies.findings import Finding
from policies.pools import PoolView, gpu_pools
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.scheduler_objects import object_name, selected_pool
from policies.values import as_dict, as_int, as_list, dig
from stacks.plan.kueue_topology import PREFERRED_ANNOTATION, REQUIRED_ANNOTATION

ID = "topology-nvlink-domain"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
GPU = "nvidia.com/gpu"


def _domains(resources: list[Resource], cat: Catalog) -> dict[str, tuple[int, str, PoolView]]:
    """Pool name -> (GPUs per NVLink domain, the label naming a domain, the pool) for rack-scale pools."""
    out = {}
    for view in gpu_pools(resources, cat):
        for t in view.machine_types:
            machine = view.machine(cat, t)
            domain = cat.nvlink_domain(machine) if machine is not None else None
            if domain is not None:
                out[view.name] = (domain.domain_gpus, domain.domain_label, view)
    return out


def _gangs(r: Resource) -> Iterable[tuple[str | None, int | None, dict[str, Any]]]:
    """(pool, GPUs of the runtime's default gang, pod annotations) per replicated job."""
    nodes = as_int(dig(r.props, "spec", "mlPolicy", "numNodes"))
    for job in as_list(dig(r.props, "spec", "template", "spec", "replicatedJobs")):
        template = as_dict(dig(job, "template", "spec", "template"))
        pod = as_dict(template.get("spec"))
        containers = as_list(pod.get("containers"))
        per_pod = as_int(dig(containers[0], "resources", "limits", GPU)) if containers else None
        gpus = nodes * per_pod if isinstance(nodes, int) and isinstance(per_pod, int) else None
        yield (selected_pool(as_dict(pod.get("nodeSelector"))), gpus, as_dict(dig(template, "metadata", "annotations")))


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    racks = _domains(resources, cat)
    if not racks:
        return
    for r in resources:
        if r.type.rsplit(":", 1)[-1] not in RUNTIME_KINDS or not r.type.startswith("kubernetes:trainer."):
            continue
        for pool, gpus, gang_annotations in _gangs(r):
            if pool not in racks or gpus is None:
                continue
            domain_gpus, domain_label, view = racks[pool]
            level = gang_annotations.get(REQUIRED_ANNOTATION) or gang_annotations.get(PREFERRED_ANNOTATION)
            subject = f"training runtime '{object_name(r)}'"
            keys = (object_name(r), pool, r.name, r.urn)
            where = f"pool '{pool}' ({domain_gpus}-GPU NVLink domains, one per {domain_label} value)"
            if gpus > domain_gpus and not level:
                yield Finding(
                    subject,
                    f"a {gpus}-GPU gang on {where} has no topology level, so its pods land on "
                    "racks at random and NVLink traffic between them crosses the RDMA/EFA network",
                    observed=f"mlPolicy.numNodes × {GPU} = {gpus} GPUs; no {REQUIRED_ANNOTATION} or "
                    f"{PREFERRED_ANNOTATION} on the pod template",
                    required=f"a gang larger than one domain ({domain_gpus} GPUs) names an explicit level "
                    f"above the domain (e.g. {REQUIRED_ANNOTATION}: "
                    "cloud.google.com/gce-topology-block)",
                    fix="set scheduling.topology (gpu-cluster renders the annotation), or split the job "
                    f"into gangs of at most {domain_gpus} GPUs",
                    keys=keys,
                    urn=r.urn,
                )
            elif gpus > domain_gpus and gang_annotations.get(REQUIRED_ANNOTATION) == domain_label:
                yield Finding(
                    subject,
                    f"a {gpus}-GPU gang is required inside one {domain_gpus}-GPU NVLink domain of "
                    f"{where}, so Kueue can never admit it",
                    observed=f"{gpus} GPUs, required level {domain_label}",
                    required=f"at most {domain_gpus} GPUs per gang at this level",
                    fix="use a level above the domain (block) for gangs larger than one rack, or smaller gangs",
                    keys=keys,
                    urn=r.urn,
                )
            elif not level:
                yield Finding(
                    subject,
                    f"gangs on {where} have no topology level, so a gang that fits one domain may straddle racks",
                    observed="no topology annotation on the pod template",
                    required=f"{REQUIRED_ANNOTATION} (or preferred) at {domain_label}",
                    fix="set scheduling.topology: {mode: required, level: nvlink}",
                    keys=keys,
                    urn=r.urn,
                )


RULE = register(
    Rule(
        id=ID,
        title="Gangs on NVL72 pools are placed by NVLink domain",
        category=Category.TOPOLOGY,
        description="Training runtimes of GB200 NVL72 pools keep a gang that fits one NVLink domain inside one, and a "
        "larger gang names an explicit level above the domain.",
        why=(
            "A GB200 NVL72 rack is one 72-GPU NVLink domain of 18 nodes; between racks GPUs talk over the RDMA/EFA "
            "network at a fraction of NVLink's bandwidth, and IMEX channels do not span racks. Without a topology "
            "level Kueue places pods wherever GPUs are free, so a 72-GPU job can straddle two racks and a 144-GPU job "
            "spreads over any number. Required placement at the domain level makes a gang larger than the domain "
            "inadmissible for ever."
        ),
        remediation=(
            "1. Set scheduling.topology {mode: required, level: nvlink} (gpu-cluster renders the Kueue "
            "annotation on the pool's runtime). 2. For gangs larger than one rack, use a runtime with a level "
            "above the domain (GKE: cloud.google.com/gce-topology-block). 3. Or keep gangs at most one domain."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=2080,
)
