"""Kueue: the pinned chart with gpu-cluster's manager configuration, and the queues, flavors and topologies that
match the stack's pools, rendered by ``render/kueue.py``."""

from __future__ import annotations

from typing import Any, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.k8s.network_policies import system_network_policies
from components.charts import KUEUE
from components.image_digests import pinned_chart_values
from components.k8s.custom_resources import custom_resource, namespace
from render.kueue import KueueObjects, base_name
from render.network_policies import isolated_namespace

KUEUE_NAMESPACE = "kueue-system"
RESTRICTED_PSS = {f"pod-security.kubernetes.io/{mode}": "restricted" for mode in ("enforce", "audit", "warn")}
"""The Kueue controller runs as non-root with a read-only root file system and no capabilities."""


class Kueue(pulumi.ComponentResource):
    """Installs Kueue (``helm.v3.Release`` of the pinned OCI chart, release name ``kueue``) into ``kueue-system``
    and, once the release is ready (its CRDs and admission webhooks serve), creates one ResourceFlavor per GPU pool,
    the Topologies fixed-size and queued pools use, a ProvisioningRequestConfig and AdmissionCheck per queued pool,
    the Cohort, WorkloadPriorityClasses, a ClusterQueue per queue and a
    LocalQueue in each team's namespace (created here with Pod Security ``baseline``).
    """

    release: k8s.helm.v3.Release
    cluster_queues: list[str]
    """ClusterQueue names, in spec order."""
    local_queues: dict[str, str]
    """Queue name -> namespace of its LocalQueue."""
    team_namespaces: dict[str, pulumi.Resource]
    """Namespace name -> the Namespace created for its teams' jobs."""

    def __init__(
        self,
        name: str,
        objects: KueueObjects,
        values: dict[str, Any],
        cluster_queues: Sequence[str],
        after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        """``objects`` and ``values``: rendered from the plan (``render/kueue.py``, ``render/kueue_config.py``);
        ``cluster_queues``: the queue names in spec order."""
        super().__init__("gpu-cluster:scheduling:Kueue", name, None, opts)
        # the namespaces are the roots: they (and so all the rest) wait for ``after`` (the cluster, its system pool)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(after))
        system_ns = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata={
                "name": KUEUE_NAMESPACE,
                "labels": {**RESTRICTED_PSS, "app.kubernetes.io/part-of": "gpu-cluster"},
            },
            opts=child,
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-chart",
            name="kueue",
            chart=f"{KUEUE.repo}/{KUEUE.chart}",
            version=KUEUE.version,
            namespace=KUEUE_NAMESPACE,
            values=pinned_chart_values(KUEUE.chart, KUEUE.version, values),
            timeout=900,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[system_ns]),
        )
        system_network_policies(name, KUEUE_NAMESPACE, system_ns, self)  # webhooks, visibility API, metrics only
        team_ns = {
            obj["metadata"]["name"]: namespace(f"{name}-ns-{obj['metadata']['name']}", obj, child)
            for obj in objects.namespaces
        }
        self.team_namespaces = dict(team_ns)
        for ns_name, ns in team_ns.items():  # another team's pods cannot reach this team's pods
            for obj in isolated_namespace(ns_name):
                custom_resource(
                    f"{name}-netpol-{ns_name}-{obj['metadata']['name']}",
                    obj,
                    pulumi.ResourceOptions(parent=self, depends_on=[ns]),
                )
        # Each object waits for what it names: a flavor for its Topology, a ClusterQueue for its flavors. When a
        # content-named flavor or topology is replaced, the new one exists before its users are repointed, and the
        # old one is deleted after them (so Kueue's resource-in-use finalizer is gone by then; see render/kueue.py).
        created: dict[tuple[str, str], pulumi.Resource] = {}
        for obj in objects.custom_resources():
            kind = obj["kind"]
            waits_for: list[pulumi.Resource] = [self.release]
            if kind == "LocalQueue":
                waits_for.append(team_ns[obj["metadata"]["namespace"]])
            elif kind == "ResourceFlavor" and "topologyName" in obj["spec"]:
                waits_for.append(created[("Topology", obj["spec"]["topologyName"])])
            elif kind == "AdmissionCheck":
                waits_for.append(created[("ProvisioningRequestConfig", obj["spec"]["parameters"]["name"])])
            elif kind == "ClusterQueue":
                waits_for += [
                    created[("ResourceFlavor", f["name"])]
                    for group in obj["spec"]["resourceGroups"]
                    for f in group["flavors"]
                ]
                waits_for += [
                    created[("AdmissionCheck", c["name"])]
                    for c in obj["spec"].get("admissionChecksStrategy", {}).get("admissionChecks", [])
                ]
            created[(kind, obj["metadata"]["name"])] = custom_resource(
                f"{name}-{_ROLE[kind]}-{base_name(obj)}", obj, pulumi.ResourceOptions(parent=self, depends_on=waits_for)
            )
        self.cluster_queues = list(cluster_queues)
        self.local_queues = {lq["metadata"]["name"]: lq["metadata"]["namespace"] for lq in objects.local_queues}
        self.register_outputs(
            {"namespace": KUEUE_NAMESPACE, "clusterQueues": self.cluster_queues, "localQueues": self.local_queues}
        )


_ROLE = {
    "Topology": "topology",
    "ResourceFlavor": "flavor",
    "ProvisioningRequestConfig": "prc",
    "AdmissionCheck": "check",
    "Cohort": "cohort",
    "WorkloadPriorityClass": "priority",
    "ClusterQueue": "cq",
    "LocalQueue": "lq",
}
"""Child name per kind: ``<component>-<role>-<object name>``, e.g. ``kueue-cq-research``; content-named objects
use the stable part of their name (``kueue-flavor-h100`` for ResourceFlavor ``h100-<hash>``), so a replacement keeps
the Pulumi resource and its URN."""
