"""Names are matched whole (``fullmatch``, not ``re.match`` with ``$``, which matches before a
trailing newline) and no string of the config may carry a control character, whatever field it sits in."""

from __future__ import annotations

import pulumi
import pytest

from preview.engine import execute_program, install_mocks
from tests.support.spec.edit import edits
from tests.support.spec.scheduling_fixtures import GKE_TEAMS
from tests.support.slurm.configs import GKE_NO_ACCOUNTING
from tests.support.spec.cases import EKS_BASELINE, GKE_BASELINE, errors_of, issues_of
from stacks.validate.names import valid_label_key, valid_label_value

TRAILING_NEWLINE = [
    pytest.param(GKE_BASELINE, {"nodePools[0].name": "l4\n"}, "gpu-cluster:nodePools[0].name", id="pool-name"),
    pytest.param(GKE_BASELINE, {"cluster.name": "ml-train\n"}, "gpu-cluster:cluster.name", id="cluster-name"),
    pytest.param(GKE_BASELINE, {"project": "ml-platform-prod\n"}, "gpu-cluster:project", id="project"),
    pytest.param({**EKS_BASELINE, "accountId": "123456789012\n"}, {}, "gpu-cluster:accountId", id="account-id"),
    pytest.param(
        EKS_BASELINE,
        {"cluster.subnets.us-east-1a": "subnet-0123456789abcdef0\n"},
        "gpu-cluster:cluster.subnets.us-east-1a",
        id="subnet-id",
    ),
    pytest.param(GKE_BASELINE, {"labels": {"team": "ml\n"}}, "gpu-cluster:labels.team", id="cloud-label-value"),
    pytest.param(
        GKE_BASELINE,
        {"nodePools[0].labels": {"team\n": "ml"}},
        "gpu-cluster:nodePools[0].labels.team\\n",
        id="node-label-key",
    ),
    pytest.param(
        GKE_BASELINE,
        {"nodePools[0].taints": [{"key": "dedicated", "value": "ml\n", "effect": "NoSchedule"}]},
        "gpu-cluster:nodePools[0].taints[0].value",
        id="taint-value",
    ),
    pytest.param(
        GKE_TEAMS, {"scheduling.queues[0].name": "research\n"}, "gpu-cluster:scheduling.queues[0].name", id="queue-name"
    ),
]


@pytest.mark.parametrize("base, changes, path", TRAILING_NEWLINE)
def test_a_trailing_newline_is_refused_once_at_its_path(base, changes, path):
    errors = errors_of(edits(base, changes))
    assert [e.splitlines()[0] for e in errors] == [
        f"error: {path}: "
        + (
            "pool 'h100': "
            if "nodePools[0]" in path and "name" not in path
            else "pool 'l4\\n': "
            if path.endswith("nodePools[0].name")
            else ""
        )
        + f"the {'key' if path.endswith(chr(92) + 'n') else 'value'} contains a control character (U+000A LINE FEED)"
    ]


def test_a_partition_name_with_a_newline_is_refused():
    raw = {k.partition(":")[2]: v for k, v in GKE_NO_ACCOUNTING.items() if k.startswith("gpu-cluster:")}
    cfg = edits(raw, {"scheduling.slurm.partitions": [{"name": "big\n", "pools": ["h100"]}]})
    assert [e.splitlines()[0] for e in errors_of(cfg)] == [
        "error: gpu-cluster:scheduling.slurm.partitions[0].name: the value contains a control character "
        "(U+000A LINE FEED)"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "a\tb",
        "esc\x1b[31m",
        "nul\x00",
        "del\x7f",
        "c1\x85",
        "ls\u2028",
        "rtl\u202eoverride",
        "zw\u200bspace",
        "bom\ufeff",
    ],
)
def test_every_control_or_invisible_character_is_refused_in_any_string_field(text):
    cfg = edits(GKE_BASELINE, {"cluster.network": text})  # a field no pattern checks
    (error,) = errors_of(cfg)
    assert error.startswith("error: gpu-cluster:cluster.network: the value contains a control character (U+")
    assert "\n  received: " in error and all(ch not in error for ch in text if not ch.isalnum() and ch not in "[")


def test_a_message_never_carries_the_control_character_itself():
    (error,) = errors_of(edits(GKE_BASELINE, {"nodePools[0].name": "l4\n\x1b[2J"}))
    assert "\x1b" not in error and error.count("\n") == 3  # the four lines of one message, nothing injected


def test_the_pool_label_with_a_newline_never_reaches_the_program():
    """The reproducer: `name: "l4\\n"` previewed with exit 0 and the node label `gpu-cluster/pool: "l4\\n"`."""
    cfg = {f"gpu-cluster:{k}": v for k, v in edits(GKE_BASELINE, {"nodePools[0].name": "l4\n"}).items()}
    monitor = install_mocks(cfg)
    with pytest.raises(pulumi.RunError):
        execute_program()
    assert monitor.registered == []


@pytest.mark.parametrize(
    "check, text", [(valid_label_key, "team\n"), (valid_label_value, "ml\n"), (valid_label_key, "example.com\n/team")]
)
def test_label_syntax_is_matched_whole(check, text):
    assert not check(text) and check(text.replace("\n", ""))


def test_a_plain_config_has_no_control_character_findings():
    assert not [i for i in issues_of(GKE_TEAMS) if "control character" in i.problem]
