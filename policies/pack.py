"""The pack: its name and its rules, discovered from ``policies/rules/`` (each module registers its rule and order).
``__main__.py`` serves it; tests and the offline preview build the same pack from here. Assembling loads the catalog
once and hands it to the rules that read it."""

from __future__ import annotations

from typing import Any

from pulumi_policy import EnforcementLevel

from catalog import Catalog, load_catalog

from policies.rule import Rule
from policies.registry import discover

PACK_NAME = "gpu-cluster-guardrails"
DESCRIPTION = (
    "gpu-cluster guardrails: cost per GPU-hour and stack budget, GPU topology, cross-layer scheduler "
    "consistency and a GKE/EKS security baseline, over concrete resources."
)

RULES: list[Rule] = discover()
"""Every rule of ``policies/rules/``, found by registration (``policies/registry.py``), in its registered order."""


def pack_arguments(cat: Catalog | None = None) -> dict[str, Any]:
    """Keyword arguments of ``PolicyPack`` (and of the SDK's in-process servicer used by tests); ``cat``: the
    catalog the rules read (default: the project's, loaded here once)."""
    cat = cat if cat is not None else load_catalog()
    return {
        "name": PACK_NAME,
        "policies": [rule.policy(cat) for rule in RULES],
        "enforcement_level": EnforcementLevel.ADVISORY,
        "description": DESCRIPTION,
        "display_name": "gpu-cluster guardrails",
    }
