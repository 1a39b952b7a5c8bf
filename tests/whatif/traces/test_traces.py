"""Trace adapters: Helios/Acme ``cluster_log.csv`` and Philly ``cluster_job_log`` on small files written in their
documented schemas; the staged Alibaba openb window and Helios VC capacities (../shared/traces) read as published."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import require_shared
from whatif.api import cluster_of, load_stack_spec
from whatif.traces.helios import read_cluster_log, read_vc_capacity
from whatif.traces.philly import read_job_log
from whatif.workload.load import load_workload

CLUSTER = cluster_of(load_stack_spec("gke-kueue"), "gke-kueue")

HELIOS = """job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
1,u1,vcA,8,32,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:30,2020-04-01 01:00:30,3600,30
2,u2,vcB,16,64,2,FAILED,2020-04-01 00:10:00,2020-04-01 00:20:00,2020-04-01 00:30:00,600,600
3,u2,vcB,0,4,1,COMPLETED,2020-04-01 00:11:00,2020-04-01 00:11:00,2020-04-01 00:12:00,60,0
4,u3,vcC,1,4,1,CANCELLED,2020-04-01 00:12:00,,2020-04-01 00:13:00,0,
"""

PHILLY = [
    {
        "status": "Pass",
        "vc": "vc1",
        "jobid": "application_1",
        "user": "a",
        "submitted_time": "2017-10-07 02:56:06",
        "attempts": [
            {
                "start_time": "2017-10-07 02:56:09",
                "end_time": "2017-10-07 03:00:00",
                "detail": [{"ip": "m1", "gpus": ["gpu0", "gpu1"]}],
            },
            {
                "start_time": "2017-10-07 03:10:00",
                "end_time": "2017-10-07 04:10:00",
                "detail": [
                    {"ip": "m1", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]},
                    {"ip": "m2", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]},
                ],
            },
        ],
    },
    {
        "status": "Killed",
        "vc": "vc2",
        "jobid": "application_2",
        "user": "b",
        "submitted_time": "2017-10-07 03:00:00",
        "attempts": [],
    },
]


def test_helios_cluster_log(tmp_path):
    (tmp_path / "cluster_log.csv").write_text(HELIOS)
    recs = read_cluster_log(tmp_path / "cluster_log.csv")
    assert [(r.id, r.gpus_per_node, r.nodes) for r in recs] == [("1", 8, 1), ("2", 8, 2), ("4", 1, 1)]
    assert recs[0].start - recs[0].submit == 30 and recs[2].start is None
    (tmp_path / "w.yaml").write_text(
        "kind: trace\nformat: helios-cluster-log\npath: cluster_log.csv\n"
        "mapping: {by: vc, queues: {vcA: research}, default: product}\n"
    )
    w = load_workload(tmp_path / "w.yaml", CLUSTER, 0)
    assert [(j.id, j.queue, j.submit_s, j.run_s, j.time_limit_s) for j in w.jobs] == [
        ("1", "research", 0.0, 3600.0, 5400.0),
        ("2", "product", 600.0, 600.0, 900.0),
    ]
    assert w.recorded_waits == {"1": 30.0, "2": 600.0}
    assert "1 trace jobs left out: never started in the trace" in w.notes
    assert "CC BY 4.0" in w.attribution[0]


def test_philly_job_log(tmp_path):
    (tmp_path / "cluster_job_log").write_text(json.dumps(PHILLY))
    recs = read_job_log(tmp_path / "cluster_job_log")
    assert (recs[0].gpus_per_node, recs[0].nodes, recs[0].start - recs[0].submit) == (4, 2, 3)
    assert recs[0].end - recs[0].start == 3600 and recs[1].start is None
    (tmp_path / "w.yaml").write_text(
        "kind: trace\nformat: philly-job-log\npath: cluster_job_log\n"
        "mapping: {by: hash, weights: {research: 1, product: 1}}\n"
    )
    w = load_workload(tmp_path / "w.yaml", CLUSTER, 0)
    assert len(w.jobs) == 1 and w.jobs[0].nodes == 2 and "Philly" in w.attribution[0]


def test_alibaba_window_as_staged():
    require_shared("traces", "alibaba_gpu_v2023_openb", "openb_pods_14d_window.csv")
    replay = cluster_of(load_stack_spec(Path("workloads/stacks/Pulumi.alibaba-replay-kueue.yaml")), "replay")
    w = load_workload(Path("workloads/alibaba-openb.yaml"), replay, 0)
    window = [j for j in w.jobs if j.id not in w.warm_up]
    assert len(w.warm_up) == 31  # carry-in pods with a GPU (README: 36 carry-in pods, about 32.9 GPUs)
    assert len(window) == 2820  # GPU pods that were scheduled (README: 2,820 of 3,300)
    assert sum(1 for j in window if j.gpu_share is not None) == 1130  # scheduled pods with gpu_milli < 1000
    waits = sorted(w.recorded_waits.values())
    assert waits[len(waits) // 2] == 3  # the README's p50 of 3 s (GPU pods)
    assert "Apache-2.0" in w.attribution[0]


def test_helios_vc_capacity():
    path = require_shared("traces", "helios_venus_vc_capacity", "cluster_gpu_number.csv")
    caps = read_vc_capacity(path, "2020-04-01")
    assert sum(caps.values()) == 968 and caps["vc6YE"] == 88
