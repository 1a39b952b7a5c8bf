"""One job as a trace recorded it (absolute seconds), and the licence/citation of each trace family."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

ATTRIBUTION = {
    "alibaba-openb": (
        "Alibaba cluster-trace-gpu-v2023 (openb pod list), Apache-2.0 as shipped by hkust-adsl/kubernetes-scheduler-"
        "simulator (the alibaba/clusterdata copy states no licence); modified: a 14-day window with a carry_in column. "
        "Cite: Q. Weng et al., Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient "
        "Descent, USENIX ATC '23."
    ),
    "helios-cluster-log": (
        "SenseTime Helios / Shanghai AI Lab Acme job logs (cluster_log.csv schema), CC BY 4.0 "
        "(S-Lab-System-Group/HeliosData, InternLM/AcmeTrace; https://creativecommons.org/licenses/by/4.0/). "
        "Cite: Q. Hu et al., Characterization and Prediction of Deep Learning Workloads in Large-Scale GPU "
        "Datacenters, SC '21; Q. Hu et al., Characterization of Large Language Model Development in the Datacenter, "
        "NSDI '24."
    ),
    "philly-job-log": (
        "Microsoft Philly traces (cluster_job_log), CC BY 4.0 (msr-fiddle/philly-traces; "
        "https://creativecommons.org/licenses/by/4.0/). Cite: M. Jeon et al., Analysis of Large-Scale Multi-Tenant "
        "GPU Clusters for DNN Training Workloads, USENIX ATC '19."
    ),
    "helios-vc-capacity": (
        "SenseTime Helios Venus cluster_gpu_number.csv (GPUs per virtual cluster per day), CC BY 4.0, "
        "S-Lab-System-Group/HeliosData; unchanged. Cite: Q. Hu et al., SC '21."
    ),
}


@dataclass(frozen=True)
class TraceRecord:
    id: str
    submit: float
    start: float | None
    """None: never started in the trace (censored)."""
    end: float | None
    gpus_per_node: int
    nodes: int = 1
    gpu_share: float | None = None
    tenant: dict[str, str] = field(default_factory=dict)
    """Columns a mapping may use: qos, vc, user, …"""
    carry_in: bool = False
    """Started before the window: sets the initial state only."""


def parse_time(value: str) -> float | None:
    """Seconds (a number) or an ISO date-time (naive = UTC) -> seconds; empty/NaN -> None."""
    value = (value or "").strip()
    if not value or value.lower() in ("nan", "none", "null"):
        return None
    try:
        return float(value)
    except ValueError:
        pass
    dt = datetime.fromisoformat(value)
    return dt.timestamp() if dt.tzinfo else (dt - datetime(1970, 1, 1)).total_seconds()
