"""Helios (SenseTime, Slurm) and Acme (Shanghai AI Lab) job logs, ``cluster_log.csv`` schema:
``job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue`` (Acme has no ``vc``
and adds ``type``, ``gpu_time``); times are date-times or seconds. Also the Helios per-VC GPU capacity table
(``cluster_gpu_number.csv``: ``date``, one column per VC, ``total``)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from whatif.traces.records import TraceRecord, parse_time

COLUMNS = ("job_id", "user", "gpu_num", "submit_time", "start_time", "end_time")


def read_cluster_log(path: Path, gpus_per_node: int = 8) -> list[TraceRecord]:
    out = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"not a Helios/Acme cluster_log.csv: missing columns {', '.join(missing)}")
        for r in reader:
            gpus = int(float(r["gpu_num"] or 0))
            if gpus <= 0:
                continue  # CPU jobs do not use the GPU pools
            nodes = int(float(r.get("node_num") or 0)) or math.ceil(gpus / gpus_per_node)
            submit = parse_time(r["submit_time"])
            if submit is None:
                continue
            out.append(
                TraceRecord(
                    id=str(r["job_id"]),
                    submit=submit,
                    start=parse_time(r["start_time"]),
                    end=parse_time(r["end_time"]),
                    gpus_per_node=math.ceil(gpus / nodes),
                    nodes=nodes,
                    tenant={k: r[k] for k in ("vc", "user", "state", "type") if r.get(k)},
                )
            )
    return out


def read_vc_capacity(path: Path, date: str) -> dict[str, int]:
    """GPUs per virtual cluster on ``date`` (YYYY-MM-DD), VCs with none left out."""
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["date"] == date:
                return {vc: int(n) for vc, n in row.items() if vc not in ("date", "total") and int(n) > 0}
    raise ValueError(f"no row for {date} in {path.name}")
