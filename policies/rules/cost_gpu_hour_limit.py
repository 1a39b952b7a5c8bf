"""cost-gpu-hour-limit: each GPU pool's $/GPU-hour at its price for region and capacity type is within the limit.

Fails closed: a pool whose machine type or price is unknown is a violation, never a pass (unknown is not $0).
"""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog, GpuModel, MachineType
from policies.findings import Finding, distinct_money, money
from policies.pools import PoolView, pool_view
from policies.prices import PRICE_OVERRIDES_SCHEMA, block_unknown, node_quote, override_example
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL
from policies.rule import Category, Config, Resource, Rule
from policies.registry import register

ID = "cost-gpu-hour-limit"
DEFAULT_MAX_USD_PER_GPU_HOUR = 15.0
"""Above every on-demand list price in the catalog (p6-b200: $14.24): set your organisation's own limit."""


def check(resource: Resource, cfg: Config, cat: Catalog) -> Iterable[Finding]:
    view = pool_view(resource, cat)
    if view is None or not view.is_gpu(cat):
        return
    for machine_type in view.machine_types or ("<none>",):
        yield from _check_machine(view, machine_type, cfg, cat)


def _check_machine(view: PoolView, machine_type: str, cfg: Config, cat: Catalog) -> Iterable[Finding]:
    machine = view.machine(cat, machine_type)
    where = f"{view.capacity.value} in {view.region or 'an unknown region'}"
    if machine is None:
        yield Finding(
            view.subject,
            "the machine type is not in the GPU catalog, so its cost cannot be checked",
            observed=f"machine type {machine_type}",
            required="a known price (unknown is not $0)",
            fix=f"add {machine_type} to catalog/data/machines.csv and a dated, sourced price to "
            "catalog/data/prices.csv, or use a machine type from the catalog",
            keys=view.keys,
        )
        return
    if view.capacity_block:
        yield from _check_block(view, machine_type, machine, cfg)
        return
    quote = node_quote(cat, machine, view.region, view.capacity, cfg["priceOverrides"])
    if quote is None:
        yield Finding(
            view.subject,
            "no price is known for the pool, so its cost cannot be checked",
            observed=f"no price for {machine_type} {where}",
            required="a known price (unknown is not $0)",
            fix="add a dated, sourced row to catalog/data/prices.csv, or add "
            f"{override_example(machine_type, view.region, view.capacity)} to priceOverrides of {ID} in "
            "the policy pack config",
            keys=view.keys,
        )
        return
    per_gpu = quote.usd_per_node_hour / machine.gpus
    model = machine.gpu_model.value
    by_model = cfg["maxUsdPerGpuHourByModel"]
    limit = float(by_model[model]) if model in by_model else float(cfg["maxUsdPerGpuHour"])
    knob = f"maxUsdPerGpuHourByModel.{model}" if model in by_model else "maxUsdPerGpuHour"
    if per_gpu > limit:
        yield Finding(
            view.subject,
            "the price per GPU-hour is over the limit",
            observed=f"{distinct_money(per_gpu, limit)[0]} per GPU-hour: {machine_type} {where} costs "
            f"{money(quote.usd_per_node_hour)}/node-hour for {machine.gpus} × {model} "
            f"({quote.describe()})",
            required=f"at most {distinct_money(per_gpu, limit)[1]} per GPU-hour for {model}, from {knob}",
            fix="use spot or a reservation with a negotiated price (priceOverrides), pick a cheaper "
            f"machine type or region, or have the platform team raise {knob} of {ID} in the policy pack "
            "config",
            keys=view.keys,
        )


def _limit(cfg: Config, model: str) -> tuple[float, str]:
    by_model = cfg["maxUsdPerGpuHourByModel"]
    if model in by_model:
        return float(by_model[model]), f"maxUsdPerGpuHourByModel.{model}"
    return float(cfg["maxUsdPerGpuHour"]), "maxUsdPerGpuHour"


def _check_block(view: PoolView, machine_type: str, machine: MachineType, cfg: Config) -> Iterable[Finding]:
    """A capacity block's $/GPU-hour: its declared fee over its window and its reserved nodes' GPUs."""
    hourly = view.block_usd_per_hour
    if hourly is None:
        yield Finding(
            view.subject,
            "no price is known for the pool, so its cost cannot be checked",
            observed=f"{machine_type} on a {block_unknown(view)}",
            required="a known price (unknown is not $0)",
            fix="declare capacity.upfrontFeeUsd and capacity.window of the pool in the stack config",
            keys=view.keys,
        )
        return
    nodes = view.reserved_nodes or (view.max_nodes if isinstance(view.max_nodes, int) else 1)
    per_gpu = hourly / nodes / machine.gpus
    limit, knob = _limit(cfg, machine.gpu_model.value)
    if per_gpu > limit:
        shown, at_most = distinct_money(per_gpu, limit)
        yield Finding(
            view.subject,
            "the price per GPU-hour is over the limit",
            observed=f"{shown} per GPU-hour: capacity block of {nodes} × {machine_type} for "
            f"{money(view.block_fee_usd or 0.0)} over {view.block_hours:g} h",
            required=f"at most {at_most} per GPU-hour for {machine.gpu_model.value}, from {knob}",
            fix=f"buy a cheaper block, or have the platform team raise {knob} of {ID} in the policy pack config",
            keys=view.keys,
        )


RULE = register(
    Rule(
        id=ID,
        title="GPU-hour price within limit",
        category=Category.COST,
        description="Each GPU pool's price per GPU-hour, at its region and capacity type, is within the limit.",
        why=(
            "$/GPU-hour is the number finance and capacity planning compare across clouds and machine types; "
            "checking it before deploy stops an expensive pool from being created by a one-line change. Prices "
            "are static inputs (machine type, region, capacity type), so the check works during preview."
        ),
        remediation=(
            "1. Read the pool, machine type, capacity type and price in the message. 2. Choose spot, a "
            "reservation with a negotiated price (add it to priceOverrides), or a cheaper machine type or "
            "region. 3. Or have the platform team raise maxUsdPerGpuHour / maxUsdPerGpuHourByModel in the "
            "policy pack config. An unknown price is fixed by adding it to catalog/data/prices.csv or to "
            "priceOverrides."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP),
        check=check,
        reads_catalog=True,
        config={
            "maxUsdPerGpuHour": {
                "type": "number",
                "minimum": 0,
                "default": DEFAULT_MAX_USD_PER_GPU_HOUR,
                "description": "Limit in USD per GPU-hour for GPU models without their own limit.",
            },
            "maxUsdPerGpuHourByModel": {
                "type": "object",
                "default": {},
                "propertyNames": {"enum": [m.value for m in GpuModel]},
                "additionalProperties": {"type": "number", "minimum": 0},
                "description": 'Limit per GPU model, e.g. `{"H100_80GB": 10, "L4": 1}`; overrides maxUsdPerGpuHour.',
            },
            "priceOverrides": PRICE_OVERRIDES_SCHEMA,
        },
    ),
    order=1010,
)
