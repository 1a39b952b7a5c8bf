"""GKE maintenance (``cluster.maintenance``): when GKE may upgrade the cluster and its nodes, and when it may not.

A 64-node training pool upgraded a few nodes at a time in the middle of a run loses the run; a window keeps upgrades
to quiet hours and an exclusion stops them for a campaign. Shape only; rules in ``stacks/validate/maintenance.py``."""

from __future__ import annotations

import datetime as dt
from enum import Enum

from pydantic import Field

from stacks.spec.model_base import SpecModel


class Weekday(str, Enum):
    MO = "MO"
    TU = "TU"
    WE = "WE"
    TH = "TH"
    FR = "FR"
    SA = "SA"
    SU = "SU"


class ExclusionScope(str, Enum):
    NO_UPGRADES = "NO_UPGRADES"
    NO_MINOR_UPGRADES = "NO_MINOR_UPGRADES"
    NO_MINOR_OR_NODE_UPGRADES = "NO_MINOR_OR_NODE_UPGRADES"


class MaintenanceWindow(SpecModel):
    days: list[Weekday] = Field(
        default_factory=lambda: [Weekday.SA, Weekday.SU],
        min_length=1,
        description=("Weekdays the window opens (`MO` … `SU`). Default: `SA`, `SU`."),
    )
    start_utc: str = Field(
        "00:00",
        pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$",
        description=("Start time of day, UTC, `HH:MM`. Default `00:00`."),
    )
    hours: int = Field(8, ge=4, le=24, description="Length in hours, 4-24 (GKE needs at least 4). Default 8.")


class MaintenanceExclusion(SpecModel):
    name: str = Field(description="Name of the exclusion, e.g. `q3-pretraining`.")
    start: dt.date = Field(description="First day (UTC), `YYYY-MM-DD`.")
    end: dt.date = Field(description="Last day (UTC), `YYYY-MM-DD`, after `start`.")
    scope: ExclusionScope = Field(
        ExclusionScope.NO_MINOR_OR_NODE_UPGRADES,
        description=(
            "What GKE may not do meanwhile. Default `NO_MINOR_OR_NODE_UPGRADES` (security patches to the control plane "
            "still apply; at most 180 days); `NO_UPGRADES` stops everything (at most 30 days)."
        ),
    )


class Maintenance(SpecModel):
    window: MaintenanceWindow | None = Field(
        None,
        description=(
            "Recurring window. Omitted: `SA`, `SU` 00:00-08:00 UTC on clusters with a multi-node or reservation pool "
            "(GKE's default, any time, elsewhere)."
        ),
    )
    exclusions: list[MaintenanceExclusion] = Field(
        default_factory=list, description=("Periods without (some) upgrades, e.g. a training campaign.")
    )
