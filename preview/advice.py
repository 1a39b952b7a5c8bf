"""Deploy-time advice the offline preview adds to a valid spec: true for every stack like it, so not a spec rule."""

from __future__ import annotations

from typing import Any, Sequence

from catalog import Catalog, Cloud
from catalog.cloud_limits import sold_zones
from catalog.fabric import load_fabric_catalog
from stacks.plan.fabric import fabric_plan
from stacks.validate.issues import SpecIssue, path_of
from stacks.validate.pod_start import unpinned_ami_advice
from stacks.validate.pool_zones import OFFERINGS_COMMAND
from stacks.spec.cluster import ClusterMode
from stacks.spec.stack import StackSpec


AWS_NAMES = ", and which AZ a zone's letter names differs per account"


def unknown_zone_availability(spec: StackSpec, cat: Catalog) -> list[SpecIssue]:
    """Pools whose machine the catalog has no per-zone facts for (every EKS type): say the zones were not checked."""
    out = []
    for i, pool in enumerate(spec.node_pools):
        acc = pool.accelerator
        machine = cat.resolve(spec.cloud, pool.machine_type, acc.type if acc else None, acc.count if acc else None)
        if machine is None or cat.offered_zones(spec.cloud, machine) is not None:
            continue
        declared = set(pool.zone_availability_override.zones) if pool.zone_availability_override else set()
        sold = sold_zones(spec.cloud.value, pool.machine_type)
        if sold is not None:  # a sourced limit names where it is sold; validation refuses the other zones
            declared |= set(sold.value.split())
        unchecked = [z for z in pool.zones if z not in declared]
        if unchecked:
            command = OFFERINGS_COMMAND[spec.cloud].format(
                machine=pool.machine_type, region=spec.region, zones=",".join(unchecked)
            )
            out.append(
                SpecIssue(
                    path_of("nodePools", i, "zones"),
                    f"pool '{pool.name}': the catalog does not know which zones offer "
                    f"{pool.machine_type} (no public per-zone source{AWS_NAMES if spec.cloud == Cloud.AWS else ''}); "
                    f"not checked: {', '.join(unchecked)}",
                    pool.zones,
                    "zones that offer it to your account",
                    f"check with `{command}`; declare zoneAvailabilityOverride (zones + reason) to record that you did",
                    warning=True,
                )
            )
    return out


def deploy_advice(spec: StackSpec, cat: Catalog) -> list[SpecIssue]:
    advice = unknown_zone_availability(spec, cat)
    if spec.cluster.mode == ClusterMode.CREATE and not spec.cluster.authorized_networks:
        advice.append(
            SpecIssue(
                path_of("cluster", "authorizedNetworks"),
                "the new cluster's Kubernetes API gets a private endpoint only: `pulumi up` must run from inside the VPC "
                "to install the GPU runtime and scheduler",
                [],
                "your office or VPN CIDRs, e.g. 203.0.113.0/24",
                "add the range `pulumi up` runs from, or run it from a host inside the VPC",
                warning=True,
            )
        )
    # GPUDirect is set up now (nodePools[].fabric); a pool that turns it off gets validation's warning instead
    if spec.cloud == Cloud.GCP and spec.cluster.mode == ClusterMode.EXISTING:
        fabrics = load_fabric_catalog()
        for i, pool in enumerate(spec.node_pools):
            machine = fabrics.for_machine(spec.cloud, pool.machine_type)
            plan = fabric_plan(spec.cloud, pool.machine_type, pool.multi_node, pool.fabric, fabrics)
            if machine is not None and plan is not None:
                advice.append(
                    SpecIssue(
                        path_of("nodePools", i, "fabric"),
                        f"pool '{pool.name}' attaches {machine.kind.display_name} networks to the existing cluster "
                        f"'{spec.cluster.name}', which gpu-cluster does not modify: multi-networking "
                        "(enable_multi_networking, Dataplane V2) must already be on",
                        "existing cluster",
                        "a cluster created with --enable-multi-networking --enable-dataplane-v2",
                        "check with `gcloud container clusters describe`, or set fabric.mode: off for this pool",
                        warning=True,
                    )
                )
    return advice + unpinned_ami_advice(spec)


def pods_ready_warnings(spec: StackSpec, rows: Sequence[dict[str, Any]]) -> list[SpecIssue]:
    """A pool whose cold start (``stacks/plan/start_time.py``) is over Kueue's ``waitForPodsReady`` timeout. Kueue
    applies the timeout to every admitted workload, one pod too (kueue v0.19.2 apis/config/v1beta2/
    configuration_types.go ``WaitForPodsReady``): it is evicted at the timeout and requeued after the backoff, and
    runs only on a later admission that finds its nodes and image there."""
    index = {p.name: i for i, p in enumerate(spec.node_pools)}
    out = []
    for row in rows:
        g = row.get("largestGang") or {}
        timeout = g.get("overPodsReadyTimeoutS")
        if timeout is None:
            continue
        pods = g["pods"]
        out.append(
            SpecIssue(
                path="gpu-cluster:scheduling.gang.timeoutSeconds",
                warning=True,
                problem=f"pool {row['pool']}: a cold start of its largest gang ({pods} pod{'s' if pods != 1 else ''}) "
                f"takes about {g['coldS']:g} s (node, image pull, pod start), over Kueue's waitForPodsReady timeout: "
                "Kueue evicts it at the timeout and requeues it after the backoff, so it starts only on a later "
                "admission that finds its nodes and image still there",
                value=timeout,
                allowed=f">= {g['coldS']:g} s (the typical cold start; the high bound is {g['coldRangeS']['high']:g} s)",
                fix=f"raise scheduling.gang.timeoutSeconds, or shorten the pull of nodePools[{index[row['pool']]}] "
                "(podStart: image streaming, fast image pull, pre-pull, a secondary boot disk)",
            )
        )
    return out
