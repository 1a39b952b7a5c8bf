"""Alibaba cluster-trace-gpu-v2023 "openb" pod list (as staged in ../shared/traces/alibaba_gpu_v2023_openb/):
``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time``
(+ ``carry_in``). Every pod is one pod on one node; ``num_gpu == 1`` with ``gpu_milli < 1000`` is a share of a GPU."""

from __future__ import annotations

import csv
from pathlib import Path

from whatif.traces.records import TraceRecord, parse_time

COLUMNS = ("name", "num_gpu", "gpu_milli", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time")


def read_openb(path: Path) -> list[TraceRecord]:
    out = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"not an openb pod list: missing columns {', '.join(missing)}")
        for r in reader:
            gpus, milli = int(r["num_gpu"]), int(r["gpu_milli"] or 0)
            share = milli / 1000.0 if gpus == 1 and 0 < milli < 1000 else None
            submit = parse_time(r["creation_time"])
            assert submit is not None
            out.append(
                TraceRecord(
                    id=r["name"],
                    submit=submit,
                    start=parse_time(r["scheduled_time"]),
                    end=parse_time(r["deletion_time"]),
                    gpus_per_node=0 if share else gpus,
                    gpu_share=share,
                    tenant={"qos": r["qos"], "phase": r["pod_phase"]},
                    carry_in=r.get("carry_in", "0") == "1",
                )
            )
    return out
