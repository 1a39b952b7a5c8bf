"""The serving spec (``gpu-cluster:serving``): inference services with latency SLOs on the same pools as training.

Shape only lives here; the fit, SLO-evidence and cold-start checks live in ``stacks/validate/serving_sizing.py``,
the protection checks in ``stacks/validate/serving_protection.py`` (both run by ``stacks/validate/serving.py``), and
the arithmetic they share with the preview and the what-if in ``stacks/plan/serving.py``.
"""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from stacks.spec.model_base import SpecModel


class Precision(str, Enum):
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    FP4 = "fp4"


class Server(str, Enum):
    VLLM = "vllm"


class CustomModel(SpecModel):
    """A model the catalog does not list: the numbers the fit check needs, from the model's own config."""

    parameters_billions: float = Field(
        gt=0,
        allow_inf_nan=False,
        description=("Parameter count in billions, e.g. 8.03 (a count past 2^31 cannot be a config integer)."),
    )
    layers: int = Field(ge=1, description="Transformer layers (`num_hidden_layers`).")
    kv_heads: int = Field(
        ge=1, description="Key/value heads (`num_key_value_heads`; under GQA fewer than query heads)."
    )
    head_dim: int = Field(ge=1, description="Dimension per attention head (`head_dim`, or hidden size / heads).")


class Replicas(SpecModel):
    min: int = Field(
        1,
        ge=0,
        description=(
            "Replicas kept running whatever the load; never lent to training. Default 1. 0 (scale to zero) is refused: "
            "a Kubernetes Service does not buffer requests while no replica is ready."
        ),
    )
    max: int = Field(ge=1, description="Most replicas the autoscaler may run; the SLO check and the quota use it.")


class Slo(SpecModel):
    ttft_p99_ms: float = Field(gt=0, allow_inf_nan=False, description="p99 time to first token, in milliseconds.")
    tpot_p99_ms: float = Field(
        gt=0, allow_inf_nan=False, description=("p99 time per output token after the first, in milliseconds.")
    )


class Traffic(SpecModel):
    peak_requests_per_second: float = Field(gt=0, allow_inf_nan=False, description="Requests/s at the daily peak.")
    input_tokens: int = Field(ge=1, description="Mean prompt tokens per request.")
    output_tokens: int = Field(ge=1, description="Mean generated tokens per request.")
    daily_profile: list[float] = Field(
        default_factory=list,
        description=(
            "24 hourly shares of the peak (0 … 1, hour 0 = 00:00 UTC), read by the what-if. Empty (default): the peak "
            "all day."
        ),
    )
    ramp_seconds: int = Field(
        600,
        ge=0,
        description=(
            "Shortest time in which traffic rises from what `replicas.min` serve to the peak; compared with the time to "
            "start a replica. Default 600 (10 minutes)."
        ),
    )


class Autoscaling(SpecModel):
    waiting_requests_per_replica: int = Field(
        5,
        ge=1,
        description=(
            "Target of `vllm:num_requests_waiting` per replica (KEDA adds a replica above it). Default 5, the endpoint "
            "picker's queue-depth saturation threshold."
        ),
    )
    kv_cache_usage: float = Field(
        0.8,
        gt=0,
        le=1,
        allow_inf_nan=False,
        description=(
            "Target of `vllm:kv_cache_usage_perc` averaged over replicas. Default 0.8, the endpoint picker's KV-cache "
            "saturation threshold."
        ),
    )
    polling_interval_seconds: int = Field(15, ge=1, description="How often KEDA reads the metrics. Default 15.")
    cooldown_seconds: int = Field(
        300,
        ge=0,
        description=(
            "Scale-down stabilization: replicas are removed only after the load stayed low this long. Default 300."
        ),
    )
    prometheus_url: str | None = Field(
        None,
        description=(
            "PromQL endpoint KEDA queries for vLLM's metrics. Omitted on GKE: Managed Service for Prometheus "
            "(`https://monitoring.googleapis.com/v1/projects/<project>/location/global/prometheus`), filled by a "
            "PodMonitoring, read with KEDA's Monitoring Viewer identity. Required on EKS: an Amazon Managed Service for "
            "Prometheus workspace of the stack's region (`https://aps-workspaces.<region>.amazonaws.com/workspaces/<id>`, "
            "with `accountId` set): the stack creates the managed collector that fills it and KEDA's query grant. Any "
            "other URL is flagged: the stack cannot tell it holds vLLM's metrics, and without them replicas stay at min."
        ),
    )


