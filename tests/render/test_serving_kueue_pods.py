"""Every pod of the serving namespace starts under Kueue as rendered: the manager configuration and the endpoint
pickers come from the pinned charts rendered with real Helm, the LocalQueues, ClusterQueues and vLLM workloads from
the program, and Kueue's decisions from its ported rules (``stacks/plan/kueue_pods.py`` for which queue a pod is in,
``stacks/plan/admission.py`` for the flavor). Before the serving namespace had a ``default`` LocalQueue, the endpoint
pickers (no queue label, ``manageJobsWithoutQueueName``) were gated for good and the Gateway had no picker; and the
single pods-ready timeout (600 s) evicted a vLLM pod its own 900 s startup probe still allowed to load."""

from __future__ import annotations

import copy

import yaml

from render.kueue_config import IGNORED_RESOURCES
from stacks.plan.admission import NO_TAS_FLAVOR, admit, podset_from_template, queue_from_objects
from render.kueue_config import SERVING_INTEGRATIONS
from stacks.plan.kueue_pods import LWS_INTEGRATION, pod_fate, workloads_of
from stacks.plan.serving import model_card, replica_start
from tests.render.test_serving_render import _plan
from tests.support.helm.examples import rendered

NS = "serving"


def _setup():
    st = rendered("gke-serving")
    cm = st.one("ConfigMap", "kueue-manager-config")
    config = yaml.safe_load(cm["data"]["controller_manager_config.yaml"])
    program = [r.inputs for r in st.rec.resources if r.type.startswith("kubernetes:")]
    by_kind: dict[str, list] = {}
    for o in program:
        if isinstance(o, dict) and "kind" in o:
            by_kind.setdefault(o["kind"], []).append(o)
    return st, config, by_kind


def _templates(obj):
    if obj["kind"] == "Deployment":
        return [obj["spec"]["template"]]
    lws = obj["spec"]["leaderWorkerTemplate"]
    return [lws["leaderTemplate"], lws["workerTemplate"]]


def _admit(config, by_kind, local_queue, template, cluster_queue=None):
    lq = next(
        q for q in by_kind["LocalQueue"] if q["metadata"]["namespace"] == NS and q["metadata"]["name"] == local_queue
    )
    cq = next(
        q for q in by_kind["ClusterQueue"] if q["metadata"]["name"] == (cluster_queue or lq["spec"]["clusterQueue"])
    )
    # Kueue drops the configured prefixes from a workload's requests before it looks for quota
    excluded = config["resources"]["excludeResourcePrefixes"]
    template = copy.deepcopy(template)
    for c in template["spec"]["containers"]:
        for kind in ("requests", "limits"):
            res = (c.get("resources") or {}).get(kind) or {}
            for r in [r for r in res if any(r.startswith(p) for p in excluded)]:
                del res[r]
    ps = podset_from_template("main", 1, template)
    return cq, admit(queue_from_objects(cq, by_kind["ResourceFlavor"], by_kind.get("Topology", [])), ps)


