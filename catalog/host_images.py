"""The host-level containers each pinned Helm chart runs (``catalog/data/host-level-images.csv``) and the
secret-holding ones (``catalog/data/secret-holding-images.csv``: containers the chart's operator hands a key, such as
Slinky's slurmctld, slurmdbd, slurmrestd and login pods), where their image sits in the chart's values and what the
chart defaults it to. Pure data; no Pulumi.

The policy pack sees a Helm release's values, not the objects the chart renders, so it reads this table to know
which value names the image of a privileged or host-writing container (the device plugins, the DRA kubelet plugin,
the GPU Operator's operands, Slinky's slurmd). The tests render every example's releases with real Helm and check
that the table names every host-level container the charts really render, with the chart's real default image.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass

from catalog.loader import DATA_DIR


@dataclass(frozen=True)
class ChartHostImage:
    chart: str
    """The chart's name (the last path component of an OCI chart reference)."""
    version: str
    component: str
    values_path: tuple[str, ...]
    """Where the image sits in the values; ``*`` matches every key of a map (``nodesets.*.slurmd.image``). The value
    is a string or an object (``repository``/``tag``/``digest``, or ``repository``/``image``/``version``)."""
    defaults_path: tuple[str, ...]
    """Where the chart's values default the image for every ``*`` entry (``nodesetDefaults.slurmd.image``); empty
    when there is no such level."""
    condition: tuple[tuple[str, ...], ...]
    """Helm's ``condition`` paths (the first one set in the values decides); empty: always rendered."""
    condition_default: bool
    """Whether the component renders when none of the condition paths is set (the chart's own default)."""
    default_image: str
    host_access: str
    """Why the image must be pinned: how the container reaches the node (``privileged``, ``writes host path …``),
    or which secret it holds (``holds slurm.key …``)."""
    source: str


def _path(text: str) -> tuple[str, ...]:
    return tuple(text.split(".")) if text else ()


def _load(file: str) -> tuple[ChartHostImage, ...]:
    with open(DATA_DIR / file, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return tuple(
        ChartHostImage(
            chart=r["chart"],
            version=r["version"],
            component=r["component"],
            values_path=_path(r["values_path"]),
            defaults_path=_path(r["defaults_path"]),
            condition=tuple(_path(c) for c in r["condition"].split(",") if c),
            condition_default=r["condition_default"] == "true",
            default_image=r["default_image"],
            host_access=r["host_access"],
            source=r["source"],
        )
        for r in rows
    )


@functools.cache
def load_chart_host_images() -> tuple[ChartHostImage, ...]:
    return _load("host-level-images.csv")


@functools.cache
def load_chart_secret_images() -> tuple[ChartHostImage, ...]:
    """Containers that hold a key the chart's operator mounts (not visible in the chart's own objects)."""
    return _load("secret-holding-images.csv")


def _of(rows: tuple[ChartHostImage, ...], chart: str, version: str) -> tuple[ChartHostImage, ...]:
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    return tuple(r for r in rows if r.chart == name and r.version == version)


def chart_host_images(chart: str, version: str) -> tuple[ChartHostImage, ...]:
    """The host-level rows of one chart at one version (``chart``: a name or an OCI reference ending in the name)."""
    return _of(load_chart_host_images(), chart, version)


def chart_secret_images(chart: str, version: str) -> tuple[ChartHostImage, ...]:
    """The secret-holding rows of one chart at one version."""
    return _of(load_chart_secret_images(), chart, version)
