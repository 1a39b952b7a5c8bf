"""catalog/data/host-level-images.csv names the chart versions gpu-cluster pins (a chart bump without the table fails
here), every row is complete, and chart references resolve to their rows."""

from __future__ import annotations

from catalog.host_images import (
    chart_host_images,
    chart_secret_images,
    load_chart_host_images,
    load_chart_secret_images,
)
from components import charts


def test_every_row_names_a_pinned_chart_at_its_pinned_version():
    pins = {p.chart: p.version for p in vars(charts).values() if isinstance(p, charts.ChartPin)}
    for row in (*load_chart_host_images(), *load_chart_secret_images()):
        assert pins.get(row.chart) == row.version, (
            f"{row.chart} {row.version}: the pinned chart is {pins.get(row.chart)}"
        )


def test_rows_are_complete():
    for row in (*load_chart_host_images(), *load_chart_secret_images()):
        assert row.values_path and row.default_image and row.host_access and row.source, row
        assert "*" not in row.values_path or row.defaults_path, (
            f"{row.component}: a map entry needs the chart's default"
        )


def test_an_oci_chart_reference_finds_its_rows():
    """Host-level: only slurmd (privileged). Secret-holding: every container Slinky's operator hands slurm.key or
    the JWT key, slurmd included."""
    assert [r.component for r in chart_host_images("oci://ghcr.io/slinkyproject/charts/slurm", "1.2.1")] == ["slurmd"]
    assert chart_host_images("slurm", "9.9.9") == ()
    held = [r.component for r in chart_secret_images("oci://ghcr.io/slinkyproject/charts/slurm", "1.2.1")]
    assert held == ["slurmctld", "reconfigure", "slurmrestd", "slurmdbd", "login", "login initconf", "slurmd"]
    assert all(r.host_access.startswith("holds ") for r in chart_secret_images("slurm", "1.2.1"))
    assert chart_secret_images("slurm", "9.9.9") == ()
