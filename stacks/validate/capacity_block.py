"""Reserved pools: the settings that describe an EC2 Capacity Block only on such a pool; a block's size, window and
fee against AWS's rules are in ``stacks/validate/capacity_block_window.py`` (loaded for capacity-block pools only).

``now`` is the moment of the check (UTC); ``load_spec`` passes the clock, tests a fixed time.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterable

from catalog import Catalog, Cloud
from stacks.plan.reservation import is_capacity_block
from stacks.spec.stack import NodePool
from stacks.validate.issues import Issues

BLOCK_ONLY = ("window", "upfrontFeeUsd", "rollNodes")
"""Settings that describe an EC2 Capacity Block and nothing else."""


def check_capacity_blocks(
    issues: Issues, cat: Catalog, cloud: Cloud, pools: Iterable[tuple[int, NodePool]], now: dt.datetime
) -> None:
    for i, pool in pools:
        capacity = issues.pool(i, pool.name).at("capacity")
        cap = pool.capacity
        given = {
            "window": cap.window is not None,
            "upfrontFeeUsd": cap.upfront_fee_usd is not None,
            "rollNodes": cap.roll_nodes,
        }
        if not is_capacity_block(pool) or cloud != Cloud.AWS:
            for key in (k for k in BLOCK_ONLY if given[k]):
                capacity.error(
                    key,
                    f"{key} describes an EC2 Capacity Block, and this pool is not one",
                    allowed="type: reservation with reservationKind: capacity-block (EKS)",
                    fix=f"remove capacity.{key}, or set reservationKind: capacity-block",
                )
            continue
        # lazy: the block's rules (and stacks/plan/capacity_block.py) load only for a stack with a capacity block (the
        # what-if/preview import floor)
        from stacks.validate.capacity_block_window import check_block

        # a multi-node NVLink pool's job pods claim an IMEX channel (DRA): pending ones cannot scale it from zero
        dra = pool.multi_node and (cloud, pool.machine_type) in cat.nvlink_domains
        check_block(capacity, pool, now, dra)
