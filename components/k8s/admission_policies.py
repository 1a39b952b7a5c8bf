"""The ValidatingAdmissionPolicies (and bindings) that keep tenants in their lane: ``render/admission.py`` (Pod
Security baseline plus exactly the GPU fabric's needs in fabric team namespaces, the cluster-wide limits on
``devices.gke.io`` annotations) and ``render/quota_admission.py`` (no side doors round Kueue's quota in every team
namespace)."""

from __future__ import annotations

from typing import Any, Sequence

import pulumi

from components.k8s.custom_resources import custom_resource

_ROLE = {"ValidatingAdmissionPolicy": "policy", "ValidatingAdmissionPolicyBinding": "binding"}


class AdmissionPolicies(pulumi.ComponentResource):
    """Creates each policy, then its binding (a binding naming a missing policy admits everything until it appears:
    the policy must exist first). ``after``: the cluster. What the policies guard (team namespaces, the device
    injector) is created after this component."""

    policies: list[str]

    def __init__(
        self,
        name: str,
        objects: Sequence[dict[str, Any]],
        after: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("gpu-cluster:security:AdmissionPolicies", name, None, opts)
        created: dict[str, pulumi.Resource] = {}
        for obj in objects:
            kind, obj_name = obj["kind"], obj["metadata"]["name"]
            waits = list(after) + ([created[obj["spec"]["policyName"]]] if kind.endswith("Binding") else [])
            res = custom_resource(
                f"{name}-{_ROLE[kind]}-{obj_name}", obj, pulumi.ResourceOptions(parent=self, depends_on=waits)
            )
            if kind == "ValidatingAdmissionPolicy":
                created[obj_name] = res
        self.policies = sorted(created)
        self.register_outputs({"policies": self.policies})
