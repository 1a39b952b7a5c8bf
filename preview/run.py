"""Build a PreviewReport for one stack: validate, run the program offline, price it. The catalog is loaded once
here and handed to everything that reads it."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from catalog import load_catalog
from preview.cost import UnpricedCost, stack_cost
from preview.advice import deploy_advice, pods_ready_warnings
from preview.fabric_summary import COST_NOTES as FABRIC_COST_NOTES, contract_warnings, fabric_summary
from stacks.plan.maintenance import summary as maintenance_summary
from preview.engine import PROJECT_ROOT, read_stack_file, run_program, stack_file
from preview.policy.check import PolicyOptions, apply_policies
from preview.policy.overrides import configured_overrides
from preview.policy.image_pins import host_image_pins
from preview.report import PreviewReport
from preview.slurm_summary import slurm_summary
from render.tenancy import access_notes
from stacks.validate.issues import SpecError, SpecIssue
from stacks.plan.start_time import pod_start_rows
from stacks.validate.load import decode_config
from stacks.validate.planned import load_planned
from stacks.validate.secrets import names_in_namespace, secure_keys
from stacks.validate.stack_file import StackFileError

if TYPE_CHECKING:  # the fleet machinery is imported only by a fleet manager's preview (below)
    from preview.fleet.resolve import Member
    from preview.fleet.stack_files import StackFiles


def preview_config(
    stack: str,
    config: dict[str, Any],
    main: Path = PROJECT_ROOT / "__main__.py",
    policies: PolicyOptions | None = None,
    secret_keys: list[str] | None = None,
    stack_files: StackFiles | None = None,
    alongside: Sequence[str] = (),
) -> PreviewReport:
    """``secret_keys``: None for a stack file (its ``secure:`` values are the secrets); a list when ``config`` is
    already decrypted, as the CLI hands it to the program. ``stack_files``: where a fleet manager's worker stack
    files are read (default: next to ``main``; a diff's base side reads them at its git ref). ``alongside``: stacks
    of this project deployed with this one (``--with``, ``preview/fleet/alongside.py``)."""
    report = PreviewReport(stack=stack)
    raw = decode_config(config)
    secret = names_in_namespace(secure_keys(config) if secret_keys is None else secret_keys)
    # shown in the header even when invalid, so only as the strings they must be (`cloud: [gcp]` is an error, not a
    # header); after validation they are set from the spec
    report.cloud, report.region = (v if isinstance(v, str) else None for v in (raw.get("cloud"), raw.get("region")))
    cat = load_catalog()
    try:  # the program run below asks for the same config: it gets this spec and plan, not a second validation
        planned = load_planned(raw, cat, secret_keys=secret, stack_name=stack)
        spec, plan = planned.spec, planned.plan
        report.warnings = list(planned.warnings) + deploy_advice(spec, cat)
    except SpecError as exc:
        report.errors, report.warnings = exc.errors, [i for i in exc.issues if i.warning]
        return report  # invalid: the program is never run, so nothing is registered
    report.cloud, report.region = spec.cloud.value, spec.region
    if alongside:  # one Cloud NAT per project, region and network across the stacks deployed together
        from preview.fleet.alongside import alongside_issues
        from preview.fleet.stack_files import FolderStackFiles
        from stacks.plan.fleet_egress import nat_scope

        report.errors = alongside_issues(
            stack,
            nat_scope(spec.cloud.value, plan.cluster),
            alongside,
            stack_files or FolderStackFiles(main.parent),
            cat,
        )
        if report.errors:
            return report
    members: list[Member] = []
    references: dict[str, dict] | None = None
    if plan.fleet is not None and plan.fleet.manager:  # StackReferences: preview the workers first (each planned once)
        from preview.fleet.resolve import preview_workers
        from preview.fleet.stack_files import FolderStackFiles
        from stacks.plan.fleet_egress import nat_scope
        from stacks.spec.fleet import FACTS_OUTPUT
        from stacks.validate.fleet_nat import shared_nat_issues

        files = stack_files or FolderStackFiles(main.parent)
        members, report.errors = preview_workers(
            plan.fleet.section, files, lambda name, cfg: preview_config(name, cfg, main, policies)
        )
        if not report.errors:  # one Cloud NAT per project, region and network across the fleet's stack files
            workers = {w.name: i for i, w in enumerate(plan.fleet.section.workers)}
            report.errors = shared_nat_issues(
                nat_scope(spec.cloud.value, plan.cluster),
                [
                    (workers[m.name], m.name, m.stack, (m.report.outputs.get(FACTS_OUTPUT) or {}).get("cloudNat"))
                    for m in members
                ],
            )
        if report.errors:
            return report
        references = {m.reference: m.report.outputs for m in members}
    recording = run_program(config, stack, main, secret_keys, stack_references=references)
    report.resources, report.outputs = recording.resources, recording.outputs
    facts = list(plan.facts)
    try:
        overrides = configured_overrides((policies or PolicyOptions()).config_file)
        report.cost = stack_cost(spec, facts, cat, overrides)  # per physical GPU, whatever the sharing
    except UnpricedCost as exc:  # exit 2 naming the price, never a total that leaves something out
        report.errors = [
            SpecIssue(
                path=exc.path,
                problem=f"no on-demand price for {exc.item} in {exc.region}; refusing to print a total without it",
                value=exc.item,
                fix="add a dated, sourced row to catalog/data/prices.csv, or pick a priced type",
            )
        ]
        report.resources = []  # like any invalid configuration: nothing is reported as created
        return report
    # the plan's queue promises, with what a tenant can reach (rendered here; the plan itself stays unchanged)
    # the queues' $/h read the cost table's price per pool (priceOverrides included): one price in both tables
    quota = (
        plan.quota.repriced({p.pool: p.usd_per_gpu_hour for p in report.cost.pools}) if plan.quota is not None else None
    )
    report.queues = (
        dataclasses.replace(quota, access=access_notes(spec.scheduling, facts))
        if quota is not None and spec.scheduling is not None
        else quota
    )
    report.slurm = slurm_summary(plan.slurm)
    report.fabric = fabric_summary(spec, facts, report.resources)
    report.warnings += contract_warnings(spec, report.fabric)
    report.maintenance = maintenance_summary(spec)
    report.pod_start = pod_start_rows(spec, [p.pod_start for p in plan.pools.values()], facts)
    report.warnings += pods_ready_warnings(spec, report.pod_start)
    if any(f.fabric is not None for f in facts):
        report.cost.notes.append(FABRIC_COST_NOTES[spec.cloud.value])
    if plan.fleet is not None and plan.fleet.manager:
        from preview.fleet.summary import fleet_summary

        from preview.fleet.summary import outside_window_warnings

        report.fleet = fleet_summary(spec, stack, report.cost, members, plan.fleet.egress)
        report.warnings += outside_window_warnings(
            report.fleet, report.fleet["workers"], dt.datetime.now(dt.timezone.utc)
        )
    if spec.serving is not None:  # lazy: the serving tables load only for stacks that serve
        from stacks.plan.serving_cost import serving_rows

        report.serving = serving_rows(spec, facts, overrides)  # billed as the cost table bills the pool
    report.host_images = host_image_pins(report.resources)
    report.gpu_runtime = [
        {"pool": f.name, "machineType": f.machine.machine_type, **f.resolved_runtime.as_dict()} for f in facts
    ]
    apply_policies(report, spec, policies or PolicyOptions())  # the policy pack, as pulumi preview --policy-pack
    if members:  # a worker of unknown price fails the fleet as it fails alone (unknown is not $0)
        from preview.fleet.summary import unpriced_worker_violations

        report.violations += unpriced_worker_violations(members)
    return report


def preview_stack(stack: str, root: Path = PROJECT_ROOT, policies: PolicyOptions | None = None) -> PreviewReport:
    return preview_file(stack, stack_file(stack, root), root / "__main__.py", policies)


def preview_file(
    stack: str,
    path: Path,
    main: Path = PROJECT_ROOT / "__main__.py",
    policies: PolicyOptions | None = None,
    alongside: Sequence[str] = (),
) -> PreviewReport:
    try:
        config = read_stack_file(path)
    except StackFileError as exc:  # not a stack file: exit 2 with where and why, nothing run
        report = PreviewReport(stack=stack, errors=[exc.issue])
    else:
        from preview.fleet.stack_files import FolderStackFiles

        # a fleet manager's workers (and the stacks deployed alongside) are read next to its file, as --base-file does
        here = path.resolve().parent != main.resolve().parent
        files = FolderStackFiles(path.parent) if here else None
        report = preview_config(stack, config, main, policies, alongside=alongside, stack_files=files)
    report.stack_file = path
    return report
