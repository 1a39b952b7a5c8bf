"""Fixtures shared by the policy tests."""

from __future__ import annotations

import pytest

from tests.support.policy.harness import Pack


def _waived(pack: Pack, rule: str, resource: str, run, **settings) -> list:
    """``run()`` reports ``rule`` (configured with ``settings``); return what it reports once a waiver names ``rule``
    and ``resource`` (a pool, subject or resource name): a waived finding is expected to be gone."""
    pack.configure({rule: settings} if settings else None)
    try:
        assert rule in [d[0] for d in run()], f"{rule} reports nothing to waive"
        pack.configure(
            {
                rule: {
                    **settings,
                    "waivers": [{"rule": rule, "resource": resource, "reason": "accepted in this test stack"}],
                }
            }
        )
        return [d for d in run() if d[0] == rule]
    finally:
        pack.configure()


@pytest.fixture
def waived():
    """``waived(pack, rule, resource, run, **settings)``: the findings of ``rule`` left after waiving ``resource``."""
    return _waived
