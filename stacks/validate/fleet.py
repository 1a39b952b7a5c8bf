"""``gpu-cluster:fleet``: what one stack can check about its part in a MultiKueue fleet (the checks that need the
worker stacks too run in the offline preview, ``preview/fleet.py``, and in the policy pack's fleet rules)."""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from typing import Sequence

from catalog import Cloud
from stacks.spec.fleet import MAX_EGRESS_ADDRESSES, MAX_WORKERS, Fleet, FleetRole
from stacks.spec.scheduling import SchedulingSpec, Workload
from stacks.plan.fleet_egress import uses_own_cloud_nat
from stacks.spec.stack import ClusterMode, ClusterSpec, NodePool
from stacks.validate.issues import Issues
from stacks.validate.cluster import AUTHORIZED_MIN_PREFIX, AUTHORIZED_WARN_PREFIX
from stacks.validate.names import DNS_LABEL, valid_label_value

WORKER_NAME_MAX = 40
MANAGER_ONLY = (
    "workers",
    "dispatcher",
    "incremental_step_size",
    "queues",
    "egress_addresses",
    "egress_cidrs",
    "gc_interval_seconds",
    "worker_lost_timeout_seconds",
    "origin",
    "priority_classes",
    "runtime_image",
)
PINNED_IMAGE = re.compile(r"[^@\s]+:[^@\s/]+@sha256:[0-9a-f]{64}")
"""``fleet.runtimeImage``: a tag and its digest (the form the workers accept from the manager's output)."""
WORKER_ONLY = ("token_generation", "manager")


def stack_name_of(reference: str) -> str:
    """``acme/gpu-cluster/fleet-gke`` -> ``fleet-gke`` (the stack file the offline preview reads)."""
    return reference.rsplit("/", 1)[-1]


def check_fleet(
    issues: Issues,
    fleet: Fleet,
    pools: Sequence[tuple[int, NodePool]],
    scheduling: SchedulingSpec | None,
    own_stack: str | None,
    cloud: Cloud | None = None,
    cluster: ClusterSpec | None = None,
) -> None:
    """``own_stack``: this stack's name (the manager may not list itself); None when unknown. ``cloud``/``cluster``:
    None when invalid (the egress checks that need them are skipped; their own errors are reported)."""
    at = issues.at("fleet")
    _check_role_fields(at, fleet)
    if fleet.role == FleetRole.WORKER:
        _check_worker(at, scheduling)
        if fleet.manager is not None:
            _check_reference(at, "manager", fleet.manager, own_stack, "the worker names itself as its manager")
            if cluster is not None and cluster.mode == ClusterMode.EXISTING:
                at.error(
                    "manager",
                    "an existing cluster's authorized networks are not gpu-cluster's to change, so it "
                    "cannot add the manager's egress addresses to them",
                    fleet.manager,
                    allowed="fleet.manager on a cluster of mode create",
                    fix="remove fleet.manager and add the manager's fleetEgressAddresses to the cluster's "
                    "authorized networks yourself (the manager must then declare them in egressCidrs)",
                )
    else:
        _check_manager(at, fleet, pools, scheduling, own_stack)
        if cloud is not None and cluster is not None:
            _check_egress(at, fleet, cloud, cluster)


def _check_reference(at: Issues, key: str, reference: str, own_stack: str | None, itself: str) -> bool:
    """A ``<org>/<project>/<stack>`` reference to another stack; False (and an error) when it is not one."""
    parts = reference.split("/")
    if len(parts) != 3 or not all(parts):
        at.error(
            key,
            "not a fully qualified stack name",
            reference,
            allowed="<org>/<project>/<stack>",
            fix="write the stack as pulumi stack ls --all shows it, e.g. acme/gpu-cluster/fleet",
        )
        return False
    if own_stack is not None and parts[2] == own_stack:
        at.error(
            key,
            f"{itself}; a cluster cannot be its own MultiKueue worker (Kueue does not support role sharing)",
            reference,
            allowed="another stack",
            fix="name the other stack of the fleet",
        )
        return False
    return True


