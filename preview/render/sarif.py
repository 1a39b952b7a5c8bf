"""SARIF 2.1.0 for code-scanning UIs: one rule per policy, one result per violation, located at the stack file
line of the pool (or cluster) the violation names."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from preview.engine import PROJECT_ROOT
from preview.report import PreviewReport
from preview.render.json_text import strict_dumps
from preview.render.yaml_lines import line_of
from stacks.validate.stack_file import StackFileError, decode_stack_bytes

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"mandatory": "error", "remediate": "error", "advisory": "warning"}
SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0"}
"""GitHub code scanning ranks security results by this property (CVSS-like scores)."""
CHECKOV_TAG = re.compile(r"^CKV2?_[A-Z0-9]+_[0-9]+$")
"""A rule's tags carry the Checkov check it re-implements; SARIF shows it as the ``checkov`` property."""


def _pascal(text: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", text) if w)


def _rule(r: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {"tags": r["tags"], "precision": "very-high", "docs": r["url"]}
    if r["severity"] in SECURITY_SEVERITY:
        props["security-severity"] = SECURITY_SEVERITY[r["severity"]]
    checkov = next((t for t in r["tags"] if CHECKOV_TAG.match(t)), None)
    if checkov:
        props["checkov"] = checkov
    return {
        "id": r["id"],
        "name": _pascal(r["title"] or r["id"]),
        "shortDescription": {"text": r["title"] or r["id"]},
        "fullDescription": {"text": r["description"]},
        "help": {
            "text": f"{r['remediation']}\nReference: {r['url']}",
            "markdown": f"{r['remediation']}\n\nReference: `{r['url']}`",
        },
        "defaultConfiguration": {"level": LEVEL.get(r["enforcement"], "none")},
        "properties": props,
    }


def render_sarif(report: PreviewReport) -> dict[str, Any]:
    rules = report.policy_rules
    index = {r["id"]: i for i, r in enumerate(rules)}
    path = report.stack_file
    if path is not None and path.resolve().is_relative_to(PROJECT_ROOT):
        uri = path.resolve().relative_to(PROJECT_ROOT).as_posix()
    else:
        uri = path.name if path is not None else f"Pulumi.{report.stack}.yaml"
    text = _stack_text(path)
    results = []
    for v in report.violations:
        if v["enforcement"] not in LEVEL:
            continue
        logical = {
            "name": v.get("pool") or v.get("resource") or "stack",
            "kind": "resource",
            "fullyQualifiedName": v.get("configPath") or v.get("urn") or report.stack,
        }
        fingerprint = hashlib.sha256(
            "|".join([v["policy"], v.get("urn") or "", v["message"].split("\n")[0]]).encode()
        ).hexdigest()
        result: dict[str, Any] = {"ruleId": v["policy"]}
        if v["policy"] in index:
            result["ruleIndex"] = index[v["policy"]]
        results.append(
            {
                **result,
                "level": LEVEL[v["enforcement"]],
                "message": {"text": v["message"]},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                            "region": {"startLine": line_of(text, v.get("configPath")) or 1},
                        },
                        "logicalLocations": [logical],
                    }
                ],
                "partialFingerprints": {"gpuClusterFinding/v1": fingerprint},
                "properties": {
                    "enforcement": v["enforcement"],
                    "severity": v["severity"],
                    "group": v["group"],
                    "resource": v.get("resource"),
                    "resourceType": v.get("resourceType"),
                },
            }
        )
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gpu-cluster-policy-pack",
                        "semanticVersion": "0.1.0",
                        "rules": [_rule(r) for r in rules],
                    }
                },
                "automationDetails": {"id": f"gpu-cluster/{report.stack}/"},
                "results": results,
                **_skipped_pack_invocation(report),
                # a fleet manager's run carries the fleet (clusters, queues, cost) as run properties
                **({"properties": {"fleet": report.fleet}} if report.fleet else {}),
            }
        ],
    }


SKIPPED_TEXT = "policy pack skipped (--no-policies): no rule was checked; an empty result list is not a clean scan"


def _skipped_pack_invocation(report: PreviewReport) -> dict[str, Any]:
    """``--no-policies``: an empty ``results`` would read as a clean scan, so the run says the pack was skipped (a
    SARIF 2.1.0 invocation notification, which code-scanning UIs show as a tool warning). Other runs: unchanged."""
    if not report.policies_skipped:
        return {}
    notice = {"level": "warning", "message": {"text": SKIPPED_TEXT}}
    return {"invocations": [{"executionSuccessful": True, "toolExecutionNotifications": [notice]}]}


def _stack_text(path: Path | None) -> str:
    """The stack file's text for line numbers; "" when it cannot be read (results then point at line 1)."""
    try:
        return decode_stack_bytes(path.read_bytes(), str(path)) if path is not None and path.is_file() else ""
    except (OSError, StackFileError):
        return ""


def render_sarif_text(report: PreviewReport) -> str:
    return strict_dumps(render_sarif(report), indent=2) + "\n"
