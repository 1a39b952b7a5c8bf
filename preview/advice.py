"""Deploy-time advice the offline preview adds to a valid spec: true for every stack like it, so not a spec rule."""
from __future__ import annotations

from validation.issues import SpecIssue, path_of
from stacks.spec import ClusterMode, StackSpec


def deploy_advice(spec: StackSpec) -> list[SpecIssue]:
    advice = []
    if spec.cluster.mode == ClusterMode.CREATE and not spec.cluster.authorized_networks:
        advice.append(SpecIssue(
            path_of("cluster", "authorizedNetworks"),
            "the new cluster's Kubernetes API gets a private endpoint only: `pulumi up` must run from inside the VPC "
            "to install the GPU runtime and scheduler", [], "your office or VPN CIDRs, e.g. 203.0.113.0/24",
            "add the range `pulumi up` runs from, or run it from a host inside the VPC", warning=True))
    # GPUDirect is set up now (nodePools[].fabric); a pool that turns it off gets validation's warning instead
    return advice
