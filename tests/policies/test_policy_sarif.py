"""SARIF output for code-scanning UIs: the shape GitHub code scanning requires (SARIF 2.1.0), rules with
metadata, and results located at the stack-file line of the pool the violation names."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from policies.pack import RULES
from preview.engine import PROJECT_ROOT

# The subset of the SARIF 2.1.0 schema that code-scanning uploads rely on (written from the spec, not copied).
SARIF_SUBSET = {
    "type": "object",
    "required": ["version", "runs", "$schema"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name", "rules"],
                                "properties": {
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id", "shortDescription", "fullDescription", "help"],
                                            "properties": {
                                                "defaultConfiguration": {
                                                    "properties": {
                                                        "level": {"enum": ["none", "note", "warning", "error"]}
                                                    }
                                                }
                                            },
                                        },
                                    }
                                },
                            }
                        },
                    },
                    "invocations": {  # §3.20: executionSuccessful required; §3.58 notifications: message + level
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["executionSuccessful"],
                            "properties": {
                                "executionSuccessful": {"type": "boolean"},
                                "toolExecutionNotifications": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["message"],
                                        "properties": {
                                            "level": {"enum": ["none", "note", "warning", "error"]},
                                            "message": {"type": "object", "required": ["text"]},
                                        },
                                    },
                                },
                            },
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["ruleId", "message", "locations", "level"],
                            "properties": {
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {"type": "object", "required": ["text"]},
                                "locations": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {
                                        "required": ["physicalLocation"],
                                        "properties": {
                                            "physicalLocation": {
                                                "required": ["artifactLocation", "region"],
                                                "properties": {
                                                    "region": {
                                                        "required": ["startLine"],
                                                        "properties": {"startLine": {"type": "integer", "minimum": 1}},
                                                    }
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


@pytest.mark.slow
def test_sarif_for_the_topology_example():
    out = subprocess.run(
        [sys.executable, "-m", "preview", "--stack", "gke-a3-spread", "--format", "sarif"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    jsonschema.validate(doc, SARIF_SUBSET)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in RULES] and rules[0]["id"] == "cost-gpu-hour-limit"
    checkov = {r["id"]: r["properties"].get("checkov") for r in rules}  # metadata, no longer part of the ID
    assert checkov == {r.id: r.checkov for r in RULES} and checkov["security-gke-auto-repair"] == "CKV_GCP_9"
    errors = [r for r in run["results"] if r["level"] == "error"]
    assert {r["ruleId"] for r in errors} == {"topology-multi-node-placement"} and len(errors) == 1
    for r in errors:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        loc = r["locations"][0]
        assert loc["physicalLocation"]["artifactLocation"]["uri"] == "Pulumi.gke-a3-spread.yaml"
        line = loc["physicalLocation"]["region"]["startLine"]
        text = (PROJECT_ROOT / "Pulumi.gke-a3-spread.yaml").read_text().splitlines()[line - 1]
        assert "name: a3-mega" in text  # the pool's entry in nodePools
        assert loc["logicalLocations"][0] == {
            "name": "a3-mega",
            "kind": "resource",
            "fullyQualifiedName": "gpu-cluster:nodePools[0]",
        }
    assert len({r["partialFingerprints"]["gpuClusterFinding/v1"] for r in errors}) == 1
