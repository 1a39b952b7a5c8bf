"""The PNG a user puts in a design doc: GPUs allocated vs up and the queue depth over time, and the CDF of queue waits
per queue (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from whatif.model import Sample

MAX_POINTS = 3000


def _thin(samples: Sequence[Sample]) -> list[Sample]:
    """Keep every step of short runs; for long ones, keep the busiest sample in each bucket (peaks stay visible)."""
    if len(samples) <= MAX_POINTS:
        return list(samples)
    step = len(samples) / MAX_POINTS
    out = []
    for i in range(MAX_POINTS):
        bucket = samples[int(i * step) : int((i + 1) * step)] or [samples[-1]]
        out.append(max(bucket, key=lambda s: (s.pending, s.allocated_gpus)))
    return out


def write_chart(path: Path, title: str, samples: Sequence[Sample], waits: dict[str, list[float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = _thin(samples)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7.5), constrained_layout=True)
    hours = [s.t / 3600 for s in pts]
    top.step(hours, [s.up_gpus for s in pts], where="post", color="#999999", label="GPUs up (paid)")
    top.step(hours, [s.allocated_gpus for s in pts], where="post", color="#1f77b4", label="GPUs allocated")
    top.set_xlabel("hours")
    top.set_ylabel("GPUs")
    depth = top.twinx()
    depth.step(hours, [s.pending for s in pts], where="post", color="#d62728", alpha=0.6, label="jobs waiting")
    depth.set_ylabel("jobs waiting", color="#d62728")
    lines = top.get_legend_handles_labels()
    more = depth.get_legend_handles_labels()
    top.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left", fontsize=8)
    top.set_title(title, fontsize=10)
    for queue, values in sorted(waits.items()):
        if not values:
            continue
        xs = sorted(max(v, 1.0) / 60 for v in values)  # minutes; a wait under a second is drawn at 1 s
        ys = [(i + 1) / len(xs) for i in range(len(xs))]
        bottom.step(xs, ys, where="post", label=f"{queue} ({len(xs)} jobs)")
    bottom.set_xscale("log")
    bottom.set_xlabel("queue wait, minutes (log scale)")
    bottom.set_ylabel("fraction of jobs started")
    bottom.set_ylim(0, 1.02)
    bottom.grid(True, alpha=0.3)
    bottom.legend(loc="lower right", fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)
