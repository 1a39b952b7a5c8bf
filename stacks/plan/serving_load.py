"""How long a vLLM replica takes to load its weights, and the startup-probe budget that follows. Pure.

vLLM v0.10.0 (the pinned server) streams a bucket with ``--load-format runai_streamer`` through
``runai_safetensors_weights_iterator`` (``vllm/model_executor/model_loader/weight_utils.py`` at v0.10.0): every file,
in every rank. There is no distributed streaming in that version (it came later, as ``is_distributed``), and each
rank keeps only its own shard after reading the whole checkpoint. A node running 8 tensor-parallel ranks therefore
reads the checkpoint 8 times: for Llama 3.1 405B in FP8, ≈ 8 × 406 GB through one node's path (on GKE one Cloud
Storage FUSE sidecar) instead of its 203 GB share.

The only measured rate is the Run:ai streamer's own (``catalog/serving.RUNAI_STREAMER_LOAD``: 15 GB from same-region
S3 in 4.88 s, one process). No source measured concurrent readers through Cloud Storage FUSE or S3 on one node, so
the estimate lets a node's ranks share that one measured rate; it is an estimate to check by measuring, not a
figure. The page cache may dedupe reads on a node; Cloud Storage FUSE invalidates it on open by default.
"""

from __future__ import annotations

import math

from catalog.serving import RUNAI_STREAMER_LOAD, ModelCard
from stacks.spec.serving import Service

STARTUP_PROBE_PERIOD_S = 10
STARTUP_PROBE_FAILURES = 90
"""vLLM's default startup probe (``render/serving_workload.py``): 90 × 10 s = 900 s for weights and engine start."""
PROBE_HEADROOM = 1.5
"""A service whose estimated load is longer than the default probe gets 1.5 × the estimate: the rate is not
measured on this path, and a probe that strikes first restarts the pod (an LWS group with it) for good."""


def streams_every_rank(svc: Service) -> bool:
    """A bucket URI: vLLM loads it with ``runai_streamer``, which reads the whole checkpoint in each rank."""
    return svc.model_uri.startswith(("gs://", "s3://"))


def ranks_per_node(svc: Service) -> int:
    """Tensor-parallel ranks on one node (tensor parallel within a node, pipeline parallel across nodes)."""
    return max(1, svc.gpus_per_replica // svc.nodes_per_replica)


def bytes_per_node_gb(card: ModelCard, svc: Service) -> float:
    """GB one node reads: every rank the whole checkpoint when streamed; otherwise the node's share."""
    full = card.weights_bytes(svc.precision.value) / 1e9
    return ranks_per_node(svc) * full if streams_every_rank(svc) else full / svc.nodes_per_replica


def weights_load_s(card: ModelCard, svc: Service) -> float:
    """Weights to GPU and the server ready on one node, scaled from the Run:ai streamer measurement: the bytes part
    grows with the bytes the node reads (its ranks sharing the measured rate), the engine start stays."""
    ref = RUNAI_STREAMER_LOAD
    return ref.to_gpu_s * bytes_per_node_gb(card, svc) / ref.weights_gb + (ref.ready_s - ref.to_gpu_s)


def startup_probe_failures(card: ModelCard | None, svc: Service) -> int:
    """The rendered startup probe's failureThreshold: the default 900 s, or 1.5 × the estimated load when longer."""
    if card is None:
        return STARTUP_PROBE_FAILURES
    need = math.ceil(PROBE_HEADROOM * weights_load_s(card, svc) / STARTUP_PROBE_PERIOD_S)
    return max(STARTUP_PROBE_FAILURES, need)


def startup_probe_budget_s(card: ModelCard | None, svc: Service) -> int:
    return STARTUP_PROBE_PERIOD_S * startup_probe_failures(card, svc)
