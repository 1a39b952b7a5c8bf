"""cross-layer-queued-pool-queue: a queued-provisioning pool is reachable by some queue: a Kueue ClusterQueue has GPU
quota on the pool's ResourceFlavor and a ProvisioningRequest AdmissionCheck of the pool's class on that flavor.

A GKE node pool with ``queuedProvisioning.enabled`` gets nodes only through ProvisioningRequests ("nodes can be only
obtained through queuing via the Cluster Autoscaler ProvisioningRequest API", GKE NodePool.QueuedProvisioning); an
EKS node group gpu-cluster tags ``gpu-cluster/queued-provisioning`` expects all-or-nothing scale-ups the same way.
Kueue creates those requests only for workloads admitted through such a check (Kueue "Provisioning AdmissionCheck
Controller")."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, Cloud
from policies.findings import Finding, listing
from policies.pools import PoolView, gpu_pools
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import flavor_quotas, kueue_kind, object_name, selected_pool
from policies.values import as_dict, as_list, dig
from stacks.plan.queued import GKE_QUEUED_CLASS, QUEUED_TAG

ID = "cross-layer-queued-pool-queue"
CONTROLLER = "kueue.x-k8s.io/provisioning-request"


def queued_class(view: PoolView) -> str | None:
    """The ProvisioningRequest class a queued pool needs; None when the pool scales on pending pods."""
    if view.cloud == Cloud.GCP:
        return GKE_QUEUED_CLASS if dig(view.resource.props, "queuedProvisioning", "enabled") is True else None
    value = as_dict(view.resource.props.get("tags")).get(QUEUED_TAG)
    return value if isinstance(value, str) and value else None


def _check_classes(resources: list[Resource]) -> dict[str, str | None]:
    """AdmissionCheck name -> provisioning class of its ProvisioningRequestConfig (None: not a provisioning check,
    or its config is missing)."""
    configs = {
        object_name(r): dig(r.props, "spec", "provisioningClassName")
        for r in resources
        if kueue_kind(r) == "ProvisioningRequestConfig"
    }
    out: dict[str, str | None] = {}
    for r in resources:
        if kueue_kind(r) != "AdmissionCheck":
            continue
        params = as_dict(dig(r.props, "spec", "parameters"))
        cls = (
            configs.get(str(params.get("name")))
            if dig(r.props, "spec", "controllerName") == CONTROLLER
            and params.get("kind") == "ProvisioningRequestConfig"
            else None
        )
        out[object_name(r)] = cls if isinstance(cls, str) else None
    return out


def _queue_checks(resources: list[Resource]) -> dict[str, list[tuple[str, list[str]]]]:
    """ClusterQueue name -> [(AdmissionCheck name, flavors it applies to; [] = every flavor)]."""
    out = {}
    for r in resources:
        if kueue_kind(r) == "ClusterQueue":
            out[object_name(r)] = [
                (str(as_dict(c).get("name")), [str(f) for f in as_list(as_dict(c).get("onFlavors"))])
                for c in as_list(dig(r.props, "spec", "admissionChecksStrategy", "admissionChecks"))
            ]
    return out


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    queued = [(v, cls) for v in gpu_pools(resources, cat) if (cls := queued_class(v)) is not None]
    if not queued:
        return
    flavors = {
        object_name(r): selected_pool(as_dict(dig(r.props, "spec", "nodeLabels")))
        for r in resources
        if kueue_kind(r) == "ResourceFlavor"
    }
    quotas = flavor_quotas(resources)
    classes = _check_classes(resources)
    checks = _queue_checks(resources)
    for view, cls in queued:
        users = [
            (cq, flavor)
            for flavor, pool in flavors.items()
            if pool == view.name
            for cq, gpus in quotas.get(flavor, [])
            if gpus > 0
        ]
        reaching = [
            cq
            for cq, flavor in users
            if any(classes.get(name) == cls and (not on or flavor in on) for name, on in checks.get(cq, []))
        ]
        if reaching:
            continue
        if users:
            problem = (
                f"ClusterQueues with quota on it ({listing(sorted({cq for cq, _ in users}))}) have no "
                "ProvisioningRequest admission check for it, so Kueue admits workloads whose pods wait for "
                "nodes the pool never creates"
            )
            observed = f"no AdmissionCheck of class {cls} on the pool's flavor in those ClusterQueues"
        else:
            problem = (
                "no Kueue ClusterQueue has GPU quota on it, so nothing ever creates a ProvisioningRequest and "
                "the pool never gets a node"
            )
            observed = "no ClusterQueue with nvidia.com/gpu nominalQuota on a ResourceFlavor selecting the pool"
        yield Finding(
            view.subject,
            f"this queued-provisioning pool is reachable by no queue: {problem}",
            observed=observed,
            required=f"a ClusterQueue with GPU quota on the pool's flavor and an AdmissionCheck (controller "
            f"{CONTROLLER}) whose ProvisioningRequestConfig has class {cls}, on that flavor",
            fix="give a queue quota in the pool (gpu-cluster: scheduling.queues[].quotas with "
            f"workload: kubeflow adds the check), or turn queued provisioning off, or waive {ID} for "
            "this pool if another stack runs its queues",
            keys=view.keys,
            urn=view.resource.urn,
        )


RULE = register(
    Rule(
        id=ID,
        title="Queued-provisioning pools are reachable by a queue",
        category=Category.CROSS_LAYER,
        description="Every queued-provisioning pool (GKE queuedProvisioning, EKS queued node group) has a Kueue "
        "ClusterQueue with GPU quota on its flavor and a ProvisioningRequest AdmissionCheck of its class.",
        why=(
            "A queued-provisioning pool gets nodes only through ProvisioningRequests, and Kueue creates them only for "
            "workloads admitted through a ProvisioningRequest AdmissionCheck. Without a queue holding quota there, the "
            "pool stays at 0 nodes forever; with quota but no check, Kueue admits gangs whose pods stay Pending (GKE "
            "never scales a queued pool for pending pods). Nothing fails at deploy time."
        ),
        remediation=(
            "1. Give a team quota in the pool (gpu-cluster renders the ProvisioningRequestConfig, the "
            "AdmissionCheck and attaches it to the team's ClusterQueue on the pool's flavor). 2. Outside "
            "gpu-cluster: create a ProvisioningRequestConfig with the pool's class (GKE queued-provisioning.gke.io; "
            "EKS best-effort-atomic-scale-up.autoscaling.x-k8s.io), an AdmissionCheck with controllerName "
            f"{CONTROLLER} pointing at it, and list it in the ClusterQueue's admissionChecksStrategy. 3. Or turn "
            "queued provisioning off on the pool."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(
            "gcp:container/nodePool:NodePool",
            "aws:eks/nodeGroup:NodeGroup",
            "kubernetes:kueue.x-k8s.io/*:ClusterQueue",
            "kubernetes:kueue.x-k8s.io/*:AdmissionCheck",
            "kubernetes:kueue.x-k8s.io/*:ProvisioningRequestConfig",
        ),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=3100,
)