def _check_egress(at: Issues, fleet: Fleet, cloud: Cloud, cluster: ClusterSpec) -> None:
    """Where the manager's egress addresses come from: reserved for gpu-cluster's Cloud NAT (GKE), the NAT gateways
    of its subnets (EKS), or declared (``egressCidrs``) when the NAT is not gpu-cluster's (``stacks/plan/fleet_egress.py``)."""
    for i, cidr in enumerate(fleet.egress_cidrs):
        try:
            net = ipaddress.ip_network(cidr, strict=True)
        except ValueError:
            at.at("egressCidrs").error(
                i, "not a CIDR", cidr, allowed="e.g. 203.0.113.7/32", fix="write the manager's NAT address as a /32"
            )
            continue
        # every worker admits these in its API's authorized networks: the same width rule as authorizedNetworks
        if net.prefixlen == 0 or (net.version == 4 and net.prefixlen < AUTHORIZED_MIN_PREFIX):
            at.at("egressCidrs").error(
                i,
                f"every worker's Kubernetes API would admit {net.num_addresses:,} addresses as the manager's",
                cidr,
                allowed=f"the manager's NAT addresses: IPv4 /{AUTHORIZED_MIN_PREFIX} or "
                "narrower, never 0.0.0.0/0 (usually a /32 each)",
                fix="list the manager's NAT addresses, each as a /32",
            )
        elif net.version == 4 and net.prefixlen < AUTHORIZED_WARN_PREFIX:
            at.at("egressCidrs").warn(
                i,
                f"every worker's Kubernetes API admits {net.num_addresses:,} addresses as the manager's",
                cidr,
                allowed=f"/{AUTHORIZED_WARN_PREFIX} or narrower",
                fix="narrow it to the manager's NAT addresses, each as a /32",
            )
    reserved = fleet.egress_addresses
    if cloud == Cloud.AWS:
        if reserved:
            at.error(
                "egressAddresses",
                "gpu-cluster reserves static NAT addresses on GKE only: on EKS the manager's "
                "subnets are yours and their NAT gateways already hold Elastic IPs, which gpu-cluster reads and "
                "exports",
                reserved,
                allowed="omitted (or 0) on EKS",
                fix="remove fleet.egressAddresses; list the addresses in egressCidrs if the egress is not a NAT "
                "gateway of the subnets",
            )
        elif not fleet.egress_cidrs and not cluster.subnets:
            at.error(
                "egressCidrs",
                "the manager's egress addresses are read from the NAT gateways its subnets route "
                "through, but cluster.subnets is empty",
                [],
                allowed="cluster.subnets, or egressCidrs",
                fix="set cluster.subnets (the manager's private subnets), or list its egress addresses in "
                "fleet.egressCidrs",
            )
        return
    own_nat = uses_own_cloud_nat(cluster)
    if cluster.mode == ClusterMode.EXISTING and not fleet.egress_cidrs:
        at.error(
            "egressCidrs",
            "the manager is an existing cluster: gpu-cluster makes no Cloud NAT for it, so it "
            "cannot reserve the NAT addresses",
            reserved if reserved is not None else [],
            allowed="the existing NAT's addresses as /32 CIDRs in egressCidrs",
            fix="list the NAT's external addresses in fleet.egressCidrs (and remove egressAddresses)",
        )
    elif reserved and fleet.egress_cidrs:
        at.error(
            "egressAddresses",
            "both reserved NAT addresses and declared egressCidrs: the manager leaves through "
            "one NAT, so its addresses come from one place",
            reserved,
            allowed="egressAddresses or egressCidrs",
            fix="remove egressCidrs (gpu-cluster reserves the addresses) or egressAddresses (your NAT's)",
        )
    elif reserved and not own_nat:
        at.error(
            "egressAddresses",
            "gpu-cluster reserves the addresses for its own Cloud NAT, and this cluster has "
            "none (cluster.network set, cloudNat not on): the addresses would be unused",
            reserved,
            allowed="cluster.cloudNat: true, or egressCidrs with your NAT's addresses",
            fix="set cluster.cloudNat: true, or remove egressAddresses and list your NAT's addresses in egressCidrs",
        )
    elif reserved is None and not own_nat and not fleet.egress_cidrs:
        at.error(
            "egressCidrs",
            "the manager's NAT is not gpu-cluster's (cluster.network set, cloudNat not on), so "
            "its egress addresses are unknown and no worker could admit them",
            [],
            allowed="your NAT's addresses as /32 CIDRs, or cluster.cloudNat: true",
            fix="list the NAT's external addresses in fleet.egressCidrs, or set cluster.cloudNat: true so "
            "gpu-cluster reserves them",
        )
    elif reserved == 0 and not fleet.egress_cidrs:
        at.error(
            "egressAddresses",
            "0 reserved addresses and no egressCidrs: the manager's Cloud NAT would pick "
            "ephemeral addresses no worker can admit",
            0,
            allowed=f"1 to {MAX_EGRESS_ADDRESSES}, or egressCidrs",
            fix="omit egressAddresses (1 is reserved), or list your NAT's addresses in egressCidrs",
        )


