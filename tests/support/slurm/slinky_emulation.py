"""What Slinky (slurm chart 1.2.1 + slurm-operator) makes of our Helm values, for the real-slurmctld tests.

It reads the *values we pass to the chart* (not our plan), so the test checks what would really be deployed:
- the chart's ``slurm.controller.extraConf`` helper: ``controller.extraConf``, then one
  ``PartitionName=<key> Nodes=<nodesets> <config>`` line per enabled partition in key order, failing like the chart
  when a partition names a NodeSet that does not exist;
- the operator's base slurm.conf (cluster name, auth/slurm + auth/jwt, ``MaxNodeCount=1024``, accounting storage)
  and one ``NodeSet=<name> Feature=<name>`` line per NodeSet, sorted; after the extra config, its merged lines
  (``AuthAltParameters``, ``SlurmctldParameters``: its own options plus the extra config's);
- each NodeSet pod as a dynamic node ``<nodeset>-<ordinal>`` created with its slurmd ``--conf`` (``Features=<nodeset>``
  plus the NodeSet's ``extraConf``); ``Topology=`` as the operator sets it from the Kubernetes node annotation, with
  nodes filling the blocks in order (the test's stand-in for the real placement).
Ports, paths and the test-only ``MailProg``/``SuspendProgram``/``ResumeProgram`` (CLOUD nodes) are the harness's;
power-saving programs the values render (scaling pools) replace the harness's ``/bin/true``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml


class ChartRenderError(Exception):
    """The slurm chart's own ``fail`` in ``templates/controller/_helpers.tpl``."""


