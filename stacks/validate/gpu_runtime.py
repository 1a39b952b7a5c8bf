"""GPU runtime rules that need the catalog or several fields: one advertiser per pool, modes per cloud, sharing
valid for the pool's GPU, EFA only on EFA pools. Each check reports into an ``Issues`` scope; none raises.

An error points at the config path where the offending value was written: the pool's own ``gpuRuntime`` override
when it has one (the message then names the pool), else the stack's ``gpuRuntime``. Several pools inheriting one bad
stack value give one error.
"""

from __future__ import annotations

import re
from typing import Iterable

from catalog import Catalog, Cloud, GpuModel, MachineType, MigCatalog
from stacks.plan.gpu_runtime import RUNTIME_LABEL_KEYS, RUNTIME_LABEL_PREFIXES, EffectiveRuntime, effective_runtime
from stacks.spec.gpu_runtime import MAX_SHARED_CLIENTS_PER_GPU, DriverVersion, GpuRuntime, GpuRuntimeMode, SharingMode
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues, Key, SpecIssue, allowed_list, choice_fix, pool_subject

SHARED_MODES = (SharingMode.TIME_SLICING, SharingMode.MPS)


def check_gpu_runtime(
    issues: Issues,
    cat: Catalog,
    mig: MigCatalog,
    cloud: Cloud,
    runtime: GpuRuntime,
    pools: Iterable[tuple[int, NodePool]],
) -> None:
    """Every GPU runtime rule for a stack whose ``gpuRuntime`` section parsed (pools that failed to parse are absent)."""
    pools = list(pools)
    effective = {i: effective_runtime(cloud, runtime, pool, i) for i, pool in pools}
    local = Issues()  # collected apart first: a stack value many pools inherit is reported once
    for i, pool in pools:
        acc = pool.accelerator
        machine = cat.resolve(cloud, pool.machine_type, acc.type if acc else None, acc.count if acc else None)
        eff = effective[i]
        _check_mode_and_driver(local, cloud, pool, eff)
        _check_sharing(local, mig, cloud, pool, machine, eff)
        _check_efa(local, cat, cloud, i, pool, machine)
        _check_runtime_labels(local.pool(i, pool.name).at("labels"), pool)
    _check_stack(local.at("gpuRuntime"), cloud, runtime, pools, effective)
    _check_cos_installer(local, cloud, pools, effective)
    issues.extend(_unique(local.found))


def _unique(issues: list[SpecIssue]) -> list[SpecIssue]:
    """One error for a stack-level value that many pools inherit."""
    seen, out = set(), []
    for issue in issues:
        if str(issue) not in seen:
            seen.add(str(issue))
            out.append(issue)
    return out


def _written_at(issues: Issues, origin: tuple[Key, ...], pool: NodePool) -> Issues:
    """The scope where a runtime value was written; a pool's own override names the pool."""
    scope = issues.at(*origin)
    return scope.about(pool_subject(pool.name)) if origin[0] == "nodePools" else scope


def _about_pool(issues: Issues, origin: tuple[Key, ...], pool: NodePool) -> Issues:
    """The scope where a value was written, naming the pool even when the value is the stack's (the problem is
    this pool's GPU)."""
    return issues.at(*origin).about(pool_subject(pool.name))


