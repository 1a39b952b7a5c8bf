"""Would Kueue ever admit this PodSet in this ClusterQueue, and on which flavor? A port of the part of Kueue v0.19.2's
flavor assignment (``pkg/scheduler/flavorassigner/flavorassigner.go``, ``tas_flavorassigner.go``) that decides a
fleet job's fate: resource groups, the per-flavor checks in ``checkFlavorForPodSets`` (TAS match, untolerated
taints, node selector on the flavor's own label keys), quota against the flavor's maximum capacity, and flavor
fungibility (``shouldTryNextFlavor``, ``isPreferred``). Pure: it reads Kueue API objects as dicts, so the preview's
"runs on", the pack's fleet rules (from the facts a worker exports) and the what-if all decide with this one module.

Not ported: preemption-candidate simulation (a flavor that needs preemption is taken as preemptible), the TAS
placement itself (node capacity by domain), elastic slices, concurrent admission, nomination mappings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED_TOPOLOGY = "kueue.x-k8s.io/podset-unconstrained-topology"

# Kueue's own messages (flavorassigner.go, tas_flavorassigner.go), so a finding quotes what Kueue would say.
ONLY_TAS = 'Flavor "{f}" supports only TopologyAwareScheduling'
NO_TAS = 'Flavor "{f}" does not support TopologyAwareScheduling'
NO_LEVEL = 'Flavor "{f}" does not contain the requested level'
UNTOLERATED = "untolerated taint {t} in flavor {f}"
NO_AFFINITY = "flavor {f} doesn't match node affinity"
UNAVAILABLE = "resource {r} unavailable in ClusterQueue"
OVER_MAX = "insufficient quota for {r} in flavor {f}, request ({v}) > maximum capacity ({m})"
NOT_FOUND = "flavor {f} not found"
NO_TAS_FLAVOR = "no TAS flavor assigned"
MULTIPLE_TAS = "multiple TAS flavors assigned: {f}"

RULE_OF = {
    ONLY_TAS: "a PodSet without a topology request skips a TAS flavor in a ClusterQueue that is not "
    "TAS-only (tas_flavorassigner.go, checkPodSetAndFlavorMatchForTAS)",
    NO_TAS: "a PodSet that requests topology skips a flavor without topologyName (checkPodSetAndFlavorMatchForTAS)",
    NO_LEVEL: "a PodSet's topology level must be a level of the flavor's Topology (checkPodSetAndFlavorMatchForTAS)",
    UNTOLERATED: "a flavor's NoSchedule/NoExecute taints need a toleration (checkFlavorForPodSets)",
    NO_AFFINITY: "the pod's node selector must match the flavor's node labels (checkFlavorForPodSets)",
    UNAVAILABLE: "every requested resource must be covered by a resource group (findFlavorForPodSetResource)",
    OVER_MAX: "the request must fit the flavor's maximum capacity, borrowing included (fitsResourceQuota)",
    NOT_FOUND: "every flavor a ClusterQueue names must exist (checkFlavorForPodSets)",
    NO_TAS_FLAVOR: "a PodSet that uses TAS, asked for or implied by a TAS-only ClusterQueue, must get a TAS "
    "flavor for one of its resources; one that requests no quota resource gets none "
    "(tas_flavorassigner.go, WorkloadsTopologyRequests, onlyTASFlavor)",
    MULTIPLE_TAS: "a PodSet's resources must all be placed by one TAS flavor (onlyTASFlavor)",
}

NO_FIT, PREEMPT, FIT = 0, 2, 4
"""preemptionMode, as ordered upstream (noFit < noPreemptionCandidates < preempt < reclaim < fit)."""


@dataclass(frozen=True)
class TopologyRequest:
    kind: str
    """``required``, ``preferred`` or ``unconstrained``."""
    level: str | None = None


@dataclass(frozen=True)
class PodSet:
    name: str
    count: int
    requests: Mapping[str, float]
    """Per pod, by resource name (``nvidia.com/gpu``: 8)."""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    topology: TopologyRequest | None = None


@dataclass(frozen=True)
class Flavor:
    name: str
    node_labels: Mapping[str, str]
    node_taints: tuple[Mapping[str, Any], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()
    topology: str | None = None
    levels: tuple[str, ...] = ()
    """The node labels of its Topology's levels (empty for a flavor without TAS)."""


