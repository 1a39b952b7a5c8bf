"""Helm values and config-map data for the GPU runtime charts, as plain data. Pure: no Pulumi.

Every key rendered here exists in the pinned chart's default values.yaml (tests check it against
``../shared/schemas``). Daemons target exactly the pools they serve through the ``gpu-cluster/pool`` label, and
tolerate exactly those pools' taints.
"""

from __future__ import annotations

from typing import Iterable

import yaml

from catalog import Cloud
from stacks.plan.facts import PoolFacts
from stacks.plan.gpu_runtime_plan import GpuRuntimePlan
from stacks.spec.gpu_runtime import SharingMode
from stacks.spec.stack import POOL_LABEL_KEY

GKE_NVIDIA_HOST_DIR = "/home/kubernetes/bin/nvidia"
"""Where Google's COS driver installer puts the driver; the GPU Operator installs its toolkit there too on GKE."""
DEFAULT_CONFIG_KEY = "default"
"""Device plugin config-map entry for nodes without a ``nvidia.com/device-plugin.config`` label (no sharing)."""
OPERATOR_MIG_STRATEGY = "single"
"""Single strategy: MIG instances are advertised as ``nvidia.com/gpu`` (each pool uses one profile per node)."""
CRITICAL_PODS_PER_NODE = 10
"""Headroom of system-node-critical pods per served node (operator operands, NFD, GFD) for the GKE quota."""


