"""The ported flavor assigner decides as Kueue v0.19.2 does: upstream's table cases as data
(``pkg/scheduler/scheduler_tas_test.go``), then the fleet's own shapes (a TAS flavor beside a plain one)."""

from __future__ import annotations

import pytest

from stacks.plan.admission import (
    ONLY_TAS,
    PodSet,
    TopologyRequest,
    assign,
    podset_from_template,
    queue_from_objects,
    rule_of,
)

HOSTNAME = "kubernetes.io/hostname"
TOPOLOGY = {"metadata": {"name": "default"}, "spec": {"levels": [{"nodeLabel": HOSTNAME}]}}
FLAVORS = [
    {"metadata": {"name": "tas-default"}, "spec": {"nodeLabels": {}, "topologyName": "default"}},
    {"metadata": {"name": "default"}, "spec": {"nodeLabels": {}}},
]


def _cq(order: list[str]) -> dict:
    return {
        "metadata": {"name": "tas-main"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": f, "resources": [{"name": "cpu", "nominalQuota": 50}]} for f in order],
                }
            ]
        },
    }


# scheduler_tas_test.go: "workload requiring TAS skips the non-TAS flavor" and "workload which does not need TAS
# skips the TAS flavor": (flavor order, PodSet topology request, flavor admitted, Kueue's message for the skipped one)
UPSTREAM = [
    (
        ["default", "tas-default"],
        TopologyRequest("required", HOSTNAME),
        "tas-default",
        ("default", 'Flavor "default" does not support TopologyAwareScheduling'),
    ),
    (
        ["tas-default", "default"],
        None,
        "default",
        ("tas-default", 'Flavor "tas-default" supports only TopologyAwareScheduling'),
    ),
]


@pytest.mark.parametrize("order, topology, admitted, skipped", UPSTREAM)
def test_upstream_tas_cases_skip_the_flavor_kueue_skips(order, topology, admitted, skipped):
    queue = queue_from_objects(_cq(order), FLAVORS, [TOPOLOGY])
    got = assign(queue, PodSet("one", 1, {"cpu": 1}, topology=topology))
    assert got.admissible and got.flavors == {"cpu": admitted}
    assert got.considered == (skipped,)


def test_a_podset_without_topology_is_never_admitted_when_the_only_matching_flavor_is_tas():
    # the fleet's H100 shape: the H100 flavor is TAS, the L4 flavor is not, the job selects H100 by label
    flavors = [
        {"metadata": {"name": "h100"}, "spec": {"nodeLabels": {"gpu": "h100"}, "topologyName": "default"}},
        {"metadata": {"name": "l4"}, "spec": {"nodeLabels": {"gpu": "l4"}}},
    ]
    cq = {
        "metadata": {"name": "research"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {"name": n, "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 24}]}
                        for n in ("h100", "l4")
                    ],
                }
            ]
        },
    }
    queue = queue_from_objects(cq, flavors, [TOPOLOGY])
    h100 = PodSet("node", 1, {"nvidia.com/gpu": 8}, {"gpu": "h100"})
    got = assign(queue, h100)
    assert not got.admissible
    assert got.considered == (("h100", ONLY_TAS.format(f="h100")), ("l4", "flavor l4 doesn't match node affinity"))
    assert "not TAS-only" in rule_of(got.considered[0][1])
    # the same PodSet asking for topology (any level) is admitted on the TAS flavor
    assert assign(
        queue, PodSet("node", 1, {"nvidia.com/gpu": 8}, {"gpu": "h100"}, topology=TopologyRequest("unconstrained"))
    ).flavors == {"nvidia.com/gpu": "h100"}
    # and in a TAS-only queue TAS is implied: admitted without asking
    tas_only = queue_from_objects(
        {
            **cq,
            "spec": {
                "resourceGroups": [
                    {**cq["spec"]["resourceGroups"][0], "flavors": cq["spec"]["resourceGroups"][0]["flavors"][:1]}
                ]
            },
        },
        flavors,
        [TOPOLOGY],
    )
    assert assign(tas_only, h100).admissible


def test_a_request_over_the_maximum_capacity_is_never_admitted_and_borrowing_counts_in_a_cohort():
    cq = {
        "metadata": {"name": "q"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {"name": "a", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": 8}]}
                    ],
                }
            ]
        },
    }
    flavors = [{"metadata": {"name": "a"}, "spec": {"nodeLabels": {}}}]
    ps = PodSet("p", 2, {"nvidia.com/gpu": 8})
    alone = assign(queue_from_objects(cq, flavors), ps)
    assert not alone.admissible and "maximum capacity (8)" in alone.considered[0][1]
    cq["spec"]["cohortName"] = "ml"
    assert assign(queue_from_objects(cq, flavors), ps).admissible


