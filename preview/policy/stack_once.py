"""``AnalyzeStack`` for the in-process pack, with the stack's resources built once for all stack rules.

The SDK's servicer rebuilds every resource (props, options, provider, parent and dependency links) inside its loop
over the stack policies, so a 200-pool stack (1,237 resources) is built 31 times. The rules only read the resources,
so here they are built once, then each stack policy runs exactly as the servicer runs it: the same enforcement level
(disabled skipped, remediate as mandatory), the same ``report_violation`` of the servicer (same diagnostic fields),
the same config and stack tags, the same handling of unknown values and of "not applicable". The Pulumi CLI's path
(``--policy-pack-subprocess``) runs the SDK's own loop; ``tests/policies/test_policy_paths_agree.py`` holds that
both give the same findings on every example.
"""

from __future__ import annotations

import asyncio
from inspect import isawaitable
from typing import Any

from google.protobuf import json_format
from pulumi.runtime.proto import analyzer_pb2 as apb
from pulumi_policy import EnforcementLevel, PolicyResource, StackValidationArgs, StackValidationPolicy
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from preview.sdk_private import NotApplicableError, servicer_internals


def analyze_stack(svc: Any, request: apb.AnalyzeStackRequest) -> apb.AnalyzeResponse:
    inside = servicer_internals(svc)
    inside.configure_runtime_settings()
    response = apb.AnalyzeResponse()
    resources = _resources(inside, request)
    for policy in inside.policies:
        level = inside.get_enforcement_level(policy)
        if level == EnforcementLevel.DISABLED or not isinstance(policy, StackValidationPolicy):
            continue
        if level == EnforcementLevel.REMEDIATE:  # stack policies cannot remediate: as the servicer, mandatory
            level = EnforcementLevel.MANDATORY
        report = inside.create_report_violation(response, policy.name, policy.description, level, policy.severity)
        args = StackValidationArgs(resources, inside.get_policy_config(policy.name), inside.stack_tags)
        try:
            result = policy.validate(args, report)
            if isawaitable(result):
                loop = asyncio.new_event_loop()
                loop.run_until_complete(result)  # as the servicer: a fresh loop per async policy
                loop.close()
        except UnknownValueError as e:
            response.diagnostics.append(
                apb.AnalyzeDiagnostic(
                    policyName=policy.name,
                    policyPackName=inside.pack_name,
                    policyPackVersion=inside.pack_version,
                    message=(
                        f"can't run policy '{policy.name}' from policy pack "
                        f"'{inside.pack_name}@v{inside.pack_version}' during preview: {e.message}"
                    ),
                    urn="",
                    description=policy.description,
                    enforcementLevel=inside.map_enforcement_level(EnforcementLevel.ADVISORY),
                )
            )
        except NotApplicableError as e:
            response.not_applicable.append(apb.PolicyNotApplicable(policy_name=policy.name, reason=e.reason or ""))
    return response


def _resources(inside: Any, request: apb.AnalyzeStackRequest) -> list[Any]:
    """The stack's resources as the servicer builds them for a stack policy, with parents and dependencies linked."""
    built: list[tuple[Any, Any]] = []
    providers: dict[bytes, Any] = {}
    for r in request.resources:
        props = unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(r.properties)))
        provider = None
        if r.HasField("provider"):  # one provider object per distinct provider (many resources share one)
            key = r.provider.SerializeToString(deterministic=True)
            if key not in providers:
                providers[key] = inside.get_provider_resource(r)
            provider = providers[key]
        resource = PolicyResource(r.type, props, r.urn, r.name, inside.get_resource_options(r), provider, None, [], {})
        built.append((resource, r))
    by_urn = {resource.urn: resource for resource, _ in built}
    for resource, r in built:
        if r.parent and r.parent in by_urn:
            resource.parent = by_urn[r.parent]
        resource.dependencies.extend(by_urn[d] for d in r.dependencies if d in by_urn)
        for key, deps in r.propertyDependencies.items():
            resource.property_dependencies[key] = [by_urn[d] for d in deps.urns if d in by_urn]
    return [resource for resource, _ in built]