def test_the_endpoint_pickers_are_queued_and_admitted_without_a_gpu():
    st, config, by_kind = _setup()
    assert tuple(config["resources"]["excludeResourcePrefixes"]) == IGNORED_RESOURCES
    pickers = [o for o in st.objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-epp")]
    assert len(pickers) == 2  # chat, long-context
    for epp in pickers:
        labels = epp["spec"]["template"]["metadata"].get("labels") or {}
        fate = pod_fate(config, NS, labels, by_kind["LocalQueue"])
        assert fate.managed and not fate.gated_forever, epp["metadata"]["name"]
        cq, a = _admit(config, by_kind, fate.local_queue, epp["spec"]["template"])
        # its own ClusterQueue with a plain flavor: no TAS implied, no GPU pool forced on it
        assert cq["metadata"]["name"] == "serving-default" and a.admissible and a.flavors == {}, a.why()
        quota = [r for g in cq["spec"]["resourceGroups"] for f in g["flavors"] for r in f["resources"]]
        assert quota == [{"name": "nvidia.com/gpu", "nominalQuota": 0}] and "cohortName" not in cq["spec"]


def test_in_servings_tas_only_queue_the_pickers_would_never_be_admitted():
    """Serving's ClusterQueue has only TAS flavors, so Kueue implies TAS for every pod in it; a picker asks no quota
    resource, gets no flavor and fails the TAS step ("no TAS flavor assigned")."""
    st, config, by_kind = _setup()
    epp = next(o for o in st.objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-epp"))
    cq, a = _admit(config, by_kind, "default", epp["spec"]["template"], cluster_queue="serving")
    assert not a.admissible and NO_TAS_FLAVOR in a.why()


def test_vllm_pods_are_admitted_against_servings_own_quota_on_their_pool():
    _, config, by_kind = _setup()
    workloads = [
        o for k in ("Deployment", "LeaderWorkerSet") for o in by_kind.get(k, []) if o["metadata"].get("namespace") == NS
    ]
    assert {w["metadata"]["name"] for w in workloads} == {"chat", "long-context"}
    for w in workloads:
        for t in _templates(w):
            fate = pod_fate(config, NS, t["metadata"]["labels"], by_kind["LocalQueue"])
            assert fate.local_queue == "serving"
            cq, a = _admit(config, by_kind, fate.local_queue, t)
            assert a.admissible and set(a.flavors) == {"nvidia.com/gpu"}, a.why()


def test_a_leader_worker_set_group_is_admitted_as_one_workload_on_one_flavor():
    """The 405B replica (2 nodes × 8 GPUs) is one Kueue workload: leader and worker PodSets admitted together on the
    pool's flavor within serving's own (never borrowed) quota, not two single-pod workloads."""
    _, config, by_kind = _setup()
    assert set(SERVING_INTEGRATIONS) <= set(config["integrations"]["frameworks"])
    (lws,) = [o for o in by_kind["LeaderWorkerSet"] if o["metadata"]["namespace"] == NS]
    (workload,) = workloads_of(config, lws)
    assert [(p.name, p.count) for p in workload] == [("leader", 1), ("worker", 1)]
    used: dict[str, float] = {}
    for p in workload:
        cq, a = _admit(config, by_kind, "serving", p.template)
        assert a.admissible, a.why()
        flavor = a.flavors["nvidia.com/gpu"]
        gpus = p.template["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]
        used[flavor] = used.get(flavor, 0) + int(gpus) * p.count
    ((flavor, gpus),) = used.items()
    nominal = next(
        r["nominalQuota"]
        for g in cq["spec"]["resourceGroups"]
        for f in g["flavors"]
        if f["name"] == flavor
        for r in f["resources"]
        if r["name"] == "nvidia.com/gpu"
    )
    assert gpus == 16 and gpus <= nominal


def test_without_the_lws_integration_each_pod_of_a_group_is_its_own_workload():
    _, config, by_kind = _setup()
    (lws,) = [o for o in by_kind["LeaderWorkerSet"] if o["metadata"]["namespace"] == NS]
    plain = {
        **config,
        "integrations": {"frameworks": [f for f in config["integrations"]["frameworks"] if f != LWS_INTEGRATION]},
    }
    assert [[(p.name, p.count) for p in w] for w in workloads_of(plain, lws)] == [[("main", 1)], [("main", 1)]]


def test_stacks_without_serving_do_not_enable_the_serving_integrations():
    config = yaml.safe_load(
        rendered("gke-kueue").one("ConfigMap", "kueue-manager-config")["data"]["controller_manager_config.yaml"]
    )
    assert not set(SERVING_INTEGRATIONS) & set(config["integrations"]["frameworks"])


def test_without_the_default_queue_the_pickers_would_wait_forever():
    st, config, by_kind = _setup()
    others = [q for q in by_kind["LocalQueue"] if q["metadata"]["name"] != "default"]
    epp = next(o for o in st.objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-epp"))
    assert pod_fate(config, NS, epp["spec"]["template"]["metadata"].get("labels") or {}, others).gated_forever


def test_pods_outside_the_selected_namespaces_are_never_kueues():
    _, config, by_kind = _setup()
    fate = pod_fate(config, "keda", {"kueue.x-k8s.io/queue-name": "serving"}, by_kind["LocalQueue"])
    assert not fate.managed


def _seconds(text: str) -> float:
    return float(text.rstrip("s"))


def test_the_pods_ready_timeout_outlasts_every_serving_pods_own_startup_budget():
    """Kueue has one waitForPodsReady for all workloads: a vLLM pod still loading weights must not be evicted by it.
    Its budget from admission: the image, the pod start (the pool is fixed, no node), then the startup probe."""
    st, config, by_kind = _setup()
    timeout = _seconds(config["waitForPodsReady"]["timeout"])
    plan = _plan("gke-serving")
    pools = {p.name: p for p in plan.spec.node_pools}
    for w in (
        o for k in ("Deployment", "LeaderWorkerSet") for o in by_kind.get(k, []) if o["metadata"].get("namespace") == NS
    ):
        probe = _templates(w)[0]["spec"]["containers"][0]["startupProbe"]
        svc = next(s for s in plan.spec.serving.services if s.name == w["metadata"]["name"])
        card = model_card(svc)
        rs = replica_start(plan.spec.cloud, pools[svc.pool], svc, card, node_running=True)
        budget = rs.pull_s + rs.pod_s + probe["periodSeconds"] * probe["failureThreshold"]
        assert timeout >= budget > 600, (w["metadata"]["name"], timeout, budget)


def test_stacks_without_serving_keep_their_gang_timeout():
    config = yaml.safe_load(
        rendered("gke-kueue").one("ConfigMap", "kueue-manager-config")["data"]["controller_manager_config.yaml"]
    )
    assert config["waitForPodsReady"]["timeout"] == "900s"  # its own gang.timeoutSeconds
