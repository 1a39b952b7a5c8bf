"""GPU runtime rules that need the catalog or several fields: one advertiser per pool, modes per cloud, sharing
valid for the pool's GPU, EFA only on EFA pools. Each check returns SpecIssues; none raises.

An error points at the config path where the offending value was written: the pool's own ``gpuRuntime`` override
when it has one, else the stack's ``gpuRuntime``. Several pools inheriting one bad stack value give one error.
"""
from __future__ import annotations

import re
from typing import Iterable

from catalog import Catalog, Cloud, GpuModel, MachineType, MigCatalog
from validation.issues import SpecIssue, allowed_list, choice_fix, path_of
from stacks.gpu_runtime import RUNTIME_LABEL_KEYS, RUNTIME_LABEL_PREFIXES, EffectiveRuntime, effective_runtime
from stacks.gpu_runtime_spec import MAX_SHARED_CLIENTS_PER_GPU, DriverVersion, GpuRuntime, GpuRuntimeMode, SharingMode
from stacks.spec import NodePool

SHARED_MODES = (SharingMode.TIME_SLICING, SharingMode.MPS)


def _err(parts: tuple, problem: str, value=None, allowed: str | None = None, fix: str | None = None,
         warning: bool = False) -> SpecIssue:
    return SpecIssue(path=path_of(*parts), problem=problem, value=value, allowed=allowed, fix=fix, warning=warning)


def check_gpu_runtime(cat: Catalog, mig: MigCatalog, cloud: Cloud, runtime: GpuRuntime,
                      pools: Iterable[tuple[int, NodePool]]) -> list[SpecIssue]:
    """Every GPU runtime rule for a stack whose ``gpuRuntime`` section parsed (pools that failed to parse are absent)."""
    pools = list(pools)
    effective = {i: effective_runtime(cloud, runtime, pool, i) for i, pool in pools}
    issues: list[SpecIssue] = []
    for i, pool in pools:
        acc = pool.accelerator
        machine = cat.resolve(cloud, pool.machine_type, acc.type if acc else None, acc.count if acc else None)
        eff = effective[i]
        issues += _check_mode_and_driver(cloud, eff)
        issues += _check_sharing(mig, cloud, pool, machine, eff)
        issues += _check_efa(cat, cloud, i, pool, machine)
        issues += _check_runtime_labels(i, pool)
    issues += _check_stack(cloud, runtime, pools, effective)
    issues += _check_cos_installer(cloud, pools, effective)
    return _unique(issues)


def _unique(issues: list[SpecIssue]) -> list[SpecIssue]:
    """One error for a stack-level value that many pools inherit."""
    seen, out = set(), []
    for issue in issues:
        if str(issue) not in seen:
            seen.add(str(issue))
            out.append(issue)
    return out


# -- mode and driver ----------------------------------------------------------------------------------------------
def _check_mode_and_driver(cloud: Cloud, eff: EffectiveRuntime) -> list[SpecIssue]:
    issues = []
    if cloud == Cloud.AWS and eff.mode == GpuRuntimeMode.GKE_MANAGED:
        issues.append(_err(eff.origin["mode"], "gke-managed is a GKE mode; this stack's cloud is aws", eff.mode.value,
                           allowed_list([GpuRuntimeMode.DEVICE_PLUGIN.value, GpuRuntimeMode.GPU_OPERATOR.value]),
                           "use device-plugin (NVIDIA device plugin chart; the EKS NVIDIA AMI ships the driver) "
                           "or gpu-operator"))
    if cloud == Cloud.GCP and eff.mode == GpuRuntimeMode.DEVICE_PLUGIN:
        # The chart alone cannot put the driver into containers on GKE's COS nodes: they have no NVIDIA container
        # toolkit (NVIDIA's GKE guide installs it through the GPU Operator into /home/kubernetes/bin/nvidia).
        issues.append(_err(eff.origin["mode"], "the NVIDIA device plugin chart alone does not work on GKE's COS nodes "
                           "(no NVIDIA container toolkit to mount the driver into pods)", eff.mode.value,
                           allowed_list([GpuRuntimeMode.GKE_MANAGED.value, GpuRuntimeMode.GPU_OPERATOR.value]),
                           "use gke-managed (GKE's plugin does time-sharing, MPS and MIG too) or gpu-operator"))
    if cloud == Cloud.AWS and eff.driver_version == DriverVersion.LATEST:
        issues.append(_err(eff.origin["driver_version"], "EKS NVIDIA AMIs ship their own driver; gpu-cluster cannot "
                           "install a newer one", eff.driver_version.value, DriverVersion.DEFAULT.value,
                           "remove driverVersion: the AMI's driver is used (newer AMI releases bring newer drivers)"))
    return issues


