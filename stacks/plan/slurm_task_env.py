"""The fabric environment of every Slurm task: a ``TaskProlog`` and, per fabric NodeSet, the file it reads. Pure.

Names, paths, the script and the volume live here (the fabric contract reads them in ``stacks/plan/process_view.py``);
what is rendered from a pool's ``PodFabric`` (the env files, the ConfigMap data) in ``render/slurm_task_env.py``.

Slurm starts a task with the submitter's environment (``srun``/``sbatch`` propagate it), never with slurmd's:
SchedMD/slurm ``src/slurmd/slurmstepd/task.c`` builds the task's env from the step's env, and runs the
``TaskProlog`` with it, taking each ``export NAME=value`` line the prolog prints into the task (``print``/``unset``
aside; slurm.conf(5) "TaskProlog", prolog_epilog.html). A job submitted from a login or controller pod carries none of
the NCCL variables set on the slurmd container, so NCCL would never load the fabric's plugin. Hence:

- one ConfigMap (``slurm-task-env``) holds the prolog script and one ``<pool>.env`` per fabric NodeSet
  (``NAME=value`` lines: the fabric's env, as on the slurmd container);
- every NodeSet mounts it at ``/etc/gpu-cluster/task`` (the script; a fabric NodeSet also its own env file as
  ``fabric.env``), so the prolog exists on every node and prints exports only where a fabric is;
- slurm.conf gets ``TaskProlog=/etc/gpu-cluster/task/task-prolog.sh``.

``LD_LIBRARY_PATH`` is prepended to the task's own (the job may bring libraries); every other name is set.
"""

from __future__ import annotations

from typing import Any

CONFIG_MAP = "slurm-task-env"
VOLUME = "task-env"
TASK_DIR = "/etc/gpu-cluster/task"
PROLOG_NAME = "task-prolog.sh"
ENV_NAME = "fabric.env"
TASK_PROLOG = f"{TASK_DIR}/{PROLOG_NAME}"
ENV_FILE = f"{TASK_DIR}/{ENV_NAME}"
PREPENDED = ("LD_LIBRARY_PATH",)

PROLOG_SCRIPT = f"""#!/bin/sh
# gpu-cluster TaskProlog: the GPU fabric's environment for every task of a fabric NodeSet. Slurm starts tasks with
# the submitter's environment, not slurmd's; each `export NAME=value` line printed here is set in the task.
env_file={ENV_FILE}
[ -r "$env_file" ] || exit 0
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    ''|'#'*) ;;
    LD_LIBRARY_PATH=*) echo "export $line${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}" ;;
    *) echo "export $line" ;;
  esac
done < "$env_file"
exit 0
"""


def env_key(pool: str) -> str:
    return f"{pool}.env"


def volume(pool: str, has_env: bool) -> dict[str, Any]:
    """The NodeSet pod's volume: the script (executable), and on a fabric NodeSet its env file as ``fabric.env``."""
    items = [{"key": PROLOG_NAME, "path": PROLOG_NAME, "mode": 0o555}]
    if has_env:
        items.append({"key": env_key(pool), "path": ENV_NAME, "mode": 0o444})
    return {"name": VOLUME, "configMap": {"name": CONFIG_MAP, "items": items}}


MOUNT = {"name": VOLUME, "mountPath": TASK_DIR, "readOnly": True}


def parse_env_file(text: str) -> dict[str, str]:
    """The inverse of :func:`env_file` (what the prolog exports, before ``LD_LIBRARY_PATH`` is prepended)."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out
