"""The fleet rules through the analyzer protocol, on the fleet example's manager as recorded (worker facts resolved
from the worker stacks): the baseline passes, one changed fact violates with the exact subject and observation, and a
waiver naming the rule and the worker (or queue) silences it."""

from __future__ import annotations

import copy
import json
from typing import Any, Callable

import pytest

from policies.fleet import MANAGER_FACTS, WORKER_FACTS
from render.fleet_manager import MANAGER_FACTS_ANNOTATION, WORKER_FACTS_ANNOTATION
from tests.support.helm.examples import recording
from tests.support.policy.harness import Pack, with_props, wire

FLEET_RULES = (
    "cross-layer-fleet-workers",
    "cross-layer-fleet-queues-mirrored",
    "cross-layer-fleet-job-kinds",
    "cross-layer-fleet-quota-placeable",
    "cross-layer-fleet-quota-sum",
    "cross-layer-fleet-kueue-version",
    "cross-layer-fleet-reachable",
    "cross-layer-fleet-admissible",
    "cross-layer-fleet-gpus-per-node",
    "cross-layer-fleet-priorities",
    "cross-layer-fleet-cohort-limits",
)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return Pack()


def resources() -> list:
    return [copy.deepcopy(r) for r in recording("fleet").resources]


def edited(kind: str, name: str, change: Callable[[dict[str, Any]], None]) -> list:
    out = resources()
    for i, r in enumerate(out):
        if r.type.endswith(f":{kind}") and r.inputs.get("metadata", {}).get("name") == name:
            props = wire(r)
            change(props)
            out[i] = with_props(r, props)
            return out
    raise AssertionError(f"no {kind} {name}")


def worker_facts(name: str, change: Callable[[dict[str, Any]], None]) -> list:
    def apply(props: dict[str, Any]) -> None:
        facts = json.loads(props["metadata"]["annotations"][WORKER_FACTS])
        change(facts)
        props["metadata"]["annotations"][WORKER_FACTS] = json.dumps(facts)

    return edited("MultiKueueCluster", name, apply)


def declared(egress: list[str], worker: str, networks: list[str], reference: str | None = None) -> list:
    """The manager declares ``egress`` (egressCidrs, a NAT that is not gpu-cluster's); ``worker`` lists ``networks``
    and references ``reference`` (None: no fleet.manager)."""
    out = worker_facts(worker, lambda f: f.update(authorizedNetworks=networks, managerEgressFrom=reference))
    for i, r in enumerate(out):
        if r.type.endswith(":MultiKueueConfig"):
            props = wire(r)
            facts = json.loads(props["metadata"]["annotations"][MANAGER_FACTS])
            facts.update(egressSource="declared", egressCidrs=egress)
            props["metadata"]["annotations"][MANAGER_FACTS] = json.dumps(facts)
            out[i] = with_props(r, props)
    return out


def test_reachable_passes_by_reference_or_by_a_declared_listed_address(pack):
    pack.configure()
    reachable = "cross-layer-fleet-reachable"
    for res in (
        declared(["203.0.113.7/32"], "eks", ["198.51.100.0/24", "203.0.113.0/28"]),  # listed (inside a /28)
        declared(["203.0.113.7/32"], "eks", ["198.51.100.0/24"], "acme/gpu-cluster/fleet"),  # by reference
        worker_facts("gke", lambda f: f.update(authorizedNetworks=[], privateEndpoint=False)),
    ):  # only the ref
        assert [d for d in fleet_findings(pack, res) if d[0] == reachable] == []


def test_the_example_workers_admit_the_manager_by_reference():
    facts = {
        r.inputs["metadata"]["name"]: json.loads(r.inputs["metadata"]["annotations"][WORKER_FACTS])
        for r in recording("fleet").resources
        if r.type.endswith(":MultiKueueCluster")
    }
    assert {n: f["managerEgressFrom"] for n, f in facts.items()} == {
        "gke": "acme/gpu-cluster/fleet",
        "eks": "acme/gpu-cluster/fleet",
    }
    manager = next(
        json.loads(r.inputs["metadata"]["annotations"][MANAGER_FACTS])
        for r in recording("fleet").resources
        if r.type.endswith(":MultiKueueConfig")
    )
    assert (manager["egressSource"], manager["project"], manager["stack"]) == ("reserved", "gpu-cluster", "fleet")