# -- sharing --------------------------------------------------------------------------------------------------------
def _check_sharing(mig: MigCatalog, cloud: Cloud, pool: NodePool, machine: MachineType | None,
                   eff: EffectiveRuntime) -> list[SpecIssue]:
    sh, base = eff.sharing, eff.origin["sharing"]
    issues = []
    if sh.mode == SharingMode.NONE:
        if sh.replicas is not None:
            issues.append(_err((*base, "replicas"), "replicas only applies to sharing mode time-slicing or mps",
                               sh.replicas, "time-slicing, mps", "set sharing.mode: time-slicing (or mps), or remove "
                               "replicas"))
        if sh.mig_profile is not None:
            issues.append(_err((*base, "migProfile"), "migProfile only applies to sharing mode mig", sh.mig_profile,
                               "mig", "set sharing.mode: mig, or remove migProfile"))
        return issues
    if sh.mode in SHARED_MODES:
        if sh.mig_profile is not None:
            issues.append(_err(base, f"{sh.mode.value} and MIG cannot be combined on one pool",
                               {"mode": sh.mode.value, "migProfile": sh.mig_profile},
                               f"mode: mig with migProfile, or mode: {sh.mode.value} with replicas",
                               f"remove migProfile (keep {sh.mode.value}), or set mode: mig and remove replicas"))
        if sh.replicas is None:
            issues.append(_err((*base, "replicas"), f"{sh.mode.value} needs replicas (pods per physical GPU)", None,
                               f"2-{MAX_SHARED_CLIENTS_PER_GPU}", "add sharing.replicas, e.g. 4"))
        return issues
    # MIG
    if sh.replicas is not None:
        issues.append(_err((*base, "replicas"), "MIG instances are not shared further: replicas only applies to "
                           "time-slicing and mps", sh.replicas, "no replicas with mode mig", "remove replicas"))
    if eff.mode == GpuRuntimeMode.DEVICE_PLUGIN:
        issues.append(_err((*base, "mode"), f"pool '{pool.name}': MIG needs a MIG manager to partition the GPUs, and "
                           "device-plugin mode has none", sh.mode.value,
                           "mig with gpu-operator (its MIG manager)" + (
                               " or gke-managed (GKE partitions the GPUs)" if cloud == Cloud.GCP else ""),
                           "set the pool's gpuRuntime.mode: gpu-operator, or use time-slicing / mps"))
    if machine is None:
        return issues  # unknown machine type: already reported by the pool checks
    model = machine.gpu_model
    if not mig.supports_mig(model):
        issues.append(_err((*base, "mode"), f"pool '{pool.name}': {model.value} GPUs ({pool.machine_type}) do not "
                           "support MIG", sh.mode.value, "MIG GPUs: " + allowed_list(m.value for m in mig.mig_models()),
                           "use time-slicing or mps on this pool, or a MIG-capable machine type"))
        return issues
    if sh.mig_profile is None:
        issues.append(_err((*base, "migProfile"), "mode mig needs migProfile", None,
                           allowed_list(mig.profile_names(model)), "add sharing.migProfile, e.g. "
                           f"{mig.profile_names(model)[0]}"))
        return issues
    issues += _check_mig_profile(mig, pool, model, sh.mig_profile, eff, (*base, "migProfile"))
    return issues


def _check_mig_profile(mig: MigCatalog, pool: NodePool, model: GpuModel, profile: str, eff: EffectiveRuntime,
                       where: tuple) -> list[SpecIssue]:
    names = mig.profile_names(model)
    found = mig.profile(model, profile)
    if found is None:
        near = _nearest_profile(profile, names)
        return [_err(where, f"pool '{pool.name}': {profile} is not a MIG profile of {model.value}", profile,
                     allowed_list(names), f"did you mean {near!r}?" if near else choice_fix("migProfile", profile, names))]
    if eff.mode == GpuRuntimeMode.GKE_MANAGED and not found.gke_partition:
        gke = mig.profile_names(model, gke_only=True)
        return [_err(where, f"pool '{pool.name}': GKE cannot partition {model.value} into {profile}", profile,
                     allowed_list(gke), "pick a GKE partition size, or set the pool's gpuRuntime.mode: gpu-operator "
                     "(its MIG manager applies any profile)")]
    return []


def _nearest_profile(profile: str, names: list[str]) -> str | None:
    """Same compute slices, nearest memory: ``1g.5gb`` on an H100 suggests ``1g.10gb`` (not the spelling-closest)."""
    match = re.fullmatch(r"(\d+)g\.(\d+)gb", profile)
    if not match:
        return None
    slices, memory = match.group(1), int(match.group(2))
    same = [n for n in names if n.startswith(f"{slices}g.")]
    return min(same, key=lambda n: abs(int(n.split(".")[1][:-2]) - memory)) if same else None


