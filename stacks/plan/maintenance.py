"""The GKE maintenance policy a cluster gets: the spec's window and exclusions, or the default window for clusters
that run multi-node or reservation pools. Pure: the provider's ``maintenance_policy`` dict and a one-line summary."""

from __future__ import annotations

import datetime as dt

from catalog import CapacityType, Cloud
from stacks.spec.maintenance import MaintenanceWindow
from stacks.spec.cluster import ClusterMode
from stacks.spec.stack import StackSpec

ANCHOR = dt.date(2026, 1, 3)
"""A Saturday: the first occurrence the recurrence counts from (only time of day and length matter; fixed so the
rendered inputs do not change from run to run)."""


def window_for(spec: StackSpec) -> tuple[MaintenanceWindow, bool] | None:
    """``(window, is_default)``, or None: GKE's default (upgrades any time)."""
    if spec.cloud != Cloud.GCP or spec.cluster.mode != ClusterMode.CREATE:
        return None
    given = spec.cluster.maintenance
    if given is not None and given.window is not None:
        return given.window, False
    if any(p.multi_node or p.capacity.type == CapacityType.RESERVATION for p in spec.node_pools):
        return MaintenanceWindow(), True
    return None


def maintenance_policy(spec: StackSpec) -> dict | None:
    """``gcp.container.Cluster.maintenance_policy``, or None."""
    found = window_for(spec)
    exclusions = spec.cluster.maintenance.exclusions if spec.cluster.maintenance else []
    if found is None and not exclusions:
        return None
    policy: dict = {}
    if found is not None:
        window = found[0]
        hour, minute = (int(x) for x in window.start_utc.split(":"))
        start = dt.datetime(ANCHOR.year, ANCHOR.month, ANCHOR.day, hour, minute, tzinfo=dt.timezone.utc)
        end = start + dt.timedelta(hours=window.hours)
        policy["recurring_window"] = {
            "start_time": _rfc3339(start),
            "end_time": _rfc3339(end),
            "recurrence": "FREQ=WEEKLY;BYDAY=" + ",".join(d.value for d in window.days),
        }
    if exclusions:
        policy["maintenance_exclusions"] = [
            {
                "exclusion_name": e.name,
                "start_time": f"{e.start.isoformat()}T00:00:00Z",
                "end_time": f"{e.end.isoformat()}T23:59:59Z",
                "exclusion_options": {"scope": e.scope.value},
            }
            for e in exclusions
        ]
    return policy


def summary(spec: StackSpec) -> dict | None:
    """What the preview shows: the window in words, whether it is the default, the exclusions."""
    found = window_for(spec)
    exclusions = spec.cluster.maintenance.exclusions if spec.cluster.maintenance else []
    if found is None and not exclusions:
        return None
    out: dict = {
        "window": None,
        "default": False,
        "exclusions": [
            {"name": e.name, "start": e.start.isoformat(), "end": e.end.isoformat(), "scope": e.scope.value}
            for e in exclusions
        ],
    }
    if found is not None:
        window, default = found
        hour, minute = (int(x) for x in window.start_utc.split(":"))
        end = (hour * 60 + minute + window.hours * 60) % (24 * 60)
        out["window"] = (
            f"{','.join(d.value for d in window.days)} {window.start_utc}-{end // 60:02d}:{end % 60:02d} "
            f"UTC ({window.hours} h)"
        )
        out["default"] = default
    return out


def _rfc3339(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")
