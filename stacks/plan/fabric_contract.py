"""The fabric contract: what the training process of a rendered workload sees, compared with what its fabric needs.

A pure function of rendered objects (never of the code that rendered them), so the tests, the preview and the policy
pack judge the same thing. What the process sees is read from those objects in ``stacks/plan/process_view.py``;
this module judges it against the requirements, catalog rows with their sources (``catalog/fabric_requirements.py``),
and checks the NICs a fabric DaemonSet names against the machine's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from catalog.fabric import FabricKind, load_fabric_catalog
from catalog.fabric_images import CHECK_CONTAINER, by_digest, load_fabric_image_tables
from catalog.fabric_requirements import Aspect, Requirement, WithoutIt, requirements_for
from stacks.plan.process_view import ProcessView
from stacks.spec.stack import POOL_LABEL_KEY

SHM_PATH = "/dev/shm"


@dataclass(frozen=True)
class Outcome:
    requirement: Requirement
    met: bool
    observed: str


@dataclass(frozen=True)
class ContractResult:
    view: ProcessView
    fabric: FabricKind
    outcomes: tuple[Outcome, ...]

    @property
    def unmet(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.met]

    @property
    def tcp_fallbacks(self) -> list[Outcome]:
        return [o for o in self.unmet if o.requirement.without_it == WithoutIt.TCP]

    @property
    def summary(self) -> str:
        return f"contract: {len(self.outcomes) - len(self.unmet)}/{len(self.outcomes)} requirements met"


_UNITS = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def quantity(text: str) -> float | None:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMGT]i|[kMGT])?\s*", str(text))
    return float(m.group(1)) * _UNITS[m.group(2) or ""] if m else None


def _shm(view: ProcessView) -> tuple[float | None, str]:
    name = view.mounts.get(SHM_PATH)
    volume = view.volumes.get(name or "") or {}
    empty = volume.get("emptyDir")
    if name is None or not isinstance(empty, dict) or empty.get("medium") != "Memory":
        return None, "no Memory emptyDir at /dev/shm (the runtime's 64 MiB)"
    size = str(empty.get("sizeLimit") or "")
    return (quantity(size) if size else float("inf")), f"Memory emptyDir {size or 'without sizeLimit'}"


def _outcome(req: Requirement, view: ProcessView, kind: FabricKind, gpu_nics: int) -> Outcome:
    want = req.expected_for(gpu_nics)
    a = req.aspect
    if a == Aspect.ENV:
        got = view.env.get(req.name)
        return Outcome(req, got == want, f"{req.name}={got}" if got is not None else f"{req.name} unset")
    if a == Aspect.ENV_UNSET:
        got = view.env.get(req.name)
        return Outcome(req, got is None, f"{req.name}={got}" if got is not None else f"{req.name} unset")
    if a == Aspect.LD_PATH:
        return Outcome(req, want in view.ld_path, f"LD_LIBRARY_PATH={':'.join(view.ld_path) or '(unset)'}")
    if a == Aspect.MOUNT:
        return Outcome(req, want in view.mounts, f"mounts: {', '.join(sorted(view.mounts)) or 'none'}")
    if a == Aspect.INTERFACES:
        return Outcome(
            req,
            view.gpu_nics == int(want),
            f"{view.gpu_nics} GPU NICs" + (f" (DRA claim of {view.claimed_nics})" if view.claimed_nics else ""),
        )
    if a == Aspect.SIDECAR:
        return Outcome(req, req.name in view.sidecars, f"sidecars: {', '.join(view.sidecars) or 'none'}")
    if a == Aspect.RESOURCE:
        req_q, lim_q = quantity(view.requests.get(req.name, "")), quantity(view.limits.get(req.name, ""))
        ok = req_q is not None and req_q == lim_q == quantity(want)
        return Outcome(
            req, ok, f"requests {view.requests.get(req.name, 'none')}, limits {view.limits.get(req.name, 'none')}"
        )
    if a == Aspect.SHM:
        size, shown = _shm(view)
        floor = quantity(want) or 0
        return Outcome(req, size is not None and size >= floor, shown)
    if a == Aspect.GATE:
        return Outcome(
            req,
            want in view.gated_on,
            "init containers before the job mount " + (", ".join(view.gated_on) or "no host directory"),
        )
    return _image_outcome(req, view, kind)  # Aspect.IMAGE


def _image_outcome(req: Requirement, view: ProcessView, kind: FabricKind) -> Outcome:
    """Met only when a catalog row vouches for the image: a published image known to carry the fabric's libraries,
    or the build of a recipe of this repository named by digest and checked from the image at pod start. An image
    known to lack them, or one nobody checked, is unmet."""
    gap = load_fabric_catalog().image_gap(kind, view.image)
    if gap is not None:
        return Outcome(req, False, f"image {view.image} has no {gap.lacks}")
    tables = load_fabric_image_tables()
    if (known := tables.capability(kind, view.image)) is not None:
        return Outcome(req, True, f"image {view.image}: {known.provides} (fabric-image-capabilities.csv)")
    build = tables.build(view.build or "")
    if build is not None and build.fabric == kind:
        if not by_digest(view.image):
            return Outcome(
                req,
                False,
                f"image {view.image} is said to be built from {build.dockerfile} but is not pinned by digest",
            )
        if view.image not in view.checked_images:
            return Outcome(
                req,
                False,
                f"image {view.image} is said to be built from {build.dockerfile} but no "
                f"{CHECK_CONTAINER} init container checks it first",
            )
        return Outcome(
            req,
            True,
            f"image {view.image}: built from {build.dockerfile} ({build.provides}), checked "
            f"at start by {CHECK_CONTAINER}",
        )
    return Outcome(
        req,
        False,
        f"image {view.image}: no catalog row says it has {req.name} (neither "
        "fabric-image-capabilities.csv nor a recipe of image-builds.csv by digest)",
    )


def check(view: ProcessView, kind: FabricKind, machine_type: str, gpu_nics: int) -> ContractResult:
    return ContractResult(
        view, kind, tuple(_outcome(r, view, kind, gpu_nics) for r in requirements_for(kind, machine_type))
    )


DAEMONSET_TYPE = "kubernetes:apps/v1:DaemonSet"
RDMA_NIC_NAME = re.compile(r"\bgpu(\d+)rdma\d+\b")
"""GKE's name of a GPU RDMA NIC in the host network namespace (``gpu<i>rdma0``, i = 0 … NICs-1)."""