def _check_role_fields(at: Issues, fleet: Fleet) -> None:
    other, fields = (
        (FleetRole.WORKER, WORKER_ONLY) if fleet.role == FleetRole.MANAGER else (FleetRole.MANAGER, MANAGER_ONLY)
    )
    for name in fields:
        if name in fleet.model_fields_set:
            alias = Fleet.model_fields[name].alias or name
            at.error(
                alias,
                f"only a fleet {other.value} has this setting; this stack is a {fleet.role.value}",
                allowed=f"role: {other.value}",
                fix=f"remove fleet.{alias}",
            )


def _check_worker(at: Issues, scheduling: SchedulingSpec | None) -> None:
    if scheduling is None:
        at.error(
            "role",
            "a fleet worker runs the jobs the manager dispatches through its own Kueue, but this stack "
            "has no scheduling section",
            "worker",
            allowed="scheduling.workload: kubeflow",
            fix="add gpu-cluster:scheduling with workload: kubeflow and the fleet's queues",
        )
    elif scheduling.workload == Workload.SLURM:
        at.error(
            "role",
            "a Slurm stack cannot be a MultiKueue worker: the manager dispatches Kubernetes jobs to "
            "the worker's Kueue, which a `workload: slurm` stack does not run",
            "worker",
            allowed="scheduling.workload: kubeflow",
            fix="use a stack with workload: kubeflow as the worker, or remove gpu-cluster:fleet here",
        )


