"""Command line of ``python -m catalog``: ``refresh`` (live public price sources) and ``import-facts`` (the
researched tables in ``../shared/facts/prices``). Both print a diff of prices.csv and write atomically."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.console import Console

from catalog.loader import DATA_DIR
from catalog.refresh.errors import RefreshError

GCP_KEY_ENV = "GPU_CLUSTER_GCP_API_KEY"
DESCRIPTION = (
    """Rebuild the catalog's prices from public sources and print what changed.

refresh       pulls current list prices:
                AWS on-demand: the public Price List bulk API (offer index -> AmazonEC2 region index ->
                  each catalog region's offer file; no account needed);
                AWS spot: not pulled. EC2 DescribeSpotPriceHistory needs signed requests from an account
                  with ec2:DescribeSpotPriceHistory, so existing spot rows are kept, and the summary says so;
                GCP on-demand and spot: the Cloud Billing Catalog API (Compute Engine SKUs), with an API key
                  from the environment variable %s.
              Only machines whose price the sources state are updated; a catalog price that a source no
              longer lists, a timeout, an HTTP error or a truncated response stops the command with a
              clear error (exit 1) and leaves catalog/data untouched.
import-facts  rebuilds prices.csv, regions.csv and zone-availability.csv from ../shared/facts/prices
              (offline; the same tables tests/catalog checks every price against).

Files are written to a temporary file and renamed, so an interrupted run never leaves half a file.
"""
    % GCP_KEY_ENV
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m catalog", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    refresh = sub.add_parser(
        "refresh",
        help="pull current prices from AWS and GCP public price sources",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    refresh.add_argument(
        "--cloud", choices=["aws", "gcp", "all"], default="all", help="which cloud's prices to pull (default: all)"
    )
    refresh.add_argument(
        "--aws-base-url",
        default="https://pricing.us-east-1.amazonaws.com",
        help="AWS Price List bulk API endpoint (default: %(default)s)",
    )
    refresh.add_argument(
        "--gcp-base-url",
        default="https://cloudbilling.googleapis.com",
        help="Cloud Billing Catalog API endpoint (default: %(default)s)",
    )
    refresh.add_argument(
        "--timeout-seconds", type=float, default=60.0, help="per-request timeout in seconds (default: %(default)s)"
    )
    facts = sub.add_parser("import-facts", help="rebuild prices, regions and zones from ../shared/facts/prices")
    facts.add_argument(
        "folder",
        type=Path,
        nargs="?",
        default=Path(__file__).resolve().parents[3] / "shared" / "facts" / "prices",
        help="the facts folder (default: ../shared/facts/prices)",
    )
    for p in (refresh, facts):
        p.add_argument("--data-dir", type=Path, default=DATA_DIR, help="catalog data folder (default: catalog/data)")
        p.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    console = Console(stderr=False)
    try:
        if args.command == "import-facts":
            from catalog.refresh.run import import_facts

            import_facts(console, args.folder, args.data_dir, dry_run=args.dry_run)
        else:
            from catalog.refresh.run import refresh

            refresh(
                console,
                args.data_dir,
                clouds={"aws", "gcp"} if args.cloud == "all" else {args.cloud},
                aws_base=args.aws_base_url,
                gcp_base=args.gcp_base_url,
                gcp_key=os.environ.get(GCP_KEY_ENV),
                timeout=args.timeout_seconds,
                dry_run=args.dry_run,
            )
    except RefreshError as exc:
        console.print(f"[bold red]error:[/] {exc}\n[dim]catalog/data was not changed.[/]", highlight=False)
        return 1
    return 0