@dataclass(frozen=True)
class Quota:
    nominal: float
    borrowing_limit: float | None = None


@dataclass(frozen=True)
class Group:
    covered: tuple[str, ...]
    flavors: tuple[str, ...]
    quotas: Mapping[tuple[str, str], Quota]
    """(flavor, resource) -> quota."""


@dataclass(frozen=True)
class QueueShape:
    name: str
    groups: tuple[Group, ...]
    flavors: Mapping[str, Flavor]
    cohort: str | None = None
    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: str = "BorrowingOverPreemption"

    @property
    def tas_only(self) -> bool:
        """Every flavor of every group is a TAS flavor (ClusterQueueSnapshot.IsTASOnly)."""
        names = [f for g in self.groups for f in g.flavors]
        return bool(names) and all(self.flavors.get(f) is not None and self.flavors[f].topology for f in names)


@dataclass(frozen=True)
class Assignment:
    flavors: dict[str, str]
    """Resource -> flavor; empty when nothing fits."""
    considered: tuple[tuple[str, str], ...]
    """(flavor, Kueue's reason) for each flavor that was skipped, in the order tried."""
    mode: int = NO_FIT

    @property
    def admissible(self) -> bool:
        return self.mode != NO_FIT

    def why(self) -> str:
        return "; ".join(f"{f}: {r}" for f, r in self.considered) or "no flavor"


SUFFIXES = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
}
"""Kubernetes resource quantity suffixes (apimachinery ``resource.Quantity``: binary SI, decimal SI, milli)."""


def quantity(value: Any) -> float:
    """A resource quantity (``8``, ``"500m"``, ``"5120Mi"``, ``"1e3"``) as a number."""
    text = str(value).strip()
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if text.endswith(suffix) and text[: -len(suffix)]:
            return float(text[: -len(suffix)]) * SUFFIXES[suffix]
    return float(text)


def podset_from_template(name: str, count: int, template: Mapping[str, Any], excluded: Sequence[str] = ()) -> PodSet:
    """A PodSet from a pod template (``{"metadata": ..., "spec": ...}``): the containers' requests (limits where no
    request is given, as Kubernetes defaults them), node selector, tolerations and the TAS annotations. ``excluded``:
    the Kueue manager's ``resources.excludeResourcePrefixes`` (Kueue drops those resources before flavor
    assignment, so a request for one needs no quota)."""
    spec = template.get("spec") or {}
    requests: dict[str, float] = {}
    for c in spec.get("containers") or []:
        res = c.get("resources") or {}
        for r, v in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items():
            if not any(r.startswith(prefix) for prefix in excluded):
                requests[r] = requests.get(r, 0) + quantity(v)
    notes = (template.get("metadata") or {}).get("annotations") or {}
    topology = None
    if REQUIRED_TOPOLOGY in notes:
        topology = TopologyRequest("required", notes[REQUIRED_TOPOLOGY])
    elif PREFERRED_TOPOLOGY in notes:
        topology = TopologyRequest("preferred", notes[PREFERRED_TOPOLOGY])
    elif str(notes.get(UNCONSTRAINED_TOPOLOGY, "")).lower() == "true":
        topology = TopologyRequest("unconstrained")
    return PodSet(
        name, count, requests, dict(spec.get("nodeSelector") or {}), tuple(spec.get("tolerations") or ()), topology
    )