def _check_manager(
    at: Issues,
    fleet: Fleet,
    pools: Sequence[tuple[int, NodePool]],
    scheduling: SchedulingSpec | None,
    own_stack: str | None,
) -> None:
    if fleet.runtime_image is not None and not PINNED_IMAGE.fullmatch(fleet.runtime_image):
        at.error(
            "runtimeImage",
            "not an image pinned by digest",
            fleet.runtime_image,
            allowed="<repository>:<tag>@sha256:<64 lower-case hex digits>",
            fix="append the tag's digest, e.g. the output of `crane digest <repository>:<tag>`, or omit "
            "runtimeImage (resolved at each manager deploy)",
        )
    if not fleet.workers:
        at.error(
            "workers",
            "a fleet manager needs at least one worker",
            [],
            allowed=f"1 to {MAX_WORKERS} workers",
            fix="add workers: [{name: <worker>, stack: <org>/<project>/<stack>}]",
        )
    elif len(fleet.workers) > MAX_WORKERS:
        at.error(
            "workers",
            f"{len(fleet.workers)} workers; a MultiKueueConfig lists at most {MAX_WORKERS} clusters (Kueue 0.16+)",
            len(fleet.workers),
            allowed=f"1 to {MAX_WORKERS} workers",
            fix=f"split the fleet into managers of at most {MAX_WORKERS} workers each",
        )
    for field, values in (("name", [w.name for w in fleet.workers]), ("stack", [w.stack for w in fleet.workers])):
        for value, count in Counter(values).items():
            if count > 1:
                i = values.index(value, values.index(value) + 1)
                at.at("workers", i).error(
                    field,
                    f"worker {field} listed {count} times; MultiKueue needs unique clusters",
                    value,
                    allowed="each worker once",
                    fix="remove the repeat",
                )
    classes = [c.name for c in fleet.priority_classes]
    for i, pc in enumerate(fleet.priority_classes):
        if not DNS_LABEL.fullmatch(pc.name) or len(pc.name) > 63:
            at.at("priorityClasses", i).error(
                "name",
                "not a Kubernetes name",
                pc.name,
                allowed="lower-case DNS label, at most 63",
                fix="rename the class",
            )
        elif classes.index(pc.name) != i:
            at.at("priorityClasses", i).error(
                "name", "priority class listed twice", pc.name, allowed="each class once", fix="remove the repeat"
            )
    if not valid_label_value(fleet.origin) or not fleet.origin:
        # Kueue writes it as the value of the label marking the manager's copies on the workers
        at.error(
            "origin",
            "not a Kubernetes label value, which MultiKueue writes it as on every copy",
            fleet.origin,
            allowed="1-63 letters, digits, '-', '_' or '.', alphanumeric at both ends",
            fix="e.g. origin: fleet-us (two managers sharing a worker need different origins)",
        )
    for i, worker in enumerate(fleet.workers):
        w = at.at("workers", i)
        if len(worker.name) > WORKER_NAME_MAX or not DNS_LABEL.fullmatch(worker.name):
            w.error(
                "name",
                "not a valid worker name",
                worker.name,
                allowed=f"lower-case letters, digits and '-', starting with a letter, at most {WORKER_NAME_MAX}",
                fix="rename the worker, e.g. gke-us-central1",
            )
        parts = worker.stack.split("/")
        if len(parts) != 3 or not all(parts):
            w.error(
                "stack",
                "not a fully qualified stack name",
                worker.stack,
                allowed="<org>/<project>/<stack>",
                fix="write the worker's stack as pulumi stack ls --all shows it, e.g. acme/gpu-cluster/fleet-gke",
            )
        elif own_stack is not None and parts[2] == own_stack:
            w.error(
                "stack",
                "the manager lists itself as a worker; a cluster cannot be its own MultiKueue worker "
                "(Kueue does not support role sharing)",
                worker.stack,
                allowed="another stack",
                fix="list worker stacks only; run jobs on the manager through a separate stack",
            )
    if not fleet.queues:
        at.error(
            "queues",
            "a fleet manager needs at least one queue",
            [],
            allowed="queues: [{name, quotas}]",
            fix="add queues: [{name: research, quotas: [{gpuModel: H100_80GB, gpus: 16}]}]",
        )
    names = [q.name for q in fleet.queues]
    for i, queue in enumerate(fleet.queues):
        q = at.at("queues", i)
        if not DNS_LABEL.fullmatch(queue.name) or len(queue.name) > 63:
            q.error(
                "name",
                "not a Kubernetes name",
                queue.name,
                allowed="lower-case DNS label, at most 63",
                fix="rename the queue",
            )
        if names.index(queue.name) != i:
            q.error("name", "queue listed twice", queue.name, allowed="unique queue names", fix="merge the two")
        models = [x.gpu_model for x in queue.quotas]
        for j, quota in enumerate(queue.quotas):
            if models.index(quota.gpu_model) != j:
                q.at("quotas", j).error(
                    "gpuModel",
                    "GPU model listed twice in one queue",
                    quota.gpu_model.value,
                    allowed="each model once",
                    fix="add the two quotas up",
                )
    if scheduling is not None:
        at.error(
            "role",
            "a fleet manager's ClusterQueues are the fleet's (`fleet.queues`, each carrying the "
            "MultiKueue admission check); a scheduling section would install a second set of queues",
            "manager",
            allowed="no gpu-cluster:scheduling on a manager",
            fix="move scheduling to a worker stack, or remove it",
        )
    for i, pool in pools:
        queued = pool.capacity.queued_provisioning
        if queued or (queued is None and pool.capacity.type.value == "flex-start"):
            at.error(
                "role",
                f"pool '{pool.name}' uses queued provisioning: its ProvisioningRequest admission check "
                "would sit on the manager's ClusterQueues with the MultiKueue check, and Kueue 0.16+ marks such "
                "a ClusterQueue inactive (MultiKueueWithProvisioningRequest)",
                "manager",
                allowed="queued provisioning on worker pools only",
                fix=f"move pool '{pool.name}' to a worker stack (its ProvisioningRequest check stays there)",
            )
