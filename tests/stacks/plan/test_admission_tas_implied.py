"""After quota, Kueue v0.19.2 checks topology (``WorkloadsTopologyRequests``): a PodSet that asks for TAS, or any
PodSet of a ClusterQueue whose flavors are all TAS flavors, must have got one TAS flavor. A PodSet that requests no
quota resource gets no flavor and is rejected with ``ErrNoTASFlavorAssigned``. Upstream's case
(``flavorassigner_test.go`` "leader without a group is rejected (ClusterQueue-wide fallback is not supported)") as
data, then the implied case that kept the serving namespace's endpoint pickers from ever being admitted."""

from __future__ import annotations

import pytest

from stacks.plan.admission import NO_TAS_FLAVOR, PodSet, TopologyRequest, admit, assign, queue_from_objects, rule_of

HOSTNAME = "kubernetes.io/hostname"
TOPOLOGY = {"metadata": {"name": "default"}, "spec": {"levels": [{"nodeLabel": HOSTNAME}]}}
TAS_A = {"metadata": {"name": "tas-a"}, "spec": {"nodeLabels": {}, "topologyName": "default"}}
PLAIN = {"metadata": {"name": "plain"}, "spec": {"nodeLabels": {}}}


def _cq(flavor: str) -> dict:
    return {
        "metadata": {"name": "test-clusterqueue"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["example.com/gpu-a"],
                    "flavors": [{"name": flavor, "resources": [{"name": "example.com/gpu-a", "nominalQuota": 4}]}],
                }
            ]
        },
    }


# (PodSet, its expected flavors, Kueue's PodSet error or None): flavorassigner_test.go:5849
UPSTREAM = [
    (PodSet("leader", 1, {}, topology=TopologyRequest("required", HOSTNAME)), {}, NO_TAS_FLAVOR),
    (
        PodSet("worker", 1, {"example.com/gpu-a": 1}, topology=TopologyRequest("required", HOSTNAME)),
        {"example.com/gpu-a": "tas-a"},
        None,
    ),
]


@pytest.mark.parametrize("podset, flavors, error", UPSTREAM, ids=lambda v: getattr(v, "name", None))
def test_upstream_a_podset_without_a_quota_resource_gets_no_tas_flavor(podset, flavors, error):
    queue = queue_from_objects(_cq("tas-a"), [TAS_A], [TOPOLOGY])
    got = admit(queue, podset)
    assert got.flavors == flavors
    assert got.admissible == (error is None)
    assert (error in got.why()) if error else got.considered == ()


def test_tas_is_implied_in_a_tas_only_queue_so_a_cpu_only_pod_is_never_admitted():
    queue = queue_from_objects(_cq("tas-a"), [TAS_A], [TOPOLOGY])
    picker = PodSet("main", 1, {})  # CPU and memory only, both excluded from quota
    assert assign(queue, picker).admissible  # the quota step alone sees nothing to refuse
    got = admit(queue, picker)
    assert not got.admissible and got.considered == (("-", NO_TAS_FLAVOR),)
    assert "TAS-only" in rule_of(NO_TAS_FLAVOR)


def test_a_queue_with_a_plain_flavor_admits_the_same_pod():
    queue = queue_from_objects(_cq("plain"), [PLAIN])
    assert not queue.tas_only and admit(queue, PodSet("main", 1, {})).admissible
