"""topology-accelerator-count: a pool's GPUs per node equal what its machine type has (GKE guest
accelerators), and an EKS node group's instance types all have the same GPUs."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from policies.findings import Finding, listing
from policies.pools import PoolView, pool_view
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.values import UNKNOWN, as_int

ID = "topology-accelerator-count"


def check(resource: Resource, cfg: Config, cat: Catalog) -> Iterable[Finding]:
    view = pool_view(resource, cat)
    if view is None or not view.is_gpu(cat):
        return
    if view.cloud == Cloud.GCP:
        yield from _gke(view, cat)
    else:
        yield from _eks(view, cat)


def _gke(view: PoolView, cat: Catalog) -> Iterable[Finding]:
    machine_type = view.machine_types[0] if view.machine_types else None
    fixed = cat.machines.get((Cloud.GCP, machine_type)) if machine_type else None
    accs = view.accelerators
    if fixed is not None:
        if not accs:
            yield Finding(
                view.subject,
                f"the pool attaches no guest accelerator, but {machine_type} has {fixed.gpus} × {fixed.accelerator}",
                observed="nodeConfig.guestAccelerators unset",
                required=f"exactly {fixed.gpus} × {fixed.accelerator} (catalog)",
                fix="set nodeConfig.guestAccelerators to "
                f"[{{type: {fixed.accelerator}, count: {fixed.gpus}}}] (gpu-cluster takes it from the "
                "catalog)",
                keys=view.keys,
            )
            return
        acc = accs[0]
        count, kind = as_int(acc.get("count")), acc.get("type")
        if count is UNKNOWN or kind is UNKNOWN:
            return
        if len(accs) > 1 or kind != fixed.accelerator or count != fixed.gpus:
            observed = ", ".join(f"{as_int(a.get('count'))} × {a.get('type')}" for a in accs)
            same = [
                m.machine_type
                for m in cat.machines.values()
                if m.cloud == Cloud.GCP and m.accelerator == kind and m.gpus == count
            ]
            hint = f", or pick {listing(sorted(same))} for {count} × {kind}" if same else ""
            yield Finding(
                view.subject,
                f"the accelerators do not match the machine type {machine_type}",
                observed=f"guestAccelerators {observed}",
                required=f"exactly {fixed.gpus} × {fixed.accelerator} (catalog)",
                fix=f"set the accelerator count to {fixed.gpus} (or omit accelerator and let gpu-cluster "
                f"take it from the catalog){hint}",
                keys=view.keys,
            )
        return
    host = cat.hosts.get((Cloud.GCP, machine_type)) if machine_type else None
    if host is None or not accs:
        return
    acc = accs[0]
    gpu = cat.attachable.get((Cloud.GCP, str(acc.get("type"))))  # no type: no key matches
    count = as_int(acc.get("count"))
    if gpu is not None and isinstance(count, int) and count not in gpu.allowed_counts:
        yield Finding(
            view.subject,
            f"the accelerator count cannot be attached to {machine_type}",
            observed=f"guestAccelerators {count} × {gpu.accelerator}",
            required=f"{' / '.join(map(str, gpu.allowed_counts))} per node",
            fix="set accelerator.count to an allowed count",
            keys=view.keys,
        )


def _eks(view: PoolView, cat: Catalog) -> Iterable[Finding]:
    shapes: dict[tuple[int, str], list[str]] = {}
    for t in view.machine_types:
        m = cat.machines.get((Cloud.AWS, t))
        if m is not None:
            shapes.setdefault((m.gpus, m.gpu_model.value), []).append(t)
    if len(shapes) > 1:
        observed = "; ".join(f"{listing(types)}: {gpus} × {model}" for (gpus, model), types in sorted(shapes.items()))
        yield Finding(
            view.subject,
            "its instance types have different GPUs per node",
            observed=f"instanceTypes {observed}",
            required="one GPU model and count per pool, so quotas, GRES and cost per node hold for every node",
            fix="split the node group into one pool per GPU shape",
            keys=view.keys,
        )


RULE = register(
    Rule(
        id=ID,
        title="Accelerator count matches the machine type",
        category=Category.TOPOLOGY,
        description="Every node of a GPU pool has the GPUs its machine type defines: GKE guest accelerators equal "
        "the catalog's fixed count, and an EKS node group's instance types share one GPU model and count.",
        why=(
            "A3, A2, A4 and G2 machines come with a fixed number of GPUs; a different guestAccelerators count is "
            "refused by GKE at create time, after a long preview said nothing. Mixed instance types in one node "
            "group break every per-node number the schedulers and the cost rules use."
        ),
        remediation=(
            "1. Omit the accelerator in the gpu-cluster stack (the catalog supplies it), or set it to the "
            "machine type's count. 2. To change the GPU count, pick the machine size with that many GPUs. "
            "3. Split node groups that mix GPU shapes."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP),
        check=check,
        reads_catalog=True,
    ),
    order=2010,
)
