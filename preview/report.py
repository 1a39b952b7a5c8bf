"""The preview report: one plain dict that every output format renders (and whose JSON keys are a contract)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from preview.cost import CostReport
from preview.engine import Registered
from stacks.plan.quota import QuotaPlan
from stacks.validate.issues import SpecIssue

EXIT_OK, EXIT_VIOLATION, EXIT_INVALID = 0, 1, 2


@dataclass
class PreviewReport:
    stack: str
    cloud: str | None = None
    region: str | None = None
    resources: list[Registered] = field(default_factory=list)
    cost: CostReport | None = None
    violations: list[dict[str, Any]] = field(default_factory=list)
    errors: list[SpecIssue] = field(default_factory=list)
    warnings: list[SpecIssue] = field(default_factory=list)
    gpu_runtime: list[dict[str, Any]] = field(default_factory=list)
    """Per pool: who advertises nvidia.com/gpu, driver, sharing, physical vs advertised GPUs per node."""
    waived: list[dict[str, Any]] = field(default_factory=list)
    """Policy findings a waiver in the policy pack config covered (rule, resource, reason)."""
    policy_rules: list[dict[str, Any]] = field(default_factory=list)
    """Metadata of every rule of the policy pack that ran (for SARIF); empty when no pack ran."""
    policies_skipped: bool = False
    """``--no-policies``: the pack did not run, which every format says (no violations is not a pass)."""
    stack_file: Path | None = None
    queues: QuotaPlan | None = None
    """The scheduling section: quota per queue and pool, promised share of each pool, $/h per team."""
    slurm: dict[str, Any] | None = None
    """``workload: slurm``: partitions, NodeSets and GRES, blocks, QOS, accounts, priority weights."""
    maintenance: dict[str, Any] | None = None
    """GKE: the maintenance window (and whether it is the default) and exclusions; None: GKE's default."""
    fabric: list[dict[str, Any]] = field(default_factory=list)
    """Per pool: GPU fabric, networks, NICs per node, NCCL transport, nominal bandwidth, what was wired."""
    pod_start: list[dict[str, Any]] = field(default_factory=list)
    """Per pool: what shortens a pod's start on a new node, and how a cold node gets each declared image."""
    host_images: list[dict[str, Any]] = field(default_factory=list)
    """Per host-level image: how it is pinned (digest, digest resolved from its registry at deploy, tag only) and
    where it runs (``preview/policy/image_pins.py``)."""
    fleet: dict[str, Any] | None = None
    """A fleet manager: its workers (previewed from their stack files), queues, GPUs and cost (preview/fleet/)."""
    serving: list[dict[str, Any]] = field(default_factory=list)
    """Per inference service: fit, SLO evidence, capacity at peak, $/h and $/M tokens (``preview/serving_summary.py``)."""
    outputs: dict[str, Any] = field(default_factory=dict)
    """The stack outputs, resolved (secrets included, so never rendered: a StackReference reads them offline)."""

    @property
    def exit_code(self) -> int:
        if self.errors:
            return EXIT_INVALID
        if any(v.get("enforcement") == "mandatory" for v in self.violations):
            return EXIT_VIOLATION
        return EXIT_OK

    @property
    def policy_pack(self) -> dict[str, Any]:
        """Whether the pack ran: in JSON a skipped pack must not read as a clean ``violations: []``."""
        if self.policies_skipped:
            return {"ran": False, "reason": "--no-policies"}
        if self.errors and not self.policy_rules:  # invalid: refused before (or by) the pack, no rule was checked
            return {"ran": False, "reason": "invalid configuration"}
        return {"ran": True, "rules": len(self.policy_rules)}

    def as_dict(self) -> dict[str, Any]:
        serving = {"serving": self.serving} if self.serving else {}  # other stacks' JSON stays as it was
        return {
            **serving,
            "stack": self.stack,
            "cloud": self.cloud,
            "region": self.region,
            "exitCode": self.exit_code,
            "resources": [
                {
                    "type": r.type,
                    "name": r.name,
                    "parent": r.parent_urn,
                    "urn": r.urn,
                    "custom": r.custom,
                    "protect": r.protect,
                    "ignoreChanges": r.ignore_changes,
                    "dependsOn": sorted(set(r.dependencies)),
                    "inputs": r.redacted_inputs,
                }
                for r in sorted(self.resources, key=lambda r: r.urn)
            ],  # registration order varies
            "cost": self.cost.as_dict() if self.cost else None,
            "violations": self.violations,
            "policyPack": self.policy_pack,
            "errors": [e.as_dict() for e in self.errors],
            "warnings": [w.as_dict() for w in self.warnings],
            "gpuRuntime": self.gpu_runtime,
            "waived": self.waived,
            "queues": self.queues.as_dict() if self.queues else None,
            "slurm": self.slurm,
            "fabric": self.fabric,
            "podStart": self.pod_start,
            "maintenance": self.maintenance,
            "fleet": self.fleet,
            "hostImages": self.host_images,
        }
