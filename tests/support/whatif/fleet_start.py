"""When a job's pods run on the shipped fleet's H100 workers, whose nodes are up from 0 and pre-pull the image as
they join (``Pulumi.fleet-eks.yaml``, ``Pulumi.fleet-gke.yaml`` ``podStart``): a job placed before the pull is done
runs when it is done; one placed later runs ``WARM`` after placement."""

from __future__ import annotations

from stacks.plan.start_time import factors, overhead_s

_F = factors()
EKS_H100_RUNS_AT = _F["undeclared_pull_s"] / _F["soci_speedup"] + overhead_s(1, _F)
"""eks: a SOCI parallel pull of the image (size undeclared: the full pull's typical time) from t=0, then admission and
pod start: ~90.8 s."""
GKE_H100_RUNS_AT = _F["streaming_s"] + overhead_s(1, _F)
"""gke: image streaming from t=0, then admission and pod start: ~25.0 s."""
RUNS_AT = {"eks": EKS_H100_RUNS_AT, "gke": GKE_H100_RUNS_AT}