# -- EFA ------------------------------------------------------------------------------------------------------------
def _check_efa(cat: Catalog, cloud: Cloud, i: int, pool: NodePool, machine: MachineType | None) -> list[SpecIssue]:
    over = pool.gpu_runtime.efa_device_plugin if pool.gpu_runtime is not None else None
    if over is None:
        return []
    where = ("nodePools", i, "gpuRuntime", "efaDevicePlugin")
    if cloud == Cloud.GCP:
        return [_err(where, "efaDevicePlugin is an EKS setting; this stack's cloud is gcp", over,
                     fix="remove it (GKE multi-node pools use GPUDirect, not EFA)")]
    if not over:
        return []
    if machine is not None and machine.efa_interfaces == 0:
        efa_types = sorted(m for (c, m), x in cat.machines.items() if c == Cloud.AWS and (x.efa_interfaces or 0) > 0)
        return [_err(where, f"{pool.machine_type} has no EFA interface, so the EFA device plugin has nothing to "
                     "advertise", True, "EFA instance types: " + allowed_list(efa_types),
                     "remove efaDevicePlugin, or pick an EFA instance type and set multiNode: true")]
    if not pool.multi_node:
        return [_err(where, f"pool '{pool.name}' has no EFA interfaces: gpu-cluster attaches them to multiNode pools "
                     "only", True, "efaDevicePlugin: true with multiNode: true",
                     "set multiNode: true (one AZ, a cluster placement group, every EFA interface), or remove "
                     "efaDevicePlugin")]
    return []


# -- labels ---------------------------------------------------------------------------------------------------------
def _check_runtime_labels(i: int, pool: NodePool) -> list[SpecIssue]:
    issues = []
    for key in pool.labels:
        if key in RUNTIME_LABEL_KEYS or key.startswith(RUNTIME_LABEL_PREFIXES):
            issues.append(_err(("nodePools", i, "labels", key), "node label key is owned by the GPU runtime (it "
                               "decides who advertises the GPUs)", key,
                               f"any key except {', '.join(RUNTIME_LABEL_KEYS)} or keys starting with "
                               f"{' or '.join(RUNTIME_LABEL_PREFIXES)}",
                               "remove it: gpu-cluster sets it from gpuRuntime (mode, sharing)"))
    return issues


# -- stack level ----------------------------------------------------------------------------------------------------
def _check_stack(cloud: Cloud, runtime: GpuRuntime, pools: list[tuple[int, NodePool]],
                 effective: dict[int, EffectiveRuntime]) -> list[SpecIssue]:
    issues = []
    modes = {eff.mode for eff in effective.values()}
    if runtime.dcgm_exporter and GpuRuntimeMode.GPU_OPERATOR not in modes:
        issues.append(_err(("gpuRuntime", "dcgmExporter"), "the DCGM exporter comes with the GPU Operator, and no pool "
                           "uses gpu-operator", True, "true only with a gpu-operator pool; false",
                           "set mode: gpu-operator (stack or pool), or remove dcgmExporter" + (
                               " (GKE-managed pools can use GKE's managed DCGM metrics)" if cloud == Cloud.GCP else "")))
    if cloud == Cloud.GCP and runtime.efa_device_plugin is not None:
        issues.append(_err(("gpuRuntime", "efaDevicePlugin"), "efaDevicePlugin is an EKS setting; this stack's cloud "
                           "is gcp", runtime.efa_device_plugin,
                           fix="remove it (GKE multi-node pools use GPUDirect, not EFA)"))
    if cloud == Cloud.AWS and runtime.efa_device_plugin and pools and not any(p.multi_node for _, p in pools):
        issues.append(_err(("gpuRuntime", "efaDevicePlugin"), "no pool is multiNode, so no pool has EFA interfaces "
                           "and the EFA device plugin would not run anywhere", True, warning=True,
                           fix="set multiNode: true on the pools that need EFA, or remove efaDevicePlugin"))
    if "gpu_feature_discovery" in runtime.model_fields_set and runtime.gpu_feature_discovery \
            and effective and modes == {GpuRuntimeMode.GKE_MANAGED}:
        issues.append(_err(("gpuRuntime", "gpuFeatureDiscovery"), "every pool is gke-managed, so GPU Feature Discovery "
                           "does not run (GKE labels its GPU nodes itself)", True, warning=True,
                           fix="remove gpuFeatureDiscovery, or use device-plugin / gpu-operator on a pool"))
    return issues


def _check_cos_installer(cloud: Cloud, pools: list[tuple[int, NodePool]],
                         effective: dict[int, EffectiveRuntime]) -> list[SpecIssue]:
    """GKE pools without gke-managed share one COS driver-installer DaemonSet, so they share one driver version."""
    if cloud != Cloud.GCP:
        return []
    users = {i: effective[i] for i, _ in pools if effective[i].mode != GpuRuntimeMode.GKE_MANAGED}
    versions = {eff.driver_version for eff in users.values()}
    if len(versions) < 2:
        return []
    names = {i: p.name for i, p in pools}
    by_version = {v: [names[i] for i, e in users.items() if e.driver_version == v] for v in sorted(versions)}
    summary = "; ".join(f"{v.value}: {', '.join(n)}" for v, n in by_version.items())
    return [_err(eff.origin["driver_version"], "GKE pools without gke-managed share one COS driver installer, so they "
                 f"need one driver version ({summary})", eff.driver_version.value,
                 "the same driverVersion on every device-plugin / gpu-operator pool",
                 "set the same driverVersion on those pools (or only on gpuRuntime)")
            for i, eff in users.items() if eff.origin["driver_version"][0] == "nodePools"]
