"""security-device-annotation-policy: a cluster running the NRI device injector has a cluster-wide admission policy
on ``devices.gke.io`` annotations."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.tenancy import DAEMONSET, denying_policies, expressions, name_of, of_type
from policies.values import as_dict, as_list, dig

ID = "security-device-annotation-policy"
INJECTOR_IMAGE = "nri-device-injector"
ANNOTATION = "devices.gke.io"


def _runs_injector(r: Resource) -> bool:
    pod = as_dict(dig(r.props, "spec", "template", "spec"))
    return any(
        INJECTOR_IMAGE in str(as_dict(c).get("image", ""))
        for c in as_list(pod.get("containers")) + as_list(pod.get("initContainers"))
    )


def check(resources: list[Resource], cfg: Config) -> Iterable[Finding]:
    injectors = [r for r in of_type(resources, DAEMONSET) if _runs_injector(r)]
    if not injectors:
        return
    # a namespace gpu-cluster does not create (``default``, a tenant's own) must be covered too: cluster-wide
    if any(ANNOTATION in expressions(p) for p in denying_policies(resources, None)):
        return
    ds = injectors[0]
    yield Finding(
        f"DaemonSet '{name_of(ds)}'",
        "the NRI device injector adds any host device a pod names in a "
        f"{ANNOTATION} annotation, after admission, so any pod can take the node's boot disk",
        observed=f"no Deny-bound ValidatingAdmissionPolicy on {ANNOTATION} annotations covers every namespace",
        required=f"a cluster-wide policy admitting only {ANNOTATION}/container.<fabric sidecar> with GPU "
        "device paths, in the namespaces fabric jobs run in",
        fix="keep gpu-cluster-device-annotations and its binding (render/admission.py)",
        keys=(name_of(ds), ds.name, ds.urn),
        urn=ds.urn,
    )


RULE = register(
    Rule(
        id=ID,
        title="Device-injector annotations are admitted only for the fabric",
        category=Category.SECURITY,
        stack=True,
        description="A cluster running the NRI device injector binds a ValidatingAdmissionPolicy on devices.gke.io "
        "annotations to every namespace.",
        why=(
            "GPUDirect-TCPX/TCPXO's RxDM sidecar gets the GPUs through the NRI device injector, which adds whatever "
            "host device a pod's devices.gke.io/* annotation lists, in any namespace, after admission: Pod Security "
            "never sees it. A pod naming /dev/sda (or /dev/nvme0n1) gets the node's boot disk."
        ),
        remediation=(
            "1. Bind a ValidatingAdmissionPolicy to every namespace (kube-system aside) that refuses "
            "devices.gke.io/pod and any key but devices.gke.io/container.<sidecar>, any path but the GPU "
            "devices, and any namespace but the fabric teams'. 2. gpu-cluster creates "
            "gpu-cluster-device-annotations for this."
        ),
        severity=Severity.CRITICAL,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(DAEMONSET,),
        check=check,
    ),
    order=4150,
)
