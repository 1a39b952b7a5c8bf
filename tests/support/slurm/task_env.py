"""What kubelet does with the NodeSet's ``slurm-task-env`` ConfigMap volume, for the real slurmd daemons: project the
volume's items (key -> path, mode) into a directory per node, and mount it at the volume's ``mountPath`` in that
slurmd's own mount namespace (the daemons share one Debian root, so each needs a private view of the path, as each
Slinky pod has). Nothing else of the rendered values changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stacks.plan.slurm_task_env import MOUNT, VOLUME


def task_env_volume(nodeset: dict[str, Any]) -> dict[str, Any] | None:
    """The NodeSet pod's task-env volume, if the rendered values mount one on slurmd."""
    mounts = [m for m in nodeset.get("slurmd", {}).get("volumeMounts", []) if m.get("name") == VOLUME]
    volumes = [v for v in nodeset.get("podSpec", {}).get("volumes", []) if v.get("name") == VOLUME]
    return volumes[0] if mounts and volumes else None


def project(volume: dict[str, Any], data: dict[str, str], dest: Path) -> None:
    """Write each item of the configMap volume into ``dest`` (kubelet's projection, without its symlinks)."""
    dest.mkdir(parents=True, exist_ok=True)
    for item in volume["configMap"]["items"]:
        path = dest / item["path"]
        path.write_text(data[item["key"]], encoding="utf-8")
        path.chmod(item.get("mode", 0o644))


def mount_prefix(source: Path, root: Path) -> tuple[list[str], Path]:
    """The command prefix that runs the rest in a private mount namespace with ``source`` bound at the mount path
    inside ``root`` (created empty in the root when missing), and that target."""
    target = root / MOUNT["mountPath"].lstrip("/")
    target.mkdir(parents=True, exist_ok=True)
    return (
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            'mount --bind "$1" "$2" && shift 2 && exec "$@"',
            "sh",
            str(source),
            str(target),
        ],
        target,
    )