def test_fungibility_stops_at_a_borrowing_flavor_by_default_and_tries_the_next_when_asked():
    res = [{"name": "cpu", "nominalQuota": 4}]
    cq = {
        "metadata": {"name": "q"},
        "spec": {
            "cohortName": "c",
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "a", "resources": res},
                        {"name": "b", "resources": [{"name": "cpu", "nominalQuota": 8}]},
                    ],
                }
            ],
        },
    }
    flavors = [{"metadata": {"name": n}, "spec": {}} for n in "ab"]
    ps = PodSet("p", 1, {"cpu": 6})
    assert assign(queue_from_objects(cq, flavors), ps).flavors == {"cpu": "a"}  # MayStopSearch: borrow on a
    cq["spec"]["flavorFungibility"] = {"whenCanBorrow": "TryNextFlavor"}
    assert assign(queue_from_objects(cq, flavors), ps).flavors == {"cpu": "b"}  # fits b without borrowing


def test_a_request_within_nominal_borrows_when_the_queue_already_uses_its_quota():
    """Kueue counts borrowing from the queue's usage plus the request (FindHeightOfLowestSubtreeThatFits): 1 cpu on a
    (nominal 1) while the queue uses 1 there borrows, so whenCanBorrow: TryNextFlavor goes on to b, where it fits
    without borrowing (the old port compared the request alone with nominal and stopped at a)."""
    cq = {
        "metadata": {"name": "q"},
        "spec": {
            "cohortName": "c",
            "flavorFungibility": {"whenCanBorrow": "TryNextFlavor"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": f, "resources": [{"name": "cpu", "nominalQuota": 1}]} for f in "ab"],
                }
            ],
        },
    }
    queue = queue_from_objects(cq, [{"metadata": {"name": n}, "spec": {}} for n in "ab"])
    ps = PodSet("p", 1, {"cpu": 1})
    usage = {"a": 1.0, "b": 0.0}
    assert assign(queue, ps, lambda f, r: 1.0, lambda f, r: usage[f]).flavors == {"cpu": "b"}
    assert assign(queue, ps, lambda f, r: 1.0).flavors == {"cpu": "a"}  # nothing used: a fits within nominal


def test_untolerated_taints_and_uncovered_resources_are_refused_with_kueues_reason():
    flavors = [
        {"metadata": {"name": "a"}, "spec": {"nodeTaints": [{"key": "gpu", "value": "x", "effect": "NoSchedule"}]}}
    ]
    cq = {
        "metadata": {"name": "q"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "a", "resources": [{"name": "cpu", "nominalQuota": 4}]}],
                }
            ]
        },
    }
    queue = queue_from_objects(cq, flavors)
    assert assign(queue, PodSet("p", 1, {"cpu": 1})).considered == (
        ("a", "untolerated taint gpu=x:NoSchedule in flavor a"),
    )
    tolerant = PodSet("p", 1, {"cpu": 1}, tolerations=({"key": "gpu", "operator": "Exists"},))
    assert assign(queue, tolerant).admissible
    assert assign(queue, PodSet("p", 1, {"memory": 1})).why() == "-: resource memory unavailable in ClusterQueue"


def test_a_pod_template_becomes_a_podset_with_its_topology_annotation():
    template = {
        "metadata": {"annotations": {"kueue.x-k8s.io/podset-unconstrained-topology": "true"}},
        "spec": {"nodeSelector": {"a": "b"}, "containers": [{"resources": {"limits": {"nvidia.com/gpu": 8}}}]},
    }
    ps = podset_from_template("node", 2, template)
    assert ps.requests == {"nvidia.com/gpu": 8} and ps.topology == TopologyRequest("unconstrained")
    assert ps.node_selector == {"a": "b"} and ps.count == 2


def test_a_podset_reads_kubernetes_quantities_and_drops_the_resources_kueue_excludes():
    """An EFA pod (eks-kueue's p5 runtime) requests ``hugepages-2Mi: 5120Mi`` and ``memory: 8000Mi``: read as
    quantities (the old reader raised on them), and dropped with the manager's ``excludeResourcePrefixes`` as Kueue
    drops them before flavor assignment (Kueue v0.19.2 ``apis/config/v1beta2`` ``Resources``)."""
    from stacks.plan.admission import podset_from_template, quantity

    template = {
        "spec": {
            "containers": [
                {
                    "name": "node",
                    "resources": {
                        "requests": {
                            "nvidia.com/gpu": 8,
                            "vpc.amazonaws.com/efa": 32,
                            "hugepages-2Mi": "5120Mi",
                            "memory": "8000Mi",
                            "cpu": "500m",
                        }
                    },
                }
            ]
        }
    }
    assert quantity("5120Mi") == 5120 * 2**20 and quantity("500m") == 0.5 and quantity("1e3") == 1000
    assert quantity("2G") == 2e9 and quantity(8) == 8
    full = podset_from_template("node", 2, template)
    assert full.requests["hugepages-2Mi"] == 5120 * 2**20 and full.requests["cpu"] == 0.5
    kept = podset_from_template("node", 2, template, ("cpu", "memory", "hugepages-", "vpc.amazonaws.com/efa"))
    assert kept.requests == {"nvidia.com/gpu": 8}
