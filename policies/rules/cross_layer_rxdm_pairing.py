"""cross-layer-rxdm-pairing: the RxDM sidecar (``tcpgpudmarxd-dev``) a training runtime or Slurm NodeSet runs is the
release paired with the NCCL TCPX/TCPXO plugin the cluster's installer DaemonSet puts on the nodes. Pairs come from
the fabric catalog (container-engine-accelerators release notes: "The tcpxo-daemon version is coupled with the NCCL
plugin installer version")."""

from __future__ import annotations

from typing import Any, Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog.fabric import FabricKind, load_fabric_catalog
from policies.findings import Finding
from policies.resources import HELM_RELEASE
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register
from policies.scheduler_objects import is_slurm_release, object_name
from policies.values import as_dict, as_list, dig

ID = "cross-layer-rxdm-pairing"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
RUNTIME = "kubernetes:trainer.kubeflow.org/v1alpha1:ClusterTrainingRuntime"


def _tag(image: Any, repo: str) -> str | None:
    if not isinstance(image, str) or not image.startswith(repo + ":"):
        return None
    return image[len(repo) + 1 :].split("@")[0]


def _containers(pod: Any) -> list[dict]:
    pod = as_dict(pod)
    return [as_dict(c) for c in as_list(pod.get("initContainers")) + as_list(pod.get("containers"))]


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    fab = load_fabric_catalog()
    for kind in (FabricKind.TCPX, FabricKind.TCPXO):
        plugin_repo, rxdm_repo = fab.image(kind, "nccl-plugin").image, fab.image(kind, "rxdm").image
        pairs = {fab.image(kind, "nccl-plugin").version: fab.image(kind, "rxdm").version}
        installed = {
            t
            for r in resources
            if r.type == DAEMONSET
            for c in _containers(dig(r.props, "spec", "template", "spec"))
            if (t := _tag(c.get("image"), plugin_repo))
        }
        for plugin in sorted(installed):
            want = pairs.get(plugin)
            if want is None:
                continue  # a plugin release the catalog does not pair: nothing to compare with
            for subject, keys, urn, pod in _pods(resources):
                for c in _containers(pod):
                    got = _tag(c.get("image"), rxdm_repo)
                    if got is not None and got != want:
                        yield Finding(
                            subject,
                            "its RxDM sidecar is not the release paired with the "
                            f"{kind.display_name} NCCL plugin the installer puts on the nodes, so NCCL "
                            "fails at init or runs degraded",
                            observed=f"RxDM {got} in container {c.get('name')}, NCCL plugin {plugin} on the nodes",
                            required=f"RxDM {want}, released with plugin {plugin}",
                            fix=f"set the {c.get('name')} image to {rxdm_repo}:{want} (gpu-cluster "
                            "renders the pair from catalog/data/fabric-images.csv)",
                            keys=keys,
                            urn=urn,
                        )


def _pods(resources: list[Resource]) -> Iterable[tuple[str, tuple, str, Any]]:
    for r in resources:
        if r.type == RUNTIME:
            for job in as_list(dig(r.props, "spec", "template", "spec", "replicatedJobs")):
                yield (
                    f"training runtime '{object_name(r)}'",
                    (object_name(r), r.name),
                    r.urn,
                    dig(job, "template", "spec", "template", "spec"),
                )
        elif r.type == HELM_RELEASE and is_slurm_release(r):
            for name, spec in as_dict(dig(r.props, "values", "nodesets")).items():
                yield f"Slurm NodeSet '{name}'", (str(name), r.name), r.urn, dig(spec, "podSpec")


RULE = register(
    Rule(
        id=ID,
        title="RxDM matches the NCCL plugin",
        category=Category.CROSS_LAYER,
        description="The RxDM sidecar of TCPX/TCPXO jobs is the release paired with the installed NCCL plugin.",
        why=(
            "GPUDirect-TCPX/TCPXO splits the data path between the NCCL plugin on the node and the RxDM sidecar in the "
            "pod; Google releases them in pairs and a mismatched pair fails at NCCL init or runs degraded. The pairs "
            "are catalog data with their release notes as source."
        ),
        remediation=(
            "1. For a gpu-cluster stack, don't override the sidecar image: the runtime and NodeSet get the "
            "catalog's pair. 2. Otherwise use the RxDM version the plugin's release notes name."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(DAEMONSET, RUNTIME, HELM_RELEASE),
        check=check,
        stack=True,
    ),
    order=3120,
)