def named_rdma_nics(daemonset: Mapping[str, Any]) -> set[int]:
    """Indexes of the RDMA NICs the containers of a DaemonSet name (in commands, args and env)."""
    pod = ((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]
    text = json.dumps([{k: c.get(k) for k in ("command", "args", "env")} for c in containers if isinstance(c, dict)])
    return {int(i) for i in RDMA_NIC_NAME.findall(text)}


def daemonset_pools(daemonset: Mapping[str, Any]) -> set[str]:
    """Pools a DaemonSet runs on by its required node affinity on the pool label (empty: not pinned to pools)."""
    pod = ((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}
    terms = (
        ((pod.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
        or {}
    ).get("nodeSelectorTerms") or []
    return {
        str(v)
        for t in terms
        if isinstance(t, dict)
        for e in t.get("matchExpressions") or []
        if isinstance(e, dict) and e.get("key") == POOL_LABEL_KEY and e.get("operator") == "In"
        for v in e.get("values") or []
    }


def missing_nics(daemonset: Mapping[str, Any], rdma_nics: int) -> list[int]:
    """NICs a DaemonSet names that a machine of ``rdma_nics`` RDMA NICs does not have: writing one fails on the node
    (the gIB installer's martians step on A4X wrote gpu4rdma0 … gpu7rdma0 and crash-looped)."""
    return sorted(i for i in named_rdma_nics(daemonset) if i >= rdma_nics)