def pool_affinity(pools: Iterable[PoolFacts]) -> dict:
    """Node affinity that matches exactly the given pools, by the pool label every GPU node carries."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": POOL_LABEL_KEY, "operator": "In", "values": [p.name for p in pools]}]}
                ]
            }
        }
    }


def daemon_tolerations(pools: Iterable[PoolFacts]) -> list[dict]:
    """The GPU taint plus every extra taint of the given pools, each once."""
    out, seen = [], set()
    for pool in pools:
        for tol in pool.tolerations:
            key = tuple(sorted(tol.items()))
            if key not in seen:
                seen.add(key)
                out.append(tol)
    return out


DEVICE_LIST_STRATEGY = "volume-mounts"
"""How the NVIDIA device plugin hands a pod its GPUs on EKS: as volume mounts under
``/var/run/nvidia-container-devices`` rather than the default ``NVIDIA_VISIBLE_DEVICES`` env var, which any pod can set
itself (or inherit from a CUDA base image) to get every GPU of the node without requesting one (NVIDIA/k8s-device-plugin
#61, #87). Needs the node's toolkit to accept volume mounts and refuse the env var from unprivileged containers
(``render/nodeadm.py``)."""


def device_plugin_config(pool: PoolFacts | None, mig_strategy: str, device_list_strategy: str | None = None) -> str:
    """One entry of the device plugin config map (the plugin's v1 config file): sharing for ``pool``, or the
    no-sharing default when ``pool`` is None. Replicas are advertised under the plain ``nvidia.com/gpu`` name.
    ``device_list_strategy``: the standalone plugin's (EKS), kept in the file too so a config entry never reverts it."""
    doc: dict = {"version": "v1", "flags": {"migStrategy": mig_strategy}}
    if device_list_strategy:
        doc["flags"]["plugin"] = {"deviceListStrategy": device_list_strategy}
    rt = pool.runtime if pool is not None else None
    if rt is not None and rt.sharing == SharingMode.TIME_SLICING:
        # a request for 2 slices could land on one GPU; failing it is clearer than silently sharing
        doc["sharing"] = {
            "timeSlicing": {
                "failRequestsGreaterThanOne": True,
                "resources": [{"name": "nvidia.com/gpu", "replicas": rt.replicas}],
            }
        }
    elif rt is not None and rt.sharing == SharingMode.MPS:
        doc["sharing"] = {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": rt.replicas}]}}
    return yaml.safe_dump(doc, sort_keys=False)


def sharing_config_data(
    plan: GpuRuntimePlan, pools: tuple[PoolFacts, ...], mig_strategy: str, device_list_strategy: str | None = None
) -> dict[str, str]:
    """Config-map data: the default entry plus one per pool that time-slices or uses MPS (empty: no config map).
    Entry names are pool names, which is what each pool's ``nvidia.com/device-plugin.config`` label selects."""
    shared = plan.shared_pools(pools)
    if not shared:
        return {}
    return {
        DEFAULT_CONFIG_KEY: device_plugin_config(None, mig_strategy, device_list_strategy),
        **{
            entry: device_plugin_config(p, mig_strategy, device_list_strategy)
            for p in shared
            if (entry := p.resolved_runtime.device_plugin_config)
        },
    }  # always named for a sharing pool


def critical_pods_budget(pools: Iterable[PoolFacts]) -> int:
    """GKE admits system-node-critical pods outside kube-system only under a ResourceQuota; size it to the pools."""
    return CRITICAL_PODS_PER_NODE * (sum(p.max_nodes for p in pools) + 1)


def device_plugin_values(plan: GpuRuntimePlan, config_map: str | None) -> dict:
    """NVIDIA k8s-device-plugin chart values (EKS: the NVIDIA AMI ships the driver and container toolkit)."""
    pools = plan.device_plugin_pools
    values: dict = {
        "affinity": pool_affinity(pools),  # replaces the chart's NFD-label affinity: exactly our pools
        "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, *daemon_tolerations(pools)],
        "gfd": {"enabled": plan.gpu_feature_discovery},
        "deviceListStrategy": DEVICE_LIST_STRATEGY,
    }
    if plan.gpu_feature_discovery:
        values["nfd"] = {"worker": {"tolerations": daemon_tolerations(pools)}}  # GFD needs NFD on those nodes
    if config_map:
        values["config"] = {"name": config_map, "default": DEFAULT_CONFIG_KEY}
    return values


def gpu_operator_values(plan: GpuRuntimePlan, config_map: str | None) -> dict:
    """NVIDIA GPU Operator chart values. No cloud here lets the operator install a driver: GKE's COS nodes get it
    from Google's installer, EKS NVIDIA AMIs ship one (and the container toolkit)."""
    pools = plan.operator_pools
    gke = plan.cloud == Cloud.GCP
    values: dict = {
        "driver": {"enabled": False},
        "daemonsets": {"tolerations": daemon_tolerations(pools)},
        "node-feature-discovery": {"worker": {"tolerations": daemon_tolerations(pools)}},
        "mig": {"strategy": OPERATOR_MIG_STRATEGY},
        "migManager": {"enabled": bool(plan.mig_pools)},
        "gfd": {"enabled": plan.gpu_feature_discovery},
        # no Prometheus Operator in this stack, so no ServiceMonitor CRD to create objects of
        "dcgmExporter": {"enabled": plan.dcgm_exporter, "serviceMonitor": {"enabled": False}},
    }
    if gke:  # NVIDIA's GKE (COS) recipe: driver and toolkit under /home/kubernetes/bin/nvidia, CDI on
        values["hostPaths"] = {"driverInstallDir": GKE_NVIDIA_HOST_DIR}
        values["toolkit"] = {"installDir": GKE_NVIDIA_HOST_DIR}
        values["cdi"] = {"enabled": True}
    else:  # EKS NVIDIA AMI: its own toolkit is containerd's nvidia runtime; CDI specs would need ours
        values["toolkit"] = {"enabled": False}
        values["cdi"] = {"enabled": False}
    if config_map:
        values["devicePlugin"] = {"config": {"create": False, "name": config_map, "default": DEFAULT_CONFIG_KEY}}
    if not gke:  # the AMI's toolkit is locked to volume mounts (render/nodeadm.py): the plugin must hand GPUs so
        values.setdefault("devicePlugin", {})["env"] = [{"name": "DEVICE_LIST_STRATEGY", "value": DEVICE_LIST_STRATEGY}]
    return values


def efa_device_plugin_values(plan: GpuRuntimePlan) -> dict:
    """AWS EFA device plugin chart values: the chart builds one ``<key> In <values>`` affinity term per key, so
    keying it on the pool label (instead of the instance-type list) targets exactly the EFA pools."""
    pools = plan.efa_pools
    return {
        "supportedInstanceLabels": {"keys": [POOL_LABEL_KEY], "values": [p.name for p in pools]},
        "tolerations": daemon_tolerations(pools),
    }
