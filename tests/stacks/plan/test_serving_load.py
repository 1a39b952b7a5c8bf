"""vLLM v0.10.0's runai_streamer reads the whole checkpoint in every rank, so a node's load grows with its ranks; the
rendered startup probe (and Kueue's pods-ready timeout, which follows it) must outlast that estimate."""

from __future__ import annotations

from stacks.plan.serving import model_card
from stacks.plan.serving_load import (
    PROBE_HEADROOM,
    STARTUP_PROBE_FAILURES,
    bytes_per_node_gb,
    startup_probe_failures,
    weights_load_s,
)
from tests.render.test_serving_render import _plan
from tests.support.helm.examples import rendered


def _services(stack):
    return {s.name: s for s in _plan(stack).spec.serving.services}


def test_each_of_a_nodes_ranks_reads_the_whole_checkpoint():
    big = _services("gke-serving")["long-context"]  # 405B FP8, 2 nodes × 8 GPUs
    card = model_card(big)
    full = card.weights_bytes("fp8") / 1e9
    assert bytes_per_node_gb(card, big) == 8 * full  # not full / 2 nodes
    assert weights_load_s(card, big) > 900  # the old fixed probe budget


def test_a_one_gpu_replica_reads_its_checkpoint_once_and_keeps_the_default_probe():
    chat = _services("gke-serving")["chat"]
    card = model_card(chat)
    assert bytes_per_node_gb(card, chat) == card.weights_bytes("fp8") / 1e9
    assert startup_probe_failures(card, chat) == STARTUP_PROBE_FAILURES


def test_the_rendered_probe_outlasts_the_per_rank_load_estimate():
    big = _services("gke-serving")["long-context"]
    program = [r.inputs for r in rendered("gke-serving").rec.resources if r.type.startswith("kubernetes:")]
    (lws,) = [o for o in program if isinstance(o, dict) and o.get("kind") == "LeaderWorkerSet"]
    probe = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["startupProbe"]
    budget = probe["periodSeconds"] * probe["failureThreshold"]
    assert budget >= PROBE_HEADROOM * weights_load_s(model_card(big), big) > 900
