"""GKE maintenance: clusters with multi-node or reservation pools get a weekend window by default, the spec's window
and exclusions are rendered as GKE's maintenance policy, other clusters keep GKE's default; bad settings are refused
with the exact message; the preview shows the window."""

from __future__ import annotations

import copy
import textwrap

import pytest

from preview.engine import run_program
from preview.run import preview_config
from tests.support.spec.edit import edits
from tests.support.preview.recorded import one
from tests.support.spec.stack_configs import EKS, GKE
from stacks.validate.issues import SpecError
from stacks.validate.load import decode_config, load_spec

CLUSTER = "gcp:container/cluster:Cluster"


def _policy(cfg):
    return one(run_program(cfg), CLUSTER).inputs.get("maintenancePolicy")


def test_multi_node_clusters_get_a_weekend_window_by_default():
    assert _policy(GKE) == {
        "recurringWindow": {
            "startTime": "2026-01-03T00:00:00Z",
            "endTime": "2026-01-03T08:00:00Z",
            "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
        }
    }


def test_single_node_on_demand_clusters_keep_gkes_default():
    assert _policy(edits(GKE, {"nodePools[0].machineType": "g2-standard-24", "nodePools[0].multiNode": False})) is None


def test_the_specs_window_and_a_campaign_exclusion_are_rendered():
    cfg = edits(
        GKE,
        {
            "cluster.maintenance": {
                "window": {"days": ["TU", "WE"], "startUtc": "22:30", "hours": 6},
                "exclusions": [{"name": "q3-pretraining", "start": "2027-07-01", "end": "2027-09-30"}],
            }
        },
    )
    assert _policy(cfg) == {
        "recurringWindow": {
            "startTime": "2026-01-03T22:30:00Z",
            "endTime": "2026-01-04T04:30:00Z",
            "recurrence": "FREQ=WEEKLY;BYDAY=TU,WE",
        },
        "maintenanceExclusions": [
            {
                "exclusionName": "q3-pretraining",
                "startTime": "2027-07-01T00:00:00Z",
                "endTime": "2027-09-30T23:59:59Z",
                "exclusionOptions": {"scope": "NO_MINOR_OR_NODE_UPGRADES"},
            }
        ],
    }
    report = preview_config("t", cfg)
    assert report.maintenance == {
        "window": "TU,WE 22:30-04:30 UTC (6 h)",
        "default": False,
        "exclusions": [
            {"name": "q3-pretraining", "start": "2027-07-01", "end": "2027-09-30", "scope": "NO_MINOR_OR_NODE_UPGRADES"}
        ],
    }


def _errors(cfg) -> list[str]:
    with pytest.raises(SpecError) as exc:
        load_spec(copy.deepcopy(decode_config(cfg)))
    return [str(e) for e in exc.value.errors]


def test_an_exclusion_longer_than_gke_allows_is_refused():
    cfg = edits(
        GKE,
        {
            "cluster.maintenance": {
                "exclusions": [{"name": "freeze", "start": "2027-01-01", "end": "2027-03-01", "scope": "NO_UPGRADES"}]
            }
        },
    )
    assert _errors(cfg) == [
        textwrap.dedent("""\
        error: gpu-cluster:cluster.maintenance.exclusions[0].end: exclusion 'freeze' lasts 60 days, longer than GKE allows for NO_UPGRADES
          received: '2027-03-01'
          allowed:  at most 30 days
          fix:      shorten it, or use the narrower scope NO_MINOR_OR_NODE_UPGRADES (180 days)""")
    ]


def test_maintenance_on_eks_is_refused():
    assert _errors(edits(EKS, {"cluster.maintenance": {}})) == [
        textwrap.dedent("""\
        error: gpu-cluster:cluster.maintenance: maintenance is a GKE setting; this stack's cloud is aws
          received: 'set'
          allowed:  omit it on EKS
          fix:      remove cluster.maintenance (EKS node groups upgrade only when you change them)""")
    ]
