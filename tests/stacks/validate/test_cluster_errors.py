"""The cluster section: name, the other cloud's settings, API access, the EKS control plane, the system pool.

The rows live in ``tests/support/spec/error_cases/cluster.py`` (the program-level test in
``test_spec_errors_register_nothing.py`` runs them too); a row fails when its message changes.
"""

from __future__ import annotations

import pytest

from tests.support.spec.cases import assert_every_issue_explains_itself, config_for, errors_of
from tests.support.spec.error_cases.cluster import CASES


@pytest.mark.parametrize("base, changes, expected", CASES)
def test_bad_cluster_setting_is_rejected_with_exact_message(base, changes, expected):
    assert errors_of(config_for(base, changes)) == expected


@pytest.mark.parametrize("base, changes, expected", CASES)
def test_every_issue_has_path_problem_and_fix(base, changes, expected):
    assert_every_issue_explains_itself(config_for(base, changes))
