"""``python -m catalog refresh`` against recorded responses in each API's documented format, served on loopback:
it updates what the sources state and keeps the rest; a timeout, an HTTP error, truncated JSON or a price that
vanished is one clear error (exit 1) and the catalog files are byte-for-byte untouched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from catalog.loader import DATA_DIR
from catalog.refresh.cli import GCP_KEY_ENV, main
from catalog.refresh.rows import read_prices
from tests.support.catalog.price_api_server import SLOW, serve

FIXTURES = Path(__file__).parent / "price_api"
OFFER_INDEX = "/offers/v1.0/aws/index.json"
REGION_INDEX = "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
US_EAST_2 = "/offers/v1.0/aws/AmazonEC2/20261201000000/us-east-2/index.json"
SKUS = "/v1/services/6F81-5844-456A/skus"
PRICES = """cloud,machine_type,region,capacity,usd_per_hour,as_of,label,source
aws,p5.48xlarge,us-east-2,on-demand,50.0,2026-08-26,old,old source
aws,p5.48xlarge,us-east-2,spot,13.831,2025-11-30,old spot,old source
gcp,a3-highgpu-8g,us-east4,on-demand,88.555756,2026-07-30,old,old source
gcp,e2-standard-4,us-east4,on-demand,0.150942,2026-07-30,old,old source
gcp,e2-standard-4,us-east4,spot,0.08276,2026-07-30,old,old source
"""


def _routes(**override: tuple[int, bytes]) -> dict[str, tuple[int, bytes]]:
    routes = {
        OFFER_INDEX: (200, (FIXTURES / "aws-offer-index.json").read_bytes()),
        REGION_INDEX: (200, (FIXTURES / "aws-region-index.json").read_bytes()),
        US_EAST_2: (200, (FIXTURES / "aws-us-east-2.json").read_bytes()),
        SKUS: (200, (FIXTURES / "gcp-skus-page1.json").read_bytes()),
        SKUS + "#page-2": (200, (FIXTURES / "gcp-skus-page2.json").read_bytes()),
    }
    return routes | override


@pytest.fixture(name="data_dir")
def data_dir_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("machines.csv", "host-machines.csv", "attachable-gpus.csv"):
        shutil.copy(DATA_DIR / name, tmp_path / name)
    (tmp_path / "prices.csv").write_text(PRICES, encoding="utf-8")
    monkeypatch.setenv(GCP_KEY_ENV, "test-key-123")
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


def _run(base: str, data_dir: Path, *extra: str) -> int:
    return main(
        [
            "refresh",
            "--aws-base-url",
            base,
            "--gcp-base-url",
            base,
            "--timeout-seconds",
            "0.5",
            "--data-dir",
            str(data_dir),
            *extra,
        ]
    )


def test_refresh_updates_stated_prices_keeps_the_rest_and_prints_the_diff(data_dir, capsys):
    with serve(_routes()) as base:
        assert _run(base, data_dir) == 0
    prices = {p.key: p for p in read_prices(data_dir / "prices.csv")}
    assert prices[("aws", "p5.48xlarge", "us-east-2", "on-demand")].usd_per_hour == 55.04  # Linux, not Windows
    assert prices[("aws", "p5.48xlarge", "us-east-2", "on-demand")].label == "AWS Price List API"
    assert prices[("aws", "p5.48xlarge", "us-east-2", "spot")].usd_per_hour == 13.831  # kept: needs credentials
    assert prices[("gcp", "e2-standard-4", "us-east4", "on-demand")].usd_per_hour == pytest.approx(0.150956)
    assert prices[("gcp", "e2-standard-4", "us-east4", "spot")].usd_per_hour == pytest.approx(0.08)
    assert prices[("gcp", "a3-highgpu-8g", "us-east4", "on-demand")].label == "old"  # no SKU recipe: kept
    out = capsys.readouterr().out
    assert "prices.csv: 3 change(s)" in out and "+10.1%" in out
    assert "AWS spot: kept" in out and "kept as they were: a3-highgpu-8g" in out
    assert not list(data_dir.glob(".*.tmp"))


def test_dry_run_prints_the_diff_and_writes_nothing(data_dir, capsys):
    with serve(_routes()) as base:
        assert _run(base, data_dir, "--dry-run") == 0
    assert (data_dir / "prices.csv").read_text(encoding="utf-8") == PRICES
    assert "3 change(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "override, message",
    [
        ({US_EAST_2: (200, SLOW)}, "AWS EC2 prices us-east-2: no answer from http://127.0.0.1:"),
        ({REGION_INDEX: (503, b"Service Unavailable")}, "AWS EC2 region index: HTTP 503"),
        ({SKUS: (403, b'{"error": {"code": 403}}')}, "GCP SKUs page 1: HTTP 403 Forbidden from http://127.0.0.1:"),
        (
            {US_EAST_2: (200, (FIXTURES / "aws-us-east-2.json").read_bytes()[:900])},
            "AWS EC2 prices us-east-2: the response from",
        ),
        ({SKUS + "#page-2": (200, b'{"skus": [{"description": "E2 Inst')}, "GCP SKUs page 2: the response from"),
        (
            {
                US_EAST_2: (
                    200,
                    (FIXTURES / "aws-us-east-2.json")
                    .read_bytes()
                    .replace(b'"p5.48xlarge", "regionCode"', b'"p5e.48xlarge", "regionCode"'),
                )
            },
            "1 catalog price(s) are no longer stated by the source: aws p5.48xlarge us-east-2 on-demand",
        ),
        (
            {SKUS + "#page-2": (200, b'{"skus": [], "nextPageToken": ""}')},
            "1 catalog price(s) are no longer stated by the source: gcp e2-standard-4 us-east4 spot",
        ),
        ({OFFER_INDEX: (200, b'{"offers": {}}')}, "AWS offer index: the response has no offers.AmazonEC2"),
    ],
    ids=[
        "timeout",
        "http-503",
        "http-403-key",
        "truncated-aws",
        "truncated-gcp",
        "vanished-aws",
        "vanished-gcp",
        "format-changed",
    ],
)
def test_each_failure_is_one_clear_error_and_the_catalog_is_untouched(data_dir, capsys, override, message):
    with serve(_routes(**override)) as base:
        assert _run(base, data_dir) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert message in out and "catalog/data was not changed" in out
    assert "test-key-123" not in out  # the API key never reaches the terminal
    assert (data_dir / "prices.csv").read_text(encoding="utf-8") == PRICES
    assert sorted(p.name for p in data_dir.iterdir()) == [
        "attachable-gpus.csv",
        "host-machines.csv",
        "machines.csv",
        "prices.csv",
    ]


def test_gcp_without_an_api_key_is_refused_before_any_download(data_dir, capsys, monkeypatch):
    monkeypatch.delenv(GCP_KEY_ENV)
    assert main(["refresh", "--gcp-base-url", "http://127.0.0.1:9", "--data-dir", str(data_dir)]) == 1
    assert GCP_KEY_ENV in capsys.readouterr().out
    assert (data_dir / "prices.csv").read_text(encoding="utf-8") == PRICES


def test_help_documents_the_command(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["refresh", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for needle in (
        "Price List bulk API",
        "DescribeSpotPriceHistory",
        "Cloud Billing Catalog API",
        GCP_KEY_ENV,
        "--aws-base-url",
        "--gcp-base-url",
        "--timeout-seconds",
        "--dry-run",
        "untouched",
    ):
        assert needle in out, needle
