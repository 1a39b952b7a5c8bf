"""The in-process pack converts each resource once per AnalyzeStack request, not once per stack rule; the SDK's own
names are back when the call ends (the findings of both paths are compared in test_policy_paths_agree.py)."""

from __future__ import annotations

from google.protobuf import struct_pb2

from preview.engine import read_stack_file, PROJECT_ROOT
from preview.policy.shared_props import shared_conversions
from preview.run import preview_config
from preview.sdk_private import POLICY_MODULE


def struct(**fields) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(fields)
    return s


def test_equal_messages_convert_once_and_the_sdk_names_come_back():
    before = (POLICY_MODULE.json_format, POLICY_MODULE.deserialize_properties, POLICY_MODULE.unknown_checking_proxy)
    with shared_conversions():
        first = POLICY_MODULE.json_format.MessageToDict(struct(a=1, b="x"))
        again = POLICY_MODULE.json_format.MessageToDict(struct(a=1, b="x"))  # another object, the same bytes
        other = POLICY_MODULE.json_format.MessageToDict(struct(a=2))
        assert first is again and other is not first and other == {"a": 2}
        values = POLICY_MODULE.deserialize_properties(first)
        assert POLICY_MODULE.deserialize_properties(first) is values
        proxy = POLICY_MODULE.unknown_checking_proxy(values)
        assert POLICY_MODULE.unknown_checking_proxy(values) is proxy and proxy["b"] == "x"
        assert POLICY_MODULE.json_format.MessageToJson is before[0].MessageToJson  # the rest is the module's own
    assert (
        POLICY_MODULE.json_format,
        POLICY_MODULE.deserialize_properties,
        POLICY_MODULE.unknown_checking_proxy,
    ) == before


def test_a_preview_builds_one_proxy_per_distinct_value(monkeypatch):
    built: list[int] = []
    real = POLICY_MODULE.unknown_checking_proxy

    def counting(value):
        built.append(id(value))
        return real(value)

    monkeypatch.setattr(POLICY_MODULE, "unknown_checking_proxy", counting)  # what shared_conversions wraps
    report = preview_config("dev", read_stack_file(PROJECT_ROOT / "Pulumi.dev.yaml"))
    resources = len(report.resources)
    assert built, "the pack ran"
    # without sharing, AnalyzeStack alone builds one per resource and stack rule (31 of them), and as many for the
    # resources' providers: over 30 per resource; shared, at most one per distinct props and provider props
    assert len(built) <= 2 * resources, (len(built), resources)


def test_each_resource_turns_into_plain_data_once_per_request_not_once_per_rule(monkeypatch):
    """Every conversion of the SDK's proxies into plain data goes through the per-request cache, and a resource is
    converted at most twice: in its Analyze request (for all of its type's rules, a dozen on a node pool) and in the
    AnalyzeStack request (for all stack rules)."""
    from collections import Counter

    import policies.rule as rule

    proxies: list[str] = []
    by_urn: Counter[str] = Counter()
    real_plain, real_props = rule.plain, rule._plain_props

    def plain(value):
        if not isinstance(value, dict):  # the settings are a dict; props and provider props are the SDK's proxies
            proxies.append(type(value).__name__)
        return real_plain(value)

    def plain_props(r):
        by_urn[r.urn] += 1
        return real_props(r)

    monkeypatch.setattr(rule, "plain", plain)
    monkeypatch.setattr(rule, "_plain_props", plain_props)
    report = preview_config("gke-h100-512", read_stack_file(PROJECT_ROOT / "Pulumi.gke-h100-512.yaml"))
    assert by_urn and len(by_urn) == len(report.resources), "the pack ran over every resource"
    converted = sum(by_urn.values())  # props, and provider props where there is a provider: only through the cache
    assert converted <= len(proxies) <= 2 * converted
    assert max(by_urn.values()) <= 2, by_urn.most_common(3)
