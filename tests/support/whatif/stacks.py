"""Small stack configs for the what-if simulator tests (raw, as ``load_spec`` reads them), built by size."""

from __future__ import annotations

import copy
from typing import Any

from whatif.api import cluster_of, load_stack_spec
from whatif.cluster import ClusterModel
from whatif.model import SimOptions

BASE: dict[str, Any] = {
    "cloud": "gcp",
    "region": "us-central1",
    "project": "whatif-test",
    "cluster": {"name": "whatif"},
}


def h100_pool(nodes: int, name: str = "h100", multi: bool = True, min_nodes: int | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "machineType": "a3-highgpu-8g",
        "zones": ["us-central1-a"],
        "minNodes": nodes if min_nodes is None else min_nodes,
        "maxNodes": nodes,
        "multiNode": multi,
    }


def l4_pool(nodes: int, name: str = "l4", min_nodes: int = 0, spot: bool = False) -> dict[str, Any]:
    pool: dict[str, Any] = {
        "name": name,
        "machineType": "g2-standard-24",
        "zones": ["us-central1-a"],
        "minNodes": min_nodes,
        "maxNodes": nodes,
    }
    if spot:
        pool["capacity"] = {"type": "spot"}
    return pool


def kueue_config(pools: list[dict[str, Any]], queues: list[dict[str, Any]], **scheduling: Any) -> dict[str, Any]:
    cfg = copy.deepcopy(BASE)
    cfg["nodePools"] = pools
    cfg["scheduling"] = {"workload": "kubeflow", "queues": queues, "topology": {"mode": "none"}, **scheduling}
    return cfg


def slurm_config(pools: list[dict[str, Any]], queues: list[dict[str, Any]], **scheduling: Any) -> dict[str, Any]:
    cfg = copy.deepcopy(BASE)
    cfg["nodePools"] = pools
    cfg["scheduling"] = {"workload": "slurm", "queues": queues, **scheduling}
    return cfg


def fifo_l4(nodes: int) -> dict[str, Any]:
    """One queue, one fixed L4 pool of ``nodes`` (2 GPUs each), StrictFIFO, quota = the whole pool."""
    return kueue_config(
        [l4_pool(nodes, min_nodes=nodes)],
        [{"name": "team", "quotas": [{"pool": "l4", "gpus": 2 * nodes}]}],
        queueingStrategy="StrictFIFO",
    )


def cluster(cfg: dict[str, Any], options: SimOptions | None = None) -> ClusterModel:
    return cluster_of(load_stack_spec(cfg), "test", options)


def pods_run_after_s(pods: int = 1, pull: bool = True, image_gb: float | None = None) -> float:
    """Placement to all ``pods`` running on nodes up already (stacks/plan/start_time.py): the full image pull on a
    node without the image (``pull``; the catalog's pull time for an undeclared size unless ``image_gb``), admission,
    scheduling and the pod start. A job's work, and so its end, counts from then."""
    from stacks.plan.start_time import factors, overhead_s

    f = factors()
    full = f["undeclared_pull_s"] if image_gb is None else image_gb / f["pull_gb_per_s"]
    return (full if pull else 0.0) + overhead_s(pods, f)


COLD = pods_run_after_s()
"""One pod on a node that never had the image (size undeclared: a 300 s pull): ~305.0 s."""
WARM = pods_run_after_s(pull=False)
"""One pod on a node that has the image: ~5.03 s."""