# -- mode and driver ----------------------------------------------------------------------------------------------
def _check_mode_and_driver(issues: Issues, cloud: Cloud, pool: NodePool, eff: EffectiveRuntime) -> None:
    mode = _written_at(issues, eff.origin["mode"], pool)
    if cloud == Cloud.AWS and eff.mode == GpuRuntimeMode.GKE_MANAGED:
        mode.error(
            None,
            "gke-managed is a GKE mode; this stack's cloud is aws",
            eff.mode.value,
            allowed=allowed_list([GpuRuntimeMode.DEVICE_PLUGIN.value, GpuRuntimeMode.GPU_OPERATOR.value]),
            fix="use device-plugin (NVIDIA device plugin chart; the EKS NVIDIA AMI ships the driver) or gpu-operator",
        )
    if cloud == Cloud.GCP and eff.mode == GpuRuntimeMode.DEVICE_PLUGIN:
        # The chart alone cannot put the driver into containers on GKE's COS nodes: they have no NVIDIA container
        # toolkit (NVIDIA's GKE guide installs it through the GPU Operator into /home/kubernetes/bin/nvidia).
        mode.error(
            None,
            "the NVIDIA device plugin chart alone does not work on GKE's COS nodes (no NVIDIA container "
            "toolkit to mount the driver into pods)",
            eff.mode.value,
            allowed=allowed_list([GpuRuntimeMode.GKE_MANAGED.value, GpuRuntimeMode.GPU_OPERATOR.value]),
            fix="use gke-managed (GKE's plugin does time-sharing, MPS and MIG too) or gpu-operator",
        )
    if cloud == Cloud.AWS and eff.driver_version == DriverVersion.LATEST:
        _written_at(issues, eff.origin["driver_version"], pool).error(
            None,
            "EKS NVIDIA AMIs ship their own driver; gpu-cluster cannot install a newer one",
            eff.driver_version.value,
            allowed=DriverVersion.DEFAULT.value,
            fix="remove driverVersion: the AMI's driver is used (newer AMI releases bring newer drivers)",
        )


# -- sharing --------------------------------------------------------------------------------------------------------
def _check_sharing(
    issues: Issues, mig: MigCatalog, cloud: Cloud, pool: NodePool, machine: MachineType | None, eff: EffectiveRuntime
) -> None:
    sh, origin = eff.sharing, eff.origin["sharing"]
    sharing = _written_at(issues, origin, pool)
    if sh.mode == SharingMode.NONE:
        if sh.replicas is not None:
            sharing.error(
                "replicas",
                "replicas only applies to sharing mode time-slicing or mps",
                sh.replicas,
                allowed="time-slicing, mps",
                fix="set sharing.mode: time-slicing (or mps), or remove replicas",
            )
        if sh.mig_profile is not None:
            sharing.error(
                "migProfile",
                "migProfile only applies to sharing mode mig",
                sh.mig_profile,
                allowed="mig",
                fix="set sharing.mode: mig, or remove migProfile",
            )
        return
    if sh.mode in SHARED_MODES:
        if sh.mig_profile is not None:
            sharing.error(
                None,
                f"{sh.mode.value} and MIG cannot be combined on one pool",
                {"mode": sh.mode.value, "migProfile": sh.mig_profile},
                allowed=f"mode: mig with migProfile, or mode: {sh.mode.value} with replicas",
                fix=f"remove migProfile (keep {sh.mode.value}), or set mode: mig and remove replicas",
            )
        if sh.replicas is None:
            sharing.error(
                "replicas",
                f"{sh.mode.value} needs replicas (pods per physical GPU)",
                allowed=f"2-{MAX_SHARED_CLIENTS_PER_GPU}",
                fix="add sharing.replicas, e.g. 4",
            )
        return
    # MIG
    if sh.replicas is not None:
        sharing.error(
            "replicas",
            "MIG instances are not shared further: replicas only applies to time-slicing and mps",
            sh.replicas,
            allowed="no replicas with mode mig",
            fix="remove replicas",
        )
    this_pool = _about_pool(issues, origin, pool)
    if eff.mode == GpuRuntimeMode.DEVICE_PLUGIN:
        this_pool.error(
            "mode",
            "MIG needs a MIG manager to partition the GPUs, and device-plugin mode has none",
            sh.mode.value,
            allowed="mig with gpu-operator (its MIG manager)"
            + (" or gke-managed (GKE partitions the GPUs)" if cloud == Cloud.GCP else ""),
            fix="set the pool's gpuRuntime.mode: gpu-operator, or use time-slicing / mps",
        )
    if machine is None:
        return  # unknown machine type: already reported by the pool checks
    model = machine.gpu_model
    if not mig.supports_mig(model):
        this_pool.error(
            "mode",
            f"{model.value} GPUs ({pool.machine_type}) do not support MIG",
            sh.mode.value,
            allowed="MIG GPUs: " + allowed_list(m.value for m in mig.mig_models()),
            fix="use time-slicing or mps on this pool, or a MIG-capable machine type",
        )
        return
    if sh.mig_profile is None:
        sharing.error(
            "migProfile",
            "mode mig needs migProfile",
            allowed=allowed_list(mig.profile_names(model)),
            fix=f"add sharing.migProfile, e.g. {mig.profile_names(model)[0]}",
        )
        return
    _check_mig_profile(this_pool.at("migProfile"), mig, model, sh.mig_profile, eff)


