"""The ``slurm-task-env`` ConfigMap's data from the pools' fabrics: the TaskProlog script and one ``<pool>.env`` per
fabric NodeSet (``stacks/plan/slurm_task_env.py`` says why and where it is mounted). Pure."""

from __future__ import annotations

from typing import Mapping

from stacks.plan.slurm_task_env import PROLOG_NAME, PROLOG_SCRIPT, env_key
from render.fabric_pod import PodFabric


def env_file(fabric: PodFabric) -> str:
    """``NAME=value`` lines of the fabric's env (values never contain a newline)."""
    return "".join(f"{k}={v}\n" for k, v in fabric.env.items())


def wired(fabrics: Mapping[str, PodFabric | None], pools: list[str]) -> dict[str, PodFabric]:
    """The NodeSets (of ``pools``) whose tasks get a fabric env."""
    return {p: f for p, f in fabrics.items() if f is not None and f.env and p in pools}


def config_map_data(fabrics: Mapping[str, PodFabric]) -> dict[str, str]:
    return {PROLOG_NAME: PROLOG_SCRIPT, **{env_key(p): env_file(f) for p, f in sorted(fabrics.items())}}