def chart_extra_conf(values: dict[str, Any]) -> str:
    lines = [ln for ln in (values.get("controller", {}).get("extraConf") or "").split("\n") if ln]
    nodesets = ["ALL"] + [k for k, v in values.get("nodesets", {}).items() if v.get("enabled", True)]
    for name in sorted(values.get("partitions", {})):
        part = values["partitions"][name]
        members = sorted(set(part.get("nodesets") or []))
        if not members:
            raise ChartRenderError(f"partition `{name}` must contain at least one NodeSet (or ALL).")
        if not part.get("enabled"):
            continue
        for m in members:
            if m not in nodesets:
                raise ChartRenderError(
                    f"partition `{name}` is referencing nodeset `{m}` that does not exist or is disabled."
                )
        lines.append(
            " ".join([f"PartitionName={name}", f"Nodes={','.join(members)}", part.get("config") or ""]).rstrip()
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class Paths:
    etc: str
    state: str
    log: str
    pid: str
    spool: str


def operator_slurm_conf(
    values: dict[str, Any], paths: Paths, ctld_port: int, slurmd_port: int, dbd_port: int | None
) -> str:
    accounting = values.get("accounting", {}).get("enabled", False)
    conf = [
        "### GENERAL ###",
        f"ClusterName={values['clusterName']}",
        "SlurmUser=slurm",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={ctld_port}",
        f"StateSaveLocation={paths.state}",
        "SlurmdUser=root",
        f"SlurmdPort={slurmd_port}",
        f"SlurmdSpoolDir={paths.spool}",
        "MaxNodeCount=1024",
        "### LOGGING ###",
        f"SlurmctldLogFile={paths.log}",
        f"SlurmSchedLogFile={paths.log}",
        f"SlurmctldPidFile={paths.pid}",
        "### PLUGINS & PARAMETERS ###",
        "AuthType=auth/slurm",
        "CredType=cred/slurm",
        "AuthAltTypes=auth/jwt",
        f"AuthAltParameters=jwt_key={paths.etc}/jwt_hs256.key",
        "SlurmctldParameters=enable_configless,reconfig_on_restart",
        "### ACCOUNTING ###",
        "AccountingStorageType=accounting_storage/slurmdbd"
        if accounting
        else "AccountingStorageType=accounting_storage/none",
    ]
    if accounting:
        conf += ["AccountingStorageHost=localhost", f"AccountingStoragePort={dbd_port}"]
    extra = chart_extra_conf(values)
    programs = [] if "ResumeProgram=" in extra else ["SuspendProgram=/bin/true", "ResumeProgram=/bin/true"]
    conf += [
        "### TEST HARNESS (CLOUD nodes stand in for NodeSet pods) ###",
        "MailProg=/bin/true",
        *programs,
        "### NODESET & PARTITION ###",
    ]
    conf += [f"NodeSet={n} Feature={n}" for n in sorted(values.get("nodesets", {}))]
    conf += ["### EXTRA CONFIG ###", extra]
    merged = merged_config(
        extra,
        {
            "AuthAltParameters": [f"jwt_key={paths.etc}/jwt_hs256.key"],
            "SlurmctldParameters": ["enable_configless", "reconfig_on_restart"],
        },
    )
    if merged:
        conf += ["### MERGED CONFIG ###", *merged]
    return "\n".join(conf) + "\n"


def merged_config(extra: str, operator: dict[str, list[str]]) -> list[str]:
    """The operator's ``BuildMergedConfig`` (internal/builder/common/common.go, v1.2.1): for each key it sets itself
    that ``extraConf`` also sets, one line after the extra config (the last definition wins in slurm.conf) with the
    operator's options plus the extra options whose option name it lacks, lower-cased, sorted."""
    seen: dict[str, str] = {}
    for line in extra.splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            seen[key.strip().lower()] = value.strip()
    out = []
    for key in sorted(operator):
        if key.lower() not in seen:
            continue
        values = set(operator[key])
        names = {v.split("=", 1)[0] for v in values}
        for v in seen[key.lower()].split(","):
            if v and v.split("=", 1)[0] not in names:
                values.add(v.lower())
                names.add(v.split("=", 1)[0])
        out.append(f"{key}={','.join(sorted(values))}")
    return out


def node_topology(values: dict[str, Any]) -> dict[str, list[tuple[int, int, str | None]]]:
    """Per NodeSet: (first ordinal, last ordinal, ``Topology=`` value or None) ranges covering its replicas."""
    topo_doc = yaml.safe_load(values.get("configFiles", {}).get("topology.yaml") or "[]") or []
    out: dict[str, list[tuple[int, int, str | None]]] = {}
    for name, ns in values.get("nodesets", {}).items():
        replicas = int(ns["replicas"])
        ranges: list[tuple[int, int, str | None]] = [(0, replicas - 1, None)]
        for topo in topo_doc:
            if "block" in topo and topo["topology"] == name:
                size = topo["block"]["block_sizes"][0]
                blocks = [b["block"] for b in topo["block"]["blocks"]]
                ranges = [(i * size, min(replicas, (i + 1) * size) - 1, f"{name}:{b}") for i, b in enumerate(blocks)]
            if "tree" in topo:
                leaves = [s["switch"] for s in topo["tree"]["switches"] if "children" not in s]
                if name in leaves:
                    ranges = [(0, replicas - 1, f"{topo['topology']}:{name}")]
        out[name] = ranges
    return out


def create_node_commands(values: dict[str, Any]) -> list[list[str]]:
    """``scontrol create`` argument lists registering every NodeSet pod as the operator + slurmd -Z would."""
    cmds = []
    topology = node_topology(values)
    for name, ns in values.get("nodesets", {}).items():
        for first, last, topo in topology[name]:
            if last < first:  # a NodeSet at 0 replicas (a scaling pool with minNodes 0): no pod, no node
                continue
            names = f"{name}-{first}" if first == last else f"{name}-[{first}-{last}]"
            args = ["scontrol", "create", f"NodeName={names}", f"Features={name}", *ns["extraConf"].split(" ")]
            if topo:
                args.append(f"Topology={topo}")
            cmds.append(args + ["State=CLOUD"])
    return cmds
