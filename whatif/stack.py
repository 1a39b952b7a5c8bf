"""A stack for the simulator: find its file, read and validate its config as the preview does, and turn it into the
cluster model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stacks.spec.stack import StackSpec
from stacks.validate.load import decode_config, load_spec
from whatif.cluster import ClusterModel
from whatif.cluster_build import build_cluster
from whatif.model import SimOptions
from whatif.yaml_read import safe_load

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def stack_path(name: str, root: Path = PROJECT_ROOT) -> Path:
    return root / f"Pulumi.{name}.yaml"


def read_stack_config(path: Path) -> dict[str, Any]:
    """The ``config:`` map of a ``Pulumi.<stack>.yaml`` (the preview reads it the same way)."""
    doc = safe_load(path.read_text(encoding="utf-8")) or {}
    return dict(doc.get("config") or {})


def load_stack_spec(stack: str | Path | dict[str, Any]) -> StackSpec:
    """A validated spec from a stack name, a stack file, or a config dict; bad input raises ``SpecError`` with every
    problem (the preview's messages)."""
    if isinstance(stack, dict):
        raw = decode_config(stack) if any(":" in k for k in stack) else stack
    else:
        path = stack if isinstance(stack, Path) else stack_path(stack)
        raw = decode_config(read_stack_config(path))
    spec, _warnings = load_spec(raw)
    return spec


def cluster_of(spec: StackSpec, name: str = "stack", options: SimOptions | None = None) -> ClusterModel:
    opts = options or SimOptions()
    if spec.serving is not None and spec.scheduling is not None and spec.scheduling.workload.value == "kubeflow":
        # serving's ClusterQueue joins the cohort as rendered; here its quota is idle (training may borrow it): the
        # serving traffic itself is simulated by python -m whatif.serving
        from stacks.plan.serving import with_serving_queue

        spec = spec.model_copy(
            update={"scheduling": with_serving_queue(spec.scheduling, spec.serving, spec.cloud, spec.node_pools)}
        )
    return build_cluster(
        spec, name, opts.scheduler, opts.spot_interruptions_per_node_month, opts.assume, opts.price_overrides
    )
