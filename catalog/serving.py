"""Serving facts: the model table (``catalog/data/models.csv``: shape, parameters, licence) and measured serving
throughput at a p99 latency (``catalog/data/serving-throughput.csv``: MLPerf Inference v5.1 datacenter rows with
submitter, result ID and date). Validation, cost and the what-if read them; nothing here guesses a number. Pure data."""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from catalog.loader import DATA_DIR
from catalog.models import GpuModel

BYTES_PER_PARAMETER = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5}
"""Format widths (shared facts inference-research.md §2.3): the weights and, for the KV cache, each element."""
VLLM_GPU_MEMORY_UTILIZATION = 0.92
"""vLLM's default ``gpu_memory_utilization``: the share of each GPU's memory the engine may take, a per-instance limit
(vllm-project/vllm@002f10e0:vllm/config/cache.py; 0.90 in v0.6-era EngineArgs)."""
VLLM_IMAGE = "docker.io/vllm/vllm-openai:v0.10.0"
"""The server image rendered by default: the vLLM release the MLPerf v5.1 vLLM rows were measured with (RedHat 5.1-0082
and 5.1-0083, vLLM 0.10.0; shared facts inference-research.md §2.2), pinned by tag."""


@dataclass(frozen=True)
class ModelLoad:
    """A measured model load: bytes to GPU and the server ready, for one model size (the cold-start estimate scales
    the bytes part with the weights a node loads and keeps the rest, the engine start, fixed)."""

    weights_gb: float
    to_gpu_s: float
    ready_s: float
    source: str


RUNAI_STREAMER_LOAD = ModelLoad(
    15.0,
    4.88,
    23.18,
    "run-ai/runai-model-streamer@ccb94542:docs/src/benchmarks.md App. C/D (Meta-Llama-3-8B, 15 GB safetensors from a "
    "same-region S3 bucket, concurrency 32, vLLM 0.5.5, g5.12xlarge): model to GPU 4.88 s, vLLM ready 23.18 s",
)


@dataclass(frozen=True)
class ModelCard:
    model: str
    parameters: int
    layers: int
    kv_heads: int
    head_dim: int
    licence: str
    source: str

    def weights_bytes(self, precision: str) -> float:
        return self.parameters * BYTES_PER_PARAMETER[precision]

    def kv_bytes_per_token(self, precision: str) -> float:
        """K and V for every layer: 2 × layers × KV heads × head_dim × bytes (NVIDIA, "Mastering LLM Techniques:
        Inference Optimization"; KV heads, not query heads, under grouped-query attention)."""
        return 2 * self.layers * self.kv_heads * self.head_dim * BYTES_PER_PARAMETER[precision]


@dataclass(frozen=True)
class ThroughputRow:
    """One measured run: output tokens/s and requests/s per GPU with the p99 TTFT and TPOT it held."""

    model: str
    scenario: str
    gpu_model: GpuModel
    accelerators: int
    submitter: str
    result_id: str
    precision: str
    software: str
    output_tokens_per_s_per_gpu: float
    requests_per_s_per_gpu: float
    p99_ttft_ms: float
    p99_tpot_ms: float
    date: str
    source: str

    def cite(self) -> str:
        return (
            f"MLPerf Inference v5.1 {self.scenario}, {self.submitter} {self.result_id} ({self.date}), "
            f"{self.accelerators}× {self.gpu_model.value} {self.precision} {self.software}: "
            f"{self.output_tokens_per_s_per_gpu:,g} output tok/s per GPU at p99 TTFT {self.p99_ttft_ms:g} ms, "
            f"p99 TPOT {self.p99_tpot_ms:g} ms"
        )


def _rows(name: str) -> list[dict[str, str]]:
    with open(DATA_DIR / name, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@functools.cache
def load_models() -> dict[str, ModelCard]:
    out: dict[str, ModelCard] = {}
    for r in _rows("models.csv"):
        if not r["source"] or r["model"] in out:
            raise ValueError(f"models.csv: {r['model']}: no source, or listed twice")
        out[r["model"]] = ModelCard(
            r["model"],
            int(r["parameters"]),
            int(r["layers"]),
            int(r["kv_heads"]),
            int(r["head_dim"]),
            r["licence"],
            r["source"],
        )
    return out


@functools.cache
def load_throughput() -> tuple[ThroughputRow, ...]:
    out = []
    for r in _rows("serving-throughput.csv"):
        if not r["source"] or not r["date"] or r["precision"] not in BYTES_PER_PARAMETER:
            raise ValueError(f"serving-throughput.csv: {r['model']} {r['result_id']}: no source/date or bad precision")
        out.append(
            ThroughputRow(
                r["model"],
                r["scenario"],
                GpuModel(r["gpu_model"]),
                int(r["accelerators"]),
                r["submitter"],
                r["result_id"],
                r["precision"],
                r["software"],
                float(r["output_tokens_per_s_per_gpu"]),
                float(r["requests_per_s_per_gpu"]),
                float(r["p99_ttft_ms"]),
                float(r["p99_tpot_ms"]),
                r["date"],
                r["source"],
            )
        )
    return tuple(out)
