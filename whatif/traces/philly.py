"""Microsoft Philly ``cluster_job_log`` (JSON list): ``jobid, user, vc, status, submitted_time,
attempts[{start_time, end_time, detail[{ip, gpus[]}]}]``. A job's GPUs and nodes come from its last attempt (the one
that ran to the end); its run time is that attempt's; its start is the first attempt's."""

from __future__ import annotations

import json
import math
from pathlib import Path

from whatif.traces.records import TraceRecord, parse_time


def read_job_log(path: Path) -> list[TraceRecord]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError("not a Philly cluster_job_log: the file must be a JSON list of jobs")
    out = []
    for j in data:
        attempts = j.get("attempts") or []
        submit = parse_time(str(j.get("submitted_time") or ""))
        if submit is None:
            continue
        last = attempts[-1] if attempts else {}
        detail = last.get("detail") or []
        gpus = sum(len(d.get("gpus") or []) for d in detail)
        nodes = max(1, len(detail))
        start = parse_time(str(attempts[0].get("start_time") or "")) if attempts else None
        last_start = parse_time(str(last.get("start_time") or ""))
        last_end = parse_time(str(last.get("end_time") or ""))
        if gpus <= 0 or start is None or last_start is None or last_end is None:
            out.append(
                TraceRecord(
                    str(j.get("jobid")),
                    submit,
                    None,
                    None,
                    max(gpus, 1),
                    nodes,
                    tenant={
                        "vc": str(j.get("vc", "")),
                        "user": str(j.get("user", "")),
                        "status": str(j.get("status", "")),
                    },
                )
            )
            continue
        # the record's end is the start plus the last attempt's run time: failed attempts are not replayed
        out.append(
            TraceRecord(
                str(j.get("jobid")),
                submit,
                start,
                start + (last_end - last_start),
                math.ceil(gpus / nodes),
                nodes,
                tenant={"vc": str(j.get("vc", "")), "user": str(j.get("user", "")), "status": str(j.get("status", ""))},
            )
        )
    return out