class PodResources(SpecModel):
    cpu: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description=(
            "CPU cores each vLLM pod requests. Omitted: its GPUs' share of the node's CPUs after the system reserve "
            "(6 %, at least 2), e.g. 24 per H100 on a3-highgpu-8g. At most what one node of the pool has."
        ),
    )
    memory_gib: int | None = Field(
        None,
        ge=1,
        description=(
            "Memory each vLLM pod requests and is limited to, in GiB. Omitted: its GPUs' share of the node's memory "
            "after the system reserve (8 %, at least 6 GiB), e.g. 215 per H100 on a3-highgpu-8g. At most what one "
            "node of the pool has."
        ),
    )


class Service(SpecModel):
    name: str = Field(description="Service name (a DNS-1123 label, at most 40 characters): objects are named after it.")
    model: str | None = Field(
        None,
        description=(
            "A model from `catalog/data/models.csv` (`llama-3.1-8b`, `llama-3.1-70b`, …). Set this or `customModel`."
        ),
    )
    custom_model: CustomModel | None = Field(
        None,
        description=(
            "Your own model's numbers, when it is not in the catalog. No throughput row can match it, so its SLO is "
            "flagged as having no evidence."
        ),
    )
    model_uri: str = Field(
        description=(
            "Where the weights are: `gs://<bucket>/<prefix>` on GKE (mounted read-only with Cloud Storage FUSE: vLLM "
            "v0.10.0 reads no gs://), `s3://<bucket>/<prefix>` on EKS (vLLM streams it with the Run:ai Model Streamer), "
            "each read as the service's own identity, which the stack creates (read-only, that bucket; on S3 that "
            "prefix); or a Hugging Face repo ID (`meta-llama/Llama-3.1-8B-Instruct`, downloaded at start)."
        )
    )
    precision: Precision = Field(
        Precision.BF16, description="Weight precision: `bf16` (default), `fp16`, `fp8`, `fp4`."
    )
    kv_cache_precision: Precision | None = Field(
        None,
        description=(
            "KV-cache element precision (vLLM `--kv-cache-dtype`). Omitted: `fp8` with fp8/fp4 weights, else `bf16`."
        ),
    )
    server: Server = Field(Server.VLLM, description="Model server. `vllm` (default) is the one supported.")
    image: str | None = Field(
        None,
        description=(
            "Server image. Omitted: `docker.io/vllm/vllm-openai:v0.10.0` (the vLLM of the MLPerf v5.1 vLLM rows)."
        ),
    )
    pool: str = Field(description="The GPU pool (from `nodePools`) the replicas run on.")
    gpus_per_replica: int = Field(
        1, ge=1, description=("GPUs per replica = tensor parallel size × nodes per replica. Default 1.")
    )
    nodes_per_replica: int = Field(
        1,
        ge=1,
        description=(
            "Nodes one replica spans (a LeaderWorkerSet group when more than 1: tensor parallel within a node, "
            "pipeline parallel across nodes). Default 1 (a Deployment)."
        ),
    )
    replicas: Replicas = Field(description="Replica range for the autoscaler.")
    slo: Slo = Field(description="Latency targets at p99.")
    traffic: Traffic = Field(description="What the service must carry.")
    max_context_tokens: int = Field(
        8192, ge=16, description=("Longest prompt + output a request may use (vLLM `--max-model-len`). Default 8192.")
    )
    max_concurrency: int | None = Field(
        None,
        ge=1,
        description=(
            "Requests a replica holds at once (vLLM `--max-num-seqs`). Omitted: what Little's law needs at peak and at "
            "the SLO latency: peak req/s ÷ max replicas × (TTFT + output tokens × TPOT)."
        ),
    )
    gpu_memory_utilization: float = Field(
        0.92,
        gt=0,
        le=1,
        allow_inf_nan=False,
        description=(
            "Share of each GPU's memory the server may use (vLLM `--gpu-memory-utilization`). Default 0.92, vLLM's."
        ),
    )
    resources: PodResources | None = Field(
        None,
        description=(
            "CPU and memory of each vLLM pod. Omitted: its GPUs' share of the node, so serving is never BestEffort "
            "beside training (evicted first under memory pressure, starved of CPU)."
        ),
    )


class ServingSpec(SpecModel):
    namespace: str = Field("serving", description="Namespace of every service. Default `serving`.")
    priority: int = Field(
        1_000_000,
        ge=1,
        le=1_000_000_000,
        description=(
            "Pod and Kueue priority of serving; must be above every `scheduling.priorityClasses` value. "
            "Default 1000000."
        ),
    )
    autoscaling: Autoscaling = Field(default_factory=Autoscaling, description="KEDA settings shared by the services.")
    services: list[Service] = Field(min_length=1, description="The inference services.")