def queue_from_objects(
    cq: Mapping[str, Any], flavors: Sequence[Mapping[str, Any]], topologies: Sequence[Mapping[str, Any]] = ()
) -> QueueShape:
    """A ClusterQueue with the ResourceFlavors and Topologies it refers to, as rendered (Kueue v1beta2 objects)."""
    levels = {t["metadata"]["name"]: tuple(lv["nodeLabel"] for lv in t["spec"]["levels"]) for t in topologies}
    by_name = {}
    for rf in flavors:
        s = rf.get("spec") or {}
        topo = s.get("topologyName")
        by_name[rf["metadata"]["name"]] = Flavor(
            rf["metadata"]["name"],
            dict(s.get("nodeLabels") or {}),
            tuple(s.get("nodeTaints") or ()),
            tuple(s.get("tolerations") or ()),
            topo,
            levels.get(topo, ()) if topo else (),
        )
    spec = cq.get("spec") or {}
    groups = []
    for g in spec.get("resourceGroups") or []:
        quotas = {
            (f["name"], r["name"]): Quota(
                float(r.get("nominalQuota", 0)), float(r["borrowingLimit"]) if "borrowingLimit" in r else None
            )
            for f in g.get("flavors") or []
            for r in f.get("resources") or []
        }
        groups.append(
            Group(tuple(g.get("coveredResources") or ()), tuple(f["name"] for f in g.get("flavors") or []), quotas)
        )
    fung = spec.get("flavorFungibility") or {}
    return QueueShape(
        cq["metadata"]["name"],
        tuple(groups),
        by_name,
        spec.get("cohortName"),
        fung.get("whenCanBorrow", "MayStopSearch"),
        fung.get("whenCanPreempt", "TryNextFlavor"),
        fung.get("preference", "BorrowingOverPreemption"),
    )


