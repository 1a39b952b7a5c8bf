"""``python -m whatif.study``: the trace validation in docs/whatif.md, reproducible. (1) The staged Alibaba openb window
replayed under Kueue and Slurm on stacks sized like its busy part, simulated waits next to the waits the trace
recorded; (2) the same window with the Helios Venus per-VC GPU capacities as quotas: FIFO, backfill, fair share."""
from __future__ import annotations

import copy
import sys
from typing import Any

import yaml

from whatif.stack import PROJECT_ROOT, cluster_of, load_stack_spec
from whatif.metrics import percentile
from whatif.model import SimOptions
from whatif.run import Run, run_cluster
from whatif.traces.helios import read_vc_capacity
from whatif.traces.replay import load_trace
from whatif.workload.spec import Trace

TRACES = PROJECT_ROOT.parent / "shared" / "traces"
OPENB = TRACES / "alibaba_gpu_v2023_openb" / "openb_pods_14d_window.csv"
HELIOS = TRACES / "helios_venus_vc_capacity" / "cluster_gpu_number.csv"
HELIOS_DATE, HELIOS_MIN_VC_GPUS = "2020-04-01", 64
FIXED = SimOptions(nodes_up="max", spot_interruptions=False)


def base(kind: str) -> dict[str, Any]:
    path = PROJECT_ROOT / "workloads" / "stacks" / f"Pulumi.alibaba-replay-{kind}.yaml"
    return dict(yaml.safe_load(path.read_text())["config"])


def sized(cfg: dict[str, Any], nodes: int) -> dict[str, Any]:
    out = copy.deepcopy(cfg)
    pool = out["gpu-cluster:nodePools"][0]
    pool["minNodes"] = pool["maxNodes"] = nodes
    scale = nodes / 9
    for q in out["gpu-cluster:scheduling"]["queues"]:
        q["quotas"][0]["gpus"] = round(q["quotas"][0]["gpus"] * scale)
    return out


def replay(cfg: dict[str, Any], name: str, mapping: dict[str, Any], options: SimOptions = FIXED) -> Run:
    cluster = cluster_of(load_stack_spec(cfg), name, options)
    trace = Trace.model_validate({"kind": "trace", "format": "alibaba-openb", "path": str(OPENB), "mapping": mapping})
    return run_cluster(cluster, load_trace(trace, OPENB, cluster), 0, options)


def waits(values: list[float]) -> list[str]:
    return [f"{sum(values) / len(values):.0f}", *(f"{percentile(values, q):.0f}" for q in (50, 95, 99))]


