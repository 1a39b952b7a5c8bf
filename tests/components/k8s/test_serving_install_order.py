"""What the serving layer creates before what, as the program records it on the GKE example: GKE installs the
InferencePool CRD itself (the program creating it again fails with AlreadyExists), only the InferencePool releases and
the routes wait on routing, and the endpoint-picker releases wait for the queue Kueue gives their queue-less pods."""

from __future__ import annotations

import functools

from preview.engine import PROJECT_ROOT, read_stack_file, run_program


@functools.cache
def _rec():
    return run_program(read_stack_file(PROJECT_ROOT / "Pulumi.gke-serving.yaml"), "gke-serving")


def _by_name():
    return {r.name: r for r in _rec().resources}


def test_gke_serving_does_not_create_the_inference_pool_crd_gke_installs():
    assert [
        r.name
        for r in _rec().resources
        if "inferencepool-crd" in r.name or r.type.endswith("yaml/v2:ConfigFile") and "serving" in r.name
    ] == []


def _cluster_installs_no_crd(monkeypatch):
    """The same program on a cluster that does not install the InferencePool CRD (the program then creates it)."""
    import components.k8s.serving as serving

    class Unmanaged(serving.Serving):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "inference_crd_managed": False})

    monkeypatch.setattr(serving, "Serving", Unmanaged)
    return run_program(read_stack_file(PROJECT_ROOT / "Pulumi.gke-serving.yaml"), "gke-serving")


def test_where_the_program_creates_the_crd_only_pools_and_routes_wait_for_it(monkeypatch):
    rec = _cluster_installs_no_crd(monkeypatch)
    by_name = {r.name: r for r in rec.resources}
    crd = by_name["serving-inferencepool-crd"].urn
    for waits in ("serving-chat-pool", "serving-long-context-pool", "serving-httproute-chat"):
        assert crd in by_name[waits].dependencies, waits
    workloads = [
        r
        for r in rec.resources
        if r.type.rsplit(":", 1)[-1]
        in (
            "Deployment",
            "LeaderWorkerSet",
            "ScaledObject",
            "LocalQueue",
            "ClusterQueue",
            "Service",
            "PodDisruptionBudget",
        )
        and r.name.startswith("serving-")
    ]
    assert {r.type.rsplit(":", 1)[-1] for r in workloads} >= {
        "Deployment",
        "LeaderWorkerSet",
        "ScaledObject",
        "LocalQueue",
    }
    for r in workloads:
        assert crd not in r.dependencies, r.name


def test_workloads_wait_for_no_inference_pool_release():
    by_name = _by_name()
    routing = {by_name[n].urn for n in ("serving-chat-pool", "serving-long-context-pool")}
    workloads = [
        r
        for r in _rec().resources
        if r.type.rsplit(":", 1)[-1] in ("Deployment", "LeaderWorkerSet", "ScaledObject", "LocalQueue", "ClusterQueue")
        and r.name.startswith("serving-")
    ]
    for r in workloads:
        assert not routing & set(r.dependencies), r.name


def test_each_route_waits_for_its_pool_release():
    by_name = _by_name()
    route = by_name["serving-httproute-chat"]
    assert by_name["serving-chat-pool"].urn in route.dependencies


def test_endpoint_picker_releases_wait_for_the_default_queue_its_clusterqueue_and_flavor():
    by_name = _by_name()
    queue = {
        by_name[n].urn
        for n in (
            "serving-localqueue-default",
            "serving-clusterqueue-serving-default",
            "serving-resourceflavor-serving-default",
        )
    }
    for pool in ("serving-chat-pool", "serving-long-context-pool"):
        assert queue <= set(by_name[pool].dependencies), pool


def test_each_serving_workload_waits_for_its_gpu_pool_for_its_whole_ready_budget():
    by_name = _by_name()
    # the stack's GPU pool, which the chat and 405B workloads both run on (a dependency on its component is
    # recorded as one on the component's resources)
    (pool,) = [r for r in _rec().resources if r.name == "h100" and r.type == "gcp:container/nodePool:NodePool"]
    # chat: a fixed pool (no node start) + image + pod start + the 900 s startup probe -> 20 min; the 405B: its
    # raised probe (1,620 s) -> 32 min; both longer than Pulumi's 10-minute default wait
    for res, minutes in (("serving-deployment-chat", "20m"), ("serving-leaderworkerset-long-context", "32m")):
        assert pool.urn in by_name[res].dependencies, res
        assert by_name[res].custom_timeouts == {"create": minutes, "update": minutes}, res


def test_the_preview_prints_each_services_ready_wait():
    from io import StringIO

    from rich.console import Console

    from preview.render.serving import print_serving
    from preview.run import preview_stack

    rows = preview_stack("gke-serving").serving
    assert {r["service"]: r["readyTimeoutS"] for r in rows} == {"chat": 1200, "long-context": 1920}
    out = StringIO()
    print_serving(Console(file=out, width=250), rows)
    assert "ready ≤ 20 min" in out.getvalue() and "ready ≤ 32 min" in out.getvalue()


def test_on_eks_the_serving_deployment_waits_for_its_node_group():
    rec = run_program(read_stack_file(PROJECT_ROOT / "Pulumi.eks-serving.yaml"), "eks-serving")
    groups = {r.urn: r.name for r in rec.resources if r.type == "aws:eks/nodeGroup:NodeGroup"}
    (deployment,) = [r for r in rec.resources if r.type.endswith(":Deployment") and r.name.startswith("serving-")]
    assert "l40s-serve" in {groups[d] for d in deployment.dependencies if d in groups}
    assert deployment.custom_timeouts == {"create": "22m", "update": "22m"}


def test_a_kueue_managed_leaderworkerset_is_recreated_only_when_kueue_forbids_the_update():
    # Kueue v0.19.2's LeaderWorkerSet webhook refuses changes to the pod specs' shape (requests, ports, placement)
    # and to the group size of a set with a queue label: Pulumi deletes the set and creates it again for those; an
    # image or argument change is an ordinary rolling update (recreating would take the only replica down)
    by_name = _by_name()
    lws = by_name["serving-leaderworkerset-long-context"]
    assert lws.delete_before_replace
    paths = set(lws.replace_on_changes)
    for template in ("leaderTemplate", "workerTemplate"):
        spec = f"spec.leaderWorkerTemplate.{template}.spec"
        assert {
            f"{spec}.containers[*].resources.requests",
            f"{spec}.containers[*].ports",
            f"{spec}.nodeSelector",
            f"{spec}.affinity",
            f"{spec}.tolerations",
        } <= paths
        assert spec not in paths  # the whole pod spec would recreate the set on an image change
        assert not any(p.endswith((".image", ".args", ".command", ".env")) for p in paths)
    assert "spec.leaderWorkerTemplate.size" in paths
    chat = by_name["serving-deployment-chat"]  # Kueue admits a Deployment pod by pod: it rolls as usual
    assert not chat.delete_before_replace and chat.replace_on_changes == []
