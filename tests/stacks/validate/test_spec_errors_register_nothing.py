"""Every bad config of the error table, run through the real program: it stops before the first resource.

The tables (tests/support/spec/error_cases/, run by tests/stacks/validate/test_*_errors.py) pin the messages; here
each row goes through ``__main__.py`` under the recording engine, as `pulumi preview` would run it, and must raise
``pulumi.RunError`` with nothing registered.
"""

from __future__ import annotations

import pulumi
import pytest

from preview.engine import execute_program, install_mocks
from tests.support.spec.cases import BASELINES, config_for
from tests.support.spec.error_cases import ALL


def _flat(raw: dict) -> dict:
    return {f"gpu-cluster:{key}": value for key, value in raw.items()}


@pytest.mark.parametrize("base, changes, expected", ALL)
def test_bad_config_registers_nothing(base, changes, expected):
    monitor = install_mocks(_flat(config_for(base, changes)))
    with pytest.raises(pulumi.RunError) as info:
        execute_program()
    assert monitor.registered == []
    # the config path of the first error; the wording may differ where Pulumi config keeps an ID as a string
    path = expected[0].splitlines()[0].split(": ")[1]
    assert f"error: {path}: " in str(info.value)


@pytest.mark.parametrize("base", sorted(BASELINES))
def test_the_baselines_do_register_resources(base):
    """The same path with a valid config registers plenty: the empty check above can fail."""
    monitor = install_mocks(_flat(BASELINES[base]))
    execute_program()
    assert len(monitor.registered) > 5
