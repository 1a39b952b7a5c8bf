"""How fresh the metrics KEDA scales serving on are: the scrape interval of each cloud's collector and the delay
before a scale-up is seen (one scrape plus one KEDA poll). Pure; read by the renderer (the scrape configurations),
validation (cold start against the ramp) and the docs' numbers.

- GKE: Managed Service for Prometheus scrapes the rendered ``PodMonitoring`` every 15 s.
- EKS: the AWS managed collector may not scrape more often than every 30 s (``cloud-limits.csv``
  ``aws-amp-scraper-min-scrape-interval``): a configuration below it is refused by CreateScraper, and every serving
  object depends on the collector, so nothing would serve.
"""

from __future__ import annotations

from catalog import Cloud
from catalog.cloud_limits import CloudLimit, cloud_limit

GMP_SCRAPE_S = 15
"""The rendered PodMonitoring's interval."""


def amp_min_scrape() -> CloudLimit:
    return cloud_limit("aws-amp-scraper-min-scrape-interval")


def scrape_interval_s(cloud: Cloud) -> int:
    """The interval gpu-cluster renders for the cloud's collector: 15 s on GKE, AMP's minimum on EKS."""
    return int(amp_min_scrape().value) if cloud == Cloud.AWS else GMP_SCRAPE_S


def check_amp_scrape_interval(interval_s: int) -> None:
    """Refuse a managed-collector configuration AMP would refuse, naming the limit and its source."""
    limit = amp_min_scrape()
    if interval_s < int(limit.value):
        raise ValueError(
            f"AMP managed collector scrape interval {interval_s} s is below {limit.value} s: "
            f"{limit.cite()}; use at least {limit.value} s"
        )


def scale_up_seen_s(cloud: Cloud, polling_interval_s: int) -> int:
    """Worst case from a replica saturating to KEDA seeing it: one scrape interval, then one KEDA poll."""
    return scrape_interval_s(cloud) + polling_interval_s