def _check_mig_profile(where: Issues, mig: MigCatalog, model: GpuModel, profile: str, eff: EffectiveRuntime) -> None:
    names = mig.profile_names(model)
    found = mig.profile(model, profile)
    if found is None:
        near = _nearest_profile(profile, names)
        where.error(
            None,
            f"{profile} is not a MIG profile of {model.value}",
            profile,
            allowed=allowed_list(names),
            fix=f"did you mean {near!r}?" if near else choice_fix("migProfile", profile, names),
        )
    elif eff.mode == GpuRuntimeMode.GKE_MANAGED and not found.gke_partition:
        where.error(
            None,
            f"GKE cannot partition {model.value} into {profile}",
            profile,
            allowed=allowed_list(mig.profile_names(model, gke_only=True)),
            fix="pick a GKE partition size, or set the pool's gpuRuntime.mode: gpu-operator (its MIG manager "
            "applies any profile)",
        )


def _nearest_profile(profile: str, names: list[str]) -> str | None:
    """Same compute slices, nearest memory: ``1g.5gb`` on an H100 suggests ``1g.10gb`` (not the spelling-closest)."""
    match = re.fullmatch(r"(\d+)g\.(\d+)gb", profile)
    if not match:
        return None
    slices, memory = match.group(1), int(match.group(2))
    same = [n for n in names if n.startswith(f"{slices}g.")]
    return min(same, key=lambda n: abs(int(n.split(".")[1][:-2]) - memory)) if same else None


# -- EFA ------------------------------------------------------------------------------------------------------------
def _check_efa(issues: Issues, cat: Catalog, cloud: Cloud, i: int, pool: NodePool, machine: MachineType | None) -> None:
    over = pool.gpu_runtime.efa_device_plugin if pool.gpu_runtime is not None else None
    if over is None:
        return
    where = ("gpuRuntime", "efaDevicePlugin")
    named = issues.pool(i, pool.name).at(*where)
    if cloud == Cloud.GCP:
        named.error(
            None,
            "efaDevicePlugin is an EKS setting; this stack's cloud is gcp",
            over,
            fix="remove it (GKE multi-node pools use GPUDirect, not EFA)",
        )
    elif not over:
        return
    elif machine is not None and machine.efa_interfaces == 0:
        efa_types = sorted(m for (c, m), x in cat.machines.items() if c == Cloud.AWS and (x.efa_interfaces or 0) > 0)
        named.error(
            None,
            f"{pool.machine_type} has no EFA interface, so the EFA device plugin has nothing to advertise",
            True,
            allowed="EFA instance types: " + allowed_list(efa_types),
            fix="remove efaDevicePlugin, or pick an EFA instance type and set multiNode: true",
        )
    elif not pool.multi_node:
        # The sentence opens with the pool's name already, so it is reported without the 'pool …:' prefix.
        issues.at("nodePools", i, *where).error(
            None,
            f"pool '{pool.name}' has no EFA interfaces: gpu-cluster attaches them to multiNode pools only",
            True,
            allowed="efaDevicePlugin: true with multiNode: true",
            fix="set multiNode: true (one AZ, a cluster placement group, every EFA interface), or remove "
            "efaDevicePlugin",
        )