def fleet_findings(pack: Pack, res: list) -> list[tuple[str, str, str]]:
    return [d for d in pack.stack(res) if d[0] in FLEET_RULES]


def test_annotations_agree_with_the_renderer():
    assert (MANAGER_FACTS, WORKER_FACTS) == (MANAGER_FACTS_ANNOTATION, WORKER_FACTS_ANNOTATION)


def test_the_example_fleet_passes_every_fleet_rule(pack):
    pack.configure()
    assert fleet_findings(pack, resources()) == []
    assert set(FLEET_RULES) <= {p.name for p in pack.info.policies}


def _drop_queue(f):
    f["queues"] = [q for q in f["queues"] if q["name"] != "product"]


def _no_trainjob(f):
    f["integrations"].remove("trainer.kubeflow.org/trainjob")


def _no_l4(f):
    for q in f["queues"]:
        if q["name"] == "research":
            q["gpus"].pop("L4")


def _quota(n):
    def change(props):
        props["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = n

    return change


def _unlimited_borrowing(props):
    """The manager's ClusterQueue as rendered before it mirrored the workers: no limit in the cohort."""
    for res in props["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
        res.pop("borrowingLimit", None)


def _eks_lends_all_its_p5(f):
    next(q for q in f["queues"] if q["name"] == "research")["lendable"]["H100_80GB"] = 12


def _tas_h100(f):
    """The worker's H100 flavor topology-aware (the default placement of a fixed-size pool) beside plain L4."""
    adm = f["admission"]
    adm["topologies"] = [{"metadata": {"name": "t"}, "spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}}]
    for flavor in adm["flavors"]:
        if adm["flavorPools"][flavor["metadata"]["name"]] == "h100":
            flavor["spec"]["topologyName"] = "t"
    del adm["queues"]["product"]  # one finding for the table: research's (product's is the same)


def _four_gpu_h100(f):
    next(g for g in f["gpus"] if g["model"] == "H100_80GB")["gpusPerNode"] = 4


def _eks_classes(f):
    f["priorityClasses"] = {"production": 900, "batch": 100}  # preemptible missing, production of another value


CASES = [  # (rule, resources, enforcement, waiver resource, words in the message)
    (
        "cross-layer-fleet-priorities",
        lambda: worker_facts("eks", _eks_classes),
        "mandatory",
        "eks",
        [
            "worker 'eks': the manager's priority classes are not the worker's",
            "missing preemptible; production 900 there, 1000 on the manager",
        ],
    ),
    (
        "cross-layer-fleet-admissible",
        lambda: worker_facts("gke", _tas_h100),
        "mandatory",
        "gke",
        [
            "worker 'gke' queue 'research'",
            "never admits a H100_80GB fleet job (runtime fleet-h100-80gb)",
            "supports only TopologyAwareScheduling",
            "not TAS-only",
        ],
    ),
    (
        "cross-layer-fleet-gpus-per-node",
        lambda: worker_facts("eks", _four_gpu_h100),
        "mandatory",
        "eks",
        ["worker 'eks': its H100_80GB nodes have 4 GPUs where worker 'gke''s have 8"],
    ),
    (
        "cross-layer-fleet-queues-mirrored",
        lambda: worker_facts("gke", _drop_queue),
        "mandatory",
        "gke",
        ["worker 'gke': the manager's queues are not mirrored there", "missing LocalQueue product in product-ml"],
    ),
    (
        "cross-layer-fleet-job-kinds",
        lambda: worker_facts("eks", _no_trainjob),
        "mandatory",
        "eks",
        ["worker 'eks'", "missing integrations trainer.kubeflow.org/trainjob"],
    ),
    (
        "cross-layer-fleet-quota-placeable",
        lambda: worker_facts("gke", _no_l4),
        "mandatory",
        "research",
        ["queue 'research': the manager admits l4 jobs no worker can ever admit", "manager quota 8 l4 GPUs"],
    ),
    (
        "cross-layer-fleet-quota-sum",
        lambda: edited("ClusterQueue", "research", _quota(30)),
        "advisory",
        "research",
        [
            "queue 'research': manager quota for h100-80gb differs",
            "manager 30 h100-80gb GPUs; workers gke 24 + eks 12 = 36",
            "part of it stays idle",
        ],
    ),
    (
        "cross-layer-fleet-quota-sum",
        lambda: edited("ClusterQueue", "research", _quota(40)),
        "advisory",
        "research",
        ["workers gke 24 + eks 12 = 36", "dispatched jobs wait on the workers"],
    ),
    # product may hold 12 + 12 H100 at the manager (gke lends it 8, eks 4); unlimited, it borrows research's unused
    (
        "cross-layer-fleet-cohort-limits",
        lambda: edited("ClusterQueue", "product", _unlimited_borrowing),
        "mandatory",
        "product",
        [
            "queue 'product': manager borrowingLimit for h100-80gb is not the workers' sum",
            "holds manager quota while no worker admits it",
            "observed: no limit",
            "12 (the sum over",
        ],
    ),
    (
        "cross-layer-fleet-cohort-limits",
        lambda: worker_facts("eks", _eks_lends_all_its_p5),
        "mandatory",
        "research",
        ["manager lendingLimit for h100-80gb is below the workers' sum", "observed: 12", "20 (the sum over"],
    ),
    (
        "cross-layer-fleet-kueue-version",
        lambda: worker_facts("eks", lambda f: f.update(kueueVersion="0.18.0")),
        "mandatory",
        "eks",
        ["observed: Kueue 0.18.0 on the worker, 0.19.2 on the manager"],
    ),
    (
        "cross-layer-fleet-reachable",
        lambda: worker_facts(
            "gke", lambda f: f.update(privateEndpoint=True, authorizedNetworks=[], managerEgressFrom=None)
        ),
        "mandatory",
        "gke",
        ["worker 'gke': its Kubernetes API has a private endpoint only"],
    ),
    # the example's manager reserves its NAT address at deploy: a worker without the reference cannot admit it
    (
        "cross-layer-fleet-reachable",
        lambda: worker_facts("eks", lambda f: f.update(managerEgressFrom=None)),
        "mandatory",
        "eks",
        [
            "reserved static NAT addresses, unknown offline",
            "a literal list without a reference",
            "observed: authorizedNetworks 198.51.100.0/24; no fleet.manager",
            "set fleet.manager: <org>/gpu-cluster/fleet on the worker",
        ],
    ),
    (
        "cross-layer-fleet-reachable",
        lambda: worker_facts("gke", lambda f: f.update(managerEgressFrom="acme/gpu-cluster/fleet-other")),
        "mandatory",
        "gke",
        ["its fleet.manager names another stack", "observed: fleet.manager acme/gpu-cluster/fleet-other"],
    ),
    (
        "cross-layer-fleet-reachable",
        lambda: declared(["203.0.113.7/32"], "eks", ["198.51.100.0/24"]),
        "mandatory",
        "eks",
        ["egress 203.0.113.7/32; authorizedNetworks 198.51.100.0/24", "Fix: add 203.0.113.7/32"],
    ),
    (
        "cross-layer-fleet-workers",
        lambda: worker_facts("eks", lambda f: f.update(role="manager")),
        "mandatory",
        "eks",
        ["worker 'eks': the manager cannot be its own worker"],
    ),
    (
        "cross-layer-fleet-workers",
        lambda: worker_facts("gke", lambda f: f.update(cluster="fleet-manager", region="us-central1", cloud="gcp")),
        "mandatory",
        "gke",
        ["observed: worker cluster fleet-manager in us-central1"],
    ),
    (
        "cross-layer-fleet-workers",
        lambda: edited("MultiKueueConfig", "fleet", lambda p: p["spec"].update(clusters=["gke", "gke"])),
        "mandatory",
        "fleet",
        ["MultiKueueConfig: a worker is listed more than once", "repeated gke"],
    ),
]


@pytest.mark.parametrize("rule,make,level,subject,words", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_violates_then_waived(pack, rule, make, level, subject, words):
    res = make()
    pack.configure()
    found = [d for d in fleet_findings(pack, res) if d[0] == rule]  # a change may also trip a neighbouring rule
    assert [(d[0], d[1]) for d in found] == [(rule, level)], found
    for word in words:
        assert word in found[0][2], found[0][2]
    pack.configure({rule: {"waivers": [{"rule": rule, "resource": subject, "reason": "accepted for this test"}]}})
    assert [d for d in fleet_findings(pack, res) if d[0] == rule] == []
    pack.configure()
