"""Waivers that can never apply: the pack ignores a waiver whose ``resource`` names nothing in the stack, so a typo
or a renamed pool would silently stop waiving (or, worse, the author believes a finding is waived). The offline
preview warns about each one, with the names it could have meant."""

from __future__ import annotations

import difflib
from typing import Any, Iterable

from preview.engine import Registered
from stacks.validate.issues import SpecIssue


def unmatched_waiver_warnings(
    config: dict[str, Any], resources: Iterable[Registered], pools: Iterable[str], source: str
) -> list[SpecIssue]:
    """One warning per waiver (in any rule's config) whose ``resource`` is no pool name, resource name or URN."""
    resources = list(resources)
    pool_names = sorted(pools)
    known = set(pool_names) | {r.name for r in resources} | {r.urn for r in resources}
    warnings = []
    for rule, cfg in config.items():
        waivers = getattr(cfg, "properties", {}).get("waivers")
        for i, waiver in enumerate(waivers if isinstance(waivers, list) else []):
            target = waiver.get("resource") if isinstance(waiver, dict) else None
            if not isinstance(target, str) or target in known:
                continue
            close = difflib.get_close_matches(target, pool_names, n=1) or difflib.get_close_matches(
                target, sorted(r.name for r in resources), n=1
            )
            warnings.append(
                SpecIssue(
                    f"{source}: {rule}.waivers[{i}].resource",
                    "this waiver matches no pool or resource of the stack, so it waives nothing",
                    target,
                    f"a pool ({', '.join(pool_names) or 'none'}), a Pulumi resource name or a URN",
                    f"did you mean {close[0]!r}?"
                    if close
                    else "fix the name, or remove the waiver if the pool is gone",
                    warning=True,
                )
            )
    return warnings