# -- labels ---------------------------------------------------------------------------------------------------------
def _check_runtime_labels(labels: Issues, pool: NodePool) -> None:
    for key in pool.labels:
        if key in RUNTIME_LABEL_KEYS or key.startswith(RUNTIME_LABEL_PREFIXES):
            labels.error(
                key,
                "node label key is owned by the GPU runtime (it decides who advertises the GPUs)",
                key,
                allowed=f"any key except {', '.join(RUNTIME_LABEL_KEYS)} or keys starting with "
                f"{' or '.join(RUNTIME_LABEL_PREFIXES)}",
                fix="remove it: gpu-cluster sets it from gpuRuntime (mode, sharing)",
            )


# -- stack level ----------------------------------------------------------------------------------------------------
def _check_stack(
    runtime_issues: Issues,
    cloud: Cloud,
    runtime: GpuRuntime,
    pools: list[tuple[int, NodePool]],
    effective: dict[int, EffectiveRuntime],
) -> None:
    modes = {eff.mode for eff in effective.values()}
    if runtime.dcgm_exporter and GpuRuntimeMode.GPU_OPERATOR not in modes:
        runtime_issues.error(
            "dcgmExporter",
            "the DCGM exporter comes with the GPU Operator, and no pool uses gpu-operator",
            True,
            allowed="true only with a gpu-operator pool; false",
            fix="set mode: gpu-operator (stack or pool), or remove dcgmExporter"
            + (" (GKE-managed pools can use GKE's managed DCGM metrics)" if cloud == Cloud.GCP else ""),
        )
    if cloud == Cloud.GCP and runtime.efa_device_plugin is not None:
        runtime_issues.error(
            "efaDevicePlugin",
            "efaDevicePlugin is an EKS setting; this stack's cloud is gcp",
            runtime.efa_device_plugin,
            fix="remove it (GKE multi-node pools use GPUDirect, not EFA)",
        )
    if cloud == Cloud.AWS and runtime.efa_device_plugin and pools and not any(p.multi_node for _, p in pools):
        runtime_issues.warn(
            "efaDevicePlugin",
            "no pool is multiNode, so no pool has EFA interfaces and the EFA device plugin would not run anywhere",
            True,
            fix="set multiNode: true on the pools that need EFA, or remove efaDevicePlugin",
        )
    if (
        "gpu_feature_discovery" in runtime.model_fields_set
        and runtime.gpu_feature_discovery
        and effective
        and modes == {GpuRuntimeMode.GKE_MANAGED}
    ):
        runtime_issues.warn(
            "gpuFeatureDiscovery",
            "every pool is gke-managed, so GPU Feature Discovery does not run (GKE labels its GPU nodes itself)",
            True,
            fix="remove gpuFeatureDiscovery, or use device-plugin / gpu-operator on a pool",
        )


def _check_cos_installer(
    issues: Issues, cloud: Cloud, pools: list[tuple[int, NodePool]], effective: dict[int, EffectiveRuntime]
) -> None:
    """GKE pools without gke-managed share one COS driver-installer DaemonSet, so they share one driver version."""
    if cloud != Cloud.GCP:
        return
    users = {i: effective[i] for i, _ in pools if effective[i].mode != GpuRuntimeMode.GKE_MANAGED}
    versions = {eff.driver_version for eff in users.values()}
    if len(versions) < 2:
        return
    names = {i: p.name for i, p in pools}
    by_version = {v: [names[i] for i, e in users.items() if e.driver_version == v] for v in sorted(versions)}
    summary = "; ".join(f"{v.value}: {', '.join(n)}" for v, n in by_version.items())
    for i, eff in users.items():
        if eff.origin["driver_version"][0] == "nodePools":
            issues.pool(i, names[i]).at("gpuRuntime", "driverVersion").error(
                None,
                "GKE pools without gke-managed share one COS driver installer, so they need one driver version "
                f"({summary})",
                eff.driver_version.value,
                allowed="the same driverVersion on every device-plugin / gpu-operator pool",
                fix="set the same driverVersion on those pools (or only on gpuRuntime)",
            )
