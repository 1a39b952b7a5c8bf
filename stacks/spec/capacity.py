"""What a reserved pool declares about its reservation: its size, and for an EC2 Capacity Block the window it was
bought for and the upfront fee paid. Shape only; the rules (AWS's block durations, a window in the past) live in
``stacks/validate/capacity_block.py`` and the derived window in ``stacks/plan/capacity_block.py``."""
from __future__ import annotations

import datetime as dt

from pydantic import Field

from stacks.spec.model_base import SpecModel


class CapacityWindow(SpecModel):
    start: dt.datetime = Field(description=(
        "When the block starts, ISO 8601 with its time zone, e.g. `2027-01-04T11:30:00Z` (the `StartDate` of "
        "`aws ec2 describe-capacity-reservations`). The node group scales up at this time."))
    duration_hours: int | None = Field(None, ge=1, description=(
        "The block's length in hours (AWS sells 1-14 days in 1-day steps, then 7-day steps up to 182 days). Give "
        "this or `end`."))
    end: dt.datetime | None = Field(None, description=(
        "When the block ends (its `EndDate`; every block ends at 11:30 UTC). Give this or `durationHours`. The node "
        "group scales to 0 at least 30 minutes before it: EC2 starts terminating the block's instances then."))
