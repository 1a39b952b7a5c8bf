"""A price just over its limit reads as over it, and the policy-pack config example in RULES.md fits the stack it
names (a newcomer copying it got "$1.00 per GPU-hour ... at most $1.00")."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from policies.docs import RULES_MD
from policies.findings import distinct_money
from preview.engine import PROJECT_ROOT
from tests.support.policy.harness import Pack, baseline, find

NP = "gcp:container/nodePool:NodePool"


@pytest.mark.parametrize(
    "price, limit, shown",
    [
        (11.06125, 10.0, ("$11.06", "$10.00")),  # apart at cents: unchanged
        (1.0004, 1.0, ("$1.0004", "$1.0000")),
        (11.06125, 11.06, ("$11.061", "$11.060")),
        (2500.5, 2500.0, ("$2,500.50", "$2,500.00")),
    ],
)
def test_a_price_and_its_limit_show_the_decimals_that_tell_them_apart(price, limit, shown):
    assert distinct_money(price, limit) == shown


def test_a_pool_just_over_its_gpu_hour_limit_is_not_shown_at_the_limit():
    pack, gke = Pack(), baseline("gcp")
    pack.configure({"cost-gpu-hour-limit": {"maxUsdPerGpuHourByModel": {"H100_80GB": 11.06}}})
    [(_, _, message)] = pack.resource(find(gke, NP, "h100"), gke)
    observed = re.search(r"observed: (\$[\d.,]+) per GPU-hour", message).group(1)
    required = re.search(r"at most (\$[\d.,]+) per GPU-hour", message).group(1)
    assert observed != required and (observed, required) == ("$11.061", "$11.060"), message


def _example_config() -> dict:
    text = RULES_MD.read_text(encoding="utf-8")
    return json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))


@pytest.mark.slow
def test_the_example_policy_pack_config_fits_the_stack_it_names(tmp_path):
    config = tmp_path / "org-policy.json"
    config.write_text(json.dumps(_example_config()))
    out = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "gke-operator-mig", "--policy-pack-config", str(config)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0 and "policy violation" not in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