def _tolerates(tol: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    if tol.get("effect") and tol.get("effect") != taint.get("effect"):
        return False
    if not tol.get("key"):
        return tol.get("operator") == "Exists"
    if tol.get("key") != taint.get("key"):
        return False
    return tol.get("operator") == "Exists" or str(tol.get("value", "")) == str(taint.get("value", ""))


def tas_mismatch(queue: QueueShape, ps: PodSet, flavor: Flavor, group: Group) -> str | None:
    """checkPodSetAndFlavorMatchForTAS: None when the flavor may serve the PodSet, else Kueue's reason."""
    implied = ps.topology is None and queue.tas_only
    if ps.topology is not None or implied:
        if implied:
            return None  # a TAS-only queue: every PodSet uses TAS
        if flavor.topology is None:
            if not set(ps.requests) & set(group.covered):
                return None  # quota-only resources of a group the TAS flavor does not serve
            return NO_TAS.format(f=flavor.name)
        level = ps.topology.level if ps.topology is not None else None  # not implied here: asked for
        if level is not None and level not in flavor.levels:
            return NO_LEVEL.format(f=flavor.name)
        return None
    if flavor.topology is not None:
        return ONLY_TAS.format(f=flavor.name)
    return None


def flavor_mismatch(queue: QueueShape, ps: PodSet, name: str, group: Group) -> str | None:
    """checkFlavorForPodSets: the first reason this flavor cannot serve the PodSet, or None."""
    flavor = queue.flavors.get(name)
    if flavor is None:
        return NOT_FOUND.format(f=name)
    why = tas_mismatch(queue, ps, flavor, group)
    if why is not None:
        return why
    tolerations = (*ps.tolerations, *flavor.tolerations)
    for taint in flavor.node_taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(_tolerates(t, taint) for t in tolerations):
            shown = f"{taint.get('key')}={taint.get('value', '')}:{taint.get('effect')}"
            return UNTOLERATED.format(t=shown, f=name)
    for key, value in ps.node_selector.items():  # only the flavor's own label keys count (flavorSelector)
        if key in flavor.node_labels and flavor.node_labels[key] != value:
            return NO_AFFINITY.format(f=name)
    return None


def max_capacity(queue: QueueShape, quota: Quota) -> float:
    """PotentialAvailable for a queue that has not lent anything: nominal, plus what it may borrow in a cohort
    (unbounded without a borrowingLimit: the cohort decides)."""
    if queue.cohort is None:
        return quota.nominal
    return math.inf if quota.borrowing_limit is None else quota.nominal + quota.borrowing_limit


def _should_try_next(mode: int, borrow: int, queue: QueueShape) -> bool:
    """shouldTryNextFlavor."""
    if mode == NO_FIT:
        return True
    if mode == PREEMPT and queue.when_can_preempt == "TryNextFlavor":
        return True
    return borrow > 0 and queue.when_can_borrow == "TryNextFlavor"


def _preferred(a: tuple[int, int], b: tuple[int, int], queue: QueueShape) -> bool:
    """isPreferred: a = (mode, borrowing level) better than b?"""
    if a[0] == NO_FIT:
        return False
    if b[0] == NO_FIT:
        return True
    if queue.preference == "PreemptionOverBorrowing" and a[1] != b[1]:
        return a[1] < b[1]
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


Available = Callable[[str, str], float]
"""(flavor, resource) -> quota free for this queue now (nominal and borrowable); None: an empty cluster."""


def assign(
    queue: QueueShape, ps: PodSet, available: Available | None = None, used: Available | None = None
) -> Assignment:
    """findFlavorForPodSets for one PodSet: per resource group, the flavors in order, each checked, then its quota;
    fungibility decides whether to stop at a flavor that needs borrowing or preemption. ``used``: (flavor, resource)
    -> what the queue already uses there (None: nothing): the PodSet borrows where that plus its request goes above
    nominal (``FindHeightOfLowestSubtreeThatFits``), so ``whenCanBorrow: TryNextFlavor`` looks on from there."""
    out: dict[str, str] = {}
    considered: list[tuple[str, str]] = []
    worst = FIT
    for res in [r for r, v in ps.requests.items() if v > 0]:
        if res in out:
            continue
        group = next((g for g in queue.groups if res in g.covered), None)
        if group is None:
            considered.append(("-", UNAVAILABLE.format(r=res)))
            return Assignment({}, tuple(considered))
        wanted = [r for r in group.covered if ps.requests.get(r, 0) > 0]
        best: tuple[int, int] = (NO_FIT, 1 << 30)
        chosen: str | None = None
        for name in group.flavors:
            why = flavor_mismatch(queue, ps, name, group)
            if why is not None:
                considered.append((name, why))
                continue
            mode, borrow = FIT, 0
            for r in wanted:
                quota = group.quotas.get((name, r), Quota(0))
                val = ps.requests[r] * ps.count
                cap = max_capacity(queue, quota)
                if val > cap:
                    considered.append((name, OVER_MAX.format(r=r, f=name, v=_num(val), m=_num(cap))))
                    mode = NO_FIT
                    break
                if val + (used(name, r) if used is not None else 0) > quota.nominal:
                    borrow = 1
                free = available(name, r) if available is not None else cap
                if val > free:
                    mode = min(mode, PREEMPT)
            if not _should_try_next(mode, borrow, queue):
                best, chosen = (mode, borrow), name
                break
            if _preferred((mode, borrow), best, queue):
                best, chosen = (mode, borrow), name
        if chosen is None:
            return Assignment({}, tuple(considered))
        worst = min(worst, best[0])
        out.update({r: chosen for r in wanted})
    return Assignment(out, tuple(considered), worst)


def rule_of(reason: str) -> str:
    """The Kueue rule behind one of its reasons (for findings and errors)."""
    for template, rule in RULE_OF.items():
        head = template.split("{")[0]
        tail = template.split("}")[-1]
        if reason.startswith(head) and reason.endswith(tail) if head else reason.endswith(tail):
            return rule
    return "Kueue's flavor assignment"


def _num(v: float) -> str:
    return "unbounded" if v == math.inf else (str(int(v)) if float(v).is_integer() else str(v))


def topology_error(queue: QueueShape, ps: PodSet, assignment: Assignment) -> str | None:
    """The TAS step Kueue runs after quota (``WorkloadsTopologyRequests``): a PodSet that asks for TAS, or any PodSet
    of a TAS-only ClusterQueue (TAS implied, ``isTASImplied``), needs exactly one TAS flavor among the flavors its
    resources got (``onlyTASFlavor``). A PodSet whose requests are all excluded resources gets no flavor, so in a
    TAS-only queue it fails with ``ErrNoTASFlavorAssigned`` and is never admitted. None: no objection."""
    if not assignment.admissible or ps.count == 0 or (ps.topology is None and not queue.tas_only):
        return None
    tas = sorted(
        {f for f in assignment.flavors.values() if queue.flavors.get(f) is not None and queue.flavors[f].topology}
    )
    if not tas:
        return NO_TAS_FLAVOR
    return MULTIPLE_TAS.format(f=", ".join(tas)) if len(tas) > 1 else None


def admit(queue: QueueShape, ps: PodSet, available: Available | None = None) -> Assignment:
    """``assign`` then the TAS step: Kueue's verdict on one PodSet (its flavors kept, NoFit on a TAS error)."""
    a = assign(queue, ps, available)
    why = topology_error(queue, ps, a)
    return a if why is None else Assignment(a.flavors, (*a.considered, ("-", why)), NO_FIT)
