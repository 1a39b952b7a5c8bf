"""The spec error tables by concern (one module each, mirroring ``stacks/validate/``); ``ALL`` is every row."""

from __future__ import annotations

from tests.support.spec.error_cases import cluster, pool, pool_capacity, pool_catalog, queued, top_level

ALL = [*top_level.CASES, *cluster.CASES, *pool.CASES, *pool_catalog.CASES, *pool_capacity.CASES, *queued.CASES]
