"""The per-cluster fee: EKS bills extended support for versions past standard support (judged on the catalog's price
date, 2026-12-02), and neither the preview nor the budget rule counts the fee of a cluster the stack does not create."""

from __future__ import annotations

import datetime as dt

import pytest

from catalog import Cloud, load_catalog
from preview.run import preview_config
from stacks.validate.cluster import EKS_VERSIONS
from tests.support.spec.edit import edit
from tests.support.spec.stack_configs import EKS, GKE

CAT = load_catalog()
PRICE_DATE = dt.date(2026, 12, 2)


def test_the_fee_date_is_the_catalogs_price_date_not_today():
    assert CAT.control_plane[Cloud.AWS].as_of == PRICE_DATE
    assert CAT.control_plane_extended[Cloud.AWS].as_of == PRICE_DATE


@pytest.mark.parametrize("version", EKS_VERSIONS)
def test_every_supported_eks_version_has_a_sourced_calendar_row(version):
    row = CAT.eks_versions[version]
    assert row.source.strip() and row.as_of <= PRICE_DATE
    assert 360 <= (row.end_of_extended_support - row.end_of_standard_support).days <= 370, "12 months extended"


@pytest.mark.parametrize(
    "version, usd, support",
    [
        ("1.32", 0.60, "extended"),
        ("1.33", 0.60, "extended"),
        ("1.34", 0.60, "extended"),  # standard support ended 2026-12-02: billing for extended starts 00:00 UTC that day
        ("1.35", 0.10, "standard"),
        ("1.36", 0.10, "standard"),
        ("1.29", 0.60, "extended"),  # not in the calendar: the higher fee, unknown is not cheaper
        (None, 0.10, "standard"),  # the provider's default version
    ],
)
def test_eks_fee_follows_the_versions_support_status(version, usd, support):
    fee = CAT.control_plane_fee(Cloud.AWS, version)
    assert (fee.usd_per_hour, fee.support) == (pytest.approx(usd), support)


def test_extended_support_starts_on_the_end_of_standard_support_date():
    row = CAT.eks_versions["1.34"]
    assert not row.extended_on(row.end_of_standard_support - dt.timedelta(days=1))
    assert row.extended_on(row.end_of_standard_support)


def test_gke_fee_does_not_depend_on_a_version():
    assert CAT.control_plane_fee(Cloud.GCP, "1.33").usd_per_hour == pytest.approx(0.10)


def test_versions_in_standard_support_on_the_price_date():
    assert CAT.eks_versions_in_standard_support() == ["1.35", "1.36"]


def test_preview_prices_an_old_eks_version_at_extended_support_and_says_why():
    report = preview_config("t", edit(EKS, "cluster.kubernetesVersion", "1.33"))
    (line,) = [f for f in report.cost.fixed if f.item.startswith("control plane")]
    assert (line.item, line.usd_per_hour_min, line.usd_per_hour_max) == (
        "control plane (EKS extended support)",
        pytest.approx(0.60),
        pytest.approx(0.60),
    )
    assert (
        "EKS 1.33 is past standard support since 2026-07-29: the control plane bills $0.60/h (extended support) "
        "instead of $0.10/h; a version in standard support costs less"
    ) in report.cost.notes
    assert [w.path for w in report.warnings if w.path.endswith("kubernetesVersion")] == [
        "gpu-cluster:cluster.kubernetesVersion"
    ]


def test_preview_prices_the_default_eks_version_at_standard_support():
    report = preview_config("t", EKS)
    (line,) = [f for f in report.cost.fixed if f.item.startswith("control plane")]
    assert (line.item, line.usd_per_hour_max) == ("control plane (EKS standard support)", pytest.approx(0.10))
    assert not [n for n in report.cost.notes if "standard support" in n]


@pytest.mark.parametrize(
    "cfg", [edit(EKS, "cluster.mode", "existing"), edit(GKE, "cluster.mode", "existing")], ids=["eks", "gke"]
)
def test_existing_cluster_fee_is_not_this_stacks(cfg):
    report = preview_config("t", cfg)
    assert [f.item for f in report.cost.fixed] == []
    assert (
        "the control-plane fee of the existing cluster 'ml' is not counted: this stack adds node pools to it but "
        "does not create it" in report.cost.notes
    )
    assert report.cost.usd_per_hour_max == pytest.approx(sum(p.usd_per_hour_max for p in report.cost.pools))
