"""Register a system namespace's NetworkPolicies (``render/system_network_policies.py``) next to its Namespace."""

from __future__ import annotations

from typing import Sequence

import pulumi

from components.k8s.custom_resources import custom_resource
from render.system_network_policies import system_namespace_policies


def system_network_policies(
    name: str, namespace: str, after: pulumi.Resource, parent: pulumi.Resource, team_namespaces: Sequence[str] = ()
) -> list[pulumi.CustomResource]:
    """``name``: the Pulumi name prefix; ``after``: the Namespace resource the policies live in."""
    opts = pulumi.ResourceOptions(parent=parent, depends_on=[after])
    return [
        custom_resource(f"{name}-netpol-{obj['metadata']['name']}", obj, opts)
        for obj in system_namespace_policies(namespace, team_namespaces)
    ]
