"""The GB200 NVL72 examples in the offline preview: each pool's NVLink domains (size, count at maxNodes, the label
naming a domain, the ComputeDomains its jobs claim), the A4X cost shown as unknown and left out of the totals (never
$0), and the P6e capacity block priced by its declared fee."""

from __future__ import annotations

import pytest

from preview.run import preview_stack


@pytest.fixture(scope="module")
def a4x():
    return preview_stack("gke-a4x-nvl72").as_dict()


@pytest.fixture(scope="module")
def p6e():
    return preview_stack("eks-p6e-gb200").as_dict()


def test_the_a4x_pool_shows_two_nvlink_domains_and_its_compute_domain(a4x):
    (entry,) = [f for f in a4x["fabric"] if f["pool"] == "gb200"]
    assert entry["nvlink"] == {
        "domainGpus": 72,
        "domainNodes": 18,
        "domainsAtMax": 2,
        "domainLabel": "cloud.google.com/gce-topology-subblock",
        "acceleratorTopology": "1x72",
        "ultraserverType": None,
        "reservationBlock": "gb200-block-1",
        "computeDomains": ["pretraining/gb200-imex"],
    }
    assert entry["networks"] == ["gvnic-1", "rdma-0", "rdma-1", "rdma-2", "rdma-3"]


def test_the_a4x_cost_is_unknown_never_zero(a4x):
    (pool,) = [p for p in a4x["cost"]["pools"] if p["pool"] == "gb200"]
    assert pool["usd_per_node_hour"] is None and pool["usd_per_hour_max"] is None
    assert pool["price_source"] == "unknown: reservation price not public"
    totals = a4x["cost"]["totals"]
    assert totals["complete"] is False and totals["unpricedPools"] == ["gb200"]
    assert totals["usdPerHourMax"] < 1.0  # only the control plane and the system pool are counted
    assert any("reservation price is not public" in n for n in a4x["cost"]["notes"])


def test_the_p6e_ultraserver_is_one_domain_priced_by_its_block_fee(p6e):
    (entry,) = [f for f in p6e["fabric"] if f["pool"] == "gb200"]
    assert entry["nvlink"]["domainsAtMax"] == 1 and entry["nvlink"]["ultraserverType"] == "u-p6e-gb200x72"
    assert entry["nvlink"]["computeDomains"] == ["slurm/gb200-imex"]
    (pool,) = [p for p in p6e["cost"]["pools"] if p["pool"] == "gb200"]
    assert pool["capacity"] == "capacity-block"
    assert round(pool["usd_per_gpu_hour"], 3) == 10.582  # the declared fee: 72 GPUs x 336 h at the reference rate
    assert p6e["cost"]["totals"]["complete"] is True