def part_replay() -> list[str]:
    qos = {"by": "qos", "queues": {"LS": "serving"}, "default": "batch"}
    out = ["| run | GPUs | utilization | wait mean s | p50 s | p95 s | p99 s | jobs waiting > 60 s |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    first = replay(base("kueue"), "alibaba-replay-kueue", qos)
    rec = list(first.workload.recorded_waits.values())
    out.append(f"| **trace, as recorded** (GPU pods that started) | 6,212 | 0.7 % | {' | '.join(waits(rec))} | "
               f"{sum(1 for w in rec if w > 60)} |")
    for nodes in (9, 6):
        for kind in ("kueue", "slurm"):
            run = first if (nodes, kind) == (9, "kueue") else replay(sized(base(kind), nodes), kind, qos)
            sim = [run.result.jobs[j].start_s - s for j, s in  # type: ignore[operator]
                   ((j.id, j.submit_s) for j in run.workload.jobs if j.id not in run.workload.warm_up)
                   if run.result.jobs[j].start_s is not None]
            out.append(f"| {kind}, {nodes} × 8 L4 | {nodes * 8} | {100 * run.report['total']['utilization']:.1f} % | "
                       f"{' | '.join(waits(sim))} | {sum(1 for w in sim if w > 60)} |")
    return out


def helios_quotas(total: int) -> dict[str, int]:
    caps = {vc: n for vc, n in read_vc_capacity(HELIOS, HELIOS_DATE).items() if n >= HELIOS_MIN_VC_GPUS}
    raw = {vc: n * total / sum(caps.values()) for vc, n in caps.items()}
    quotas = {vc: int(v) for vc, v in raw.items()}
    for vc in sorted(raw, key=lambda v: (quotas[v] - raw[v], v))[:total - sum(quotas.values())]:
        quotas[vc] += 1  # largest remainder: the quotas add up to the cluster
    return quotas


def helios_config(kind: str, nodes: int, quotas: dict[str, int], cohort: bool,
                  weights: dict[str, Any] | None = None, strict: bool = False) -> dict[str, Any]:
    cfg = sized(base(kind), nodes)
    sched: dict[str, Any] = {"workload": "slurm" if kind == "slurm" else "kubeflow", "queues": [
        {"name": vc.lower(), "fairShareWeight": max(1, n), "quotas": [{"pool": "gpu", "gpus": n}]}
        for vc, n in sorted(quotas.items())]}
    if cohort:
        sched["cohort"] = "venus"
    if kind == "slurm":
        sched["slurm"] = {"accounting": True, **({"priorityWeights": weights} if weights else {})}
    else:
        sched["topology"] = {"mode": "none"}
        sched["queueingStrategy"] = "StrictFIFO" if strict else "BestEffortFIFO"
    cfg["gpu-cluster:scheduling"] = sched
    return cfg


def part_helios(nodes: int) -> list[str]:
    quotas = helios_quotas(nodes * 8)
    mapping = {"by": "hash", "weights": {vc.lower(): n for vc, n in quotas.items()}}
    fifo = {"fairShare": 0, "age": 1000, "jobSize": 0, "qos": 0}
    no_bf = SimOptions(nodes_up="max", spot_interruptions=False, backfill=False)
    runs = [
        ("Slurm FIFO (age only), per-VC GrpTRES caps, no backfill", helios_config("slurm", nodes, quotas, False, fifo), no_bf),
        ("Slurm FIFO (age only), per-VC GrpTRES caps, backfill", helios_config("slurm", nodes, quotas, False, fifo), FIXED),
        ("Slurm fair-share (shares = VC GPUs), no caps (cohort), backfill", helios_config("slurm", nodes, quotas, True), FIXED),
        ("Kueue StrictFIFO, VC quotas, no cohort", helios_config("kueue", nodes, quotas, False, strict=True), FIXED),
        ("Kueue BestEffortFIFO, VC quotas, cohort borrowing + fair sharing", helios_config("kueue", nodes, quotas, True), FIXED),
    ]
    out = [f"Quotas ({nodes * 8} GPUs, Venus VCs with ≥ {HELIOS_MIN_VC_GPUS} GPUs on {HELIOS_DATE}, scaled): " +
           ", ".join(f"{vc} {n}" for vc, n in sorted(quotas.items())), "",
           "| policy | utilization | wait mean s | p50 s | p95 s | p99 s | never startable | max fair-share deviation |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, cfg, opts in runs:
        run = replay(cfg, label, mapping, opts)
        w = run.report["waits"]["all"]
        dev = max(abs(r["deviation"]) for r in run.report["fairShare"])
        out.append(f"| {label} | {100 * run.report['total']['utilization']:.1f} % | {w['meanS']:.0f} | {w['p50S']:.0f} | "
                   f"{w['p95S']:.0f} | {w['p99S']:.0f} | {len(run.report['neverStartable'])} | {100 * dev:.1f} pts |")
    return out


def main() -> int:
    if not OPENB.exists():
        print(f"error: {OPENB} is absent (the staged traces live in ../shared/traces)", file=sys.stderr)
        return 2
    lines = ["### Alibaba openb window: simulated vs recorded queue waits", "", *part_replay(), "",
             "### The same window with Helios Venus VC capacities as quotas", "", *part_helios(6)]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
