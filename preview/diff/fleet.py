"""The fleet cost delta of a manager's diff: the fleet's totals (manager and workers) and each cluster that changed.

Each side previews its workers from the stack files of its own revision, so a change in a worker's stack file shows
here as that worker's line, and adding or dropping a worker shows as a cluster added or removed.
"""

from __future__ import annotations

from typing import Any

from preview.diff.cost import EPSILON_USD

TOTAL_KEYS = ("usdPerHourMin", "usdPerHourMax", "usdPerMonthMax", "maxGpus")
CLUSTER_KEYS = ("usdPerHourMin", "usdPerHourMax", "maxGpus")


def _pair(before: dict[str, Any] | None, after: dict[str, Any] | None, key: str) -> dict[str, Any]:
    b, a = (side.get(key, 0) if side else 0 for side in (before, after))
    return {"before": b, "after": a, "delta": round(a - b, 4)}


def _moved(entry: dict[str, Any], keys: tuple[str, ...]) -> bool:
    return any(abs(entry[k]["delta"]) >= (EPSILON_USD if k.startswith("usd") else 1) for k in keys)


def fleet_delta(base: dict[str, Any] | None, head: dict[str, Any] | None) -> dict[str, Any] | None:
    """``base``/``head``: the Fleet sections (``preview/fleet/summary.py``) of the two sides, None where a side is no
    manager or not rendered. None when neither side is a fleet manager."""
    if base is None and head is None:
        return None
    out: dict[str, Any] = {k: _pair(base and base["totals"], head and head["totals"], k) for k in TOTAL_KEYS}
    clusters_b = {c["name"]: c for c in (base or {}).get("clusters", [])}
    clusters_a = {c["name"]: c for c in (head or {}).get("clusters", [])}
    changed = []
    for name in list(clusters_b) + [n for n in clusters_a if n not in clusters_b]:
        b, a = clusters_b.get(name), clusters_a.get(name)
        entry = {
            "name": name,
            "role": (a or b or {}).get("role"),
            "stack": (a or b or {}).get("stack"),
            "status": "added" if b is None else "removed" if a is None else "changed",
            **{k: _pair(b, a, k) for k in CLUSTER_KEYS},
        }
        if entry["status"] != "changed" or _moved(entry, CLUSTER_KEYS):
            changed.append(entry)
    out["clusters"] = changed
    out["changed"] = bool(changed) or _moved(out, TOTAL_KEYS)
    return out
