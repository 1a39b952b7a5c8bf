"""Validate rendered custom resources against the upstream CRDs in ``../shared/schemas`` as an API server would:
the OpenAPI v3 schema (objects closed: unknown fields are errors, unless ``x-kubernetes-preserve-unknown-fields``) and
the CRD's CEL rules (``x-kubernetes-validations``, evaluated with cel-python; transition rules need an old object
and are skipped)."""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import yaml

from tests.conftest import require_shared

CRD_FILES = {
    (
        "kueue.x-k8s.io",
        "AdmissionCheck",
    ): "kueue/v0.19.2/config/components/crd/bases/kueue.x-k8s.io_admissionchecks.yaml",
    ("kueue.x-k8s.io", "ClusterQueue"): "kueue/v0.19.2/config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml",
    ("kueue.x-k8s.io", "Cohort"): "kueue/v0.19.2/config/components/crd/bases/kueue.x-k8s.io_cohorts.yaml",
    ("kueue.x-k8s.io", "LocalQueue"): "kueue/v0.19.2/config/components/crd/bases/kueue.x-k8s.io_localqueues.yaml",
    (
        "kueue.x-k8s.io",
        "MultiKueueCluster",
    ): "kueue/v0.19.2/config/components/crd/bases/kueue.x-k8s.io_multikueueclusters.yaml",
    (
        "kueue.x-k8s.io",
        "MultiKueueConfig",
    ): "kueue/v0.19.2/config/components/crd/bases/kueue.x-k8s.io_multikueueconfigs.yaml",
    (
        "kueue.x-k8s.io",
        "ResourceFlavor",
    ): "kueue/v0.19.2/config/components/crd/bases/kueue.x-k8s.io_resourceflavors.yaml",
    ("kueue.x-k8s.io", "Topology"): "kueue/v0.19.2/config/components/crd/bases/kueue.x-k8s.io_topologies.yaml",
    (
        "kueue.x-k8s.io",
        "WorkloadPriorityClass",
    ): "kueue/v0.19.2/config/components/crd/bases/kueue.x-k8s.io_workloadpriorityclasses.yaml",
    (
        "trainer.kubeflow.org",
        "ClusterTrainingRuntime",
    ): "kubeflow-trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml",
    (
        "trainer.kubeflow.org",
        "TrainingRuntime",
    ): "kubeflow-trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml",
    (
        "trainer.kubeflow.org",
        "TrainJob",
    ): "kubeflow-trainer/v2.3.0/manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml",
    ("slinky.slurm.net", "LoginSet"): "slurm-operator/v1.2.1/config/crd/bases/slinky.slurm.net_loginsets.yaml",
    # serving
    (
        "leaderworkerset.x-k8s.io",
        "LeaderWorkerSet",
    ): "lws/v0.10.0/config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    ("keda.sh", "ScaledObject"): "keda/v2.20.2/config/crd/bases/keda.sh_scaledobjects.yaml",
    ("keda.sh", "TriggerAuthentication"): "keda/v2.20.2/config/crd/bases/keda.sh_triggerauthentications.yaml",
    (
        "gateway.networking.k8s.io",
        "Gateway",
    ): "gateway-api/v1.6.1/config/crd/standard/gateway.networking.k8s.io_gateways.yaml",
    (
        "gateway.networking.k8s.io",
        "HTTPRoute",
    ): "gateway-api/v1.6.1/config/crd/standard/gateway.networking.k8s.io_httproutes.yaml",
    (
        "inference.networking.k8s.io",
        "InferencePool",
    ): "gateway-api-inference-extension/v1.6.0/config/crd/bases/inference.networking.k8s.io_inferencepools.yaml",
}


CHART_CRD_FILES = {
    (
        "kueue.x-k8s.io",
        "ProvisioningRequestConfig",
    ): "kueue-0.19.2/templates/crd/kueue.x-k8s.io_provisioningrequestconfigs.yaml",
    (
        "resource.nvidia.com",
        "ComputeDomain",
    ): "dra-driver-nvidia-gpu-v0.4.0/crds/resource.nvidia.com_computedomains.yaml",
}
"""CRDs ``../shared/schemas`` holds no plain copy of: read from the pinned chart, where they are templated only in
their metadata (a licence comment, labels, a cert-manager annotation), never in the schema."""
_TEMPLATE_COMMENT = re.compile(r"\{\{-? /\*.*?\*/ -?\}\}", re.S)


def _untemplated(text: str) -> str:
    """The chart's CRD without its Go-template lines (all of them in metadata; the schema is plain YAML)."""
    return "\n".join(line for line in _TEMPLATE_COMMENT.sub("", text).splitlines() if "{{" not in line)


@functools.lru_cache(maxsize=None)
def crd(group: str, kind: str) -> dict[str, Any]:
    if (group, kind) in CHART_CRD_FILES:
        chart_path: Path = require_shared("charts", CHART_CRD_FILES[(group, kind)])
        return yaml.safe_load(_untemplated(chart_path.read_text(encoding="utf-8")))
    path: Path = require_shared("schemas", CRD_FILES[(group, kind)])
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def version_schema(obj: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The served version's openAPIV3Schema for ``obj`` and the CRD scope; fails when the version is not served."""
    group, _, version = obj["apiVersion"].rpartition("/")
    doc = crd(group, obj["kind"])
    served = {v["name"]: v for v in doc["spec"]["versions"] if v.get("served")}
    assert version in served, f"{obj['kind']} {version} is not served (served: {sorted(served)})"
    return served[version]["schema"]["openAPIV3Schema"], doc["spec"]["scope"]


def closed(schema: Any) -> Any:
    """Copy of ``schema`` where every object with properties refuses unknown fields (as the API server prunes and
    strict field validation rejects them), except where the schema preserves unknown fields."""
    if isinstance(schema, list):
        return [closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: closed(v) for k, v in schema.items() if k != "x-kubernetes-validations"}
    if isinstance(out.get("pattern"), str) and out["pattern"].startswith("^(?i)"):
        # Go's RE2 (the API server) takes inline flags anywhere; Python's re only at the start: same pattern
        out["pattern"] = "(?i)^" + out["pattern"][len("^(?i)") :]
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


@functools.lru_cache(maxsize=None)
def _validator(group: str, kind: str, version: str) -> jsonschema.Draft7Validator:
    obj = {"apiVersion": f"{group}/{version}", "kind": kind}
    schema, _ = version_schema(obj)
    return jsonschema.Draft7Validator(closed(copy.deepcopy(schema)))


def schema_errors(obj: dict[str, Any]) -> list[str]:
    group, _, version = obj["apiVersion"].rpartition("/")
    validator = _validator(group, obj["kind"], version)
    return [f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(obj)]


_ENV = celpy.Environment()


@functools.lru_cache(maxsize=None)
def _program(rule: str):
    return _ENV.program(_ENV.compile(rule))


def cel_errors(obj: dict[str, Any]) -> tuple[list[str], int]:
    """(messages of failed CEL rules, number of rules evaluated). A rule that cannot be evaluated is an error too."""
    schema, _ = version_schema(obj)
    return cel_errors_against(obj, schema)


def cel_errors_against(obj: dict[str, Any], schema: dict[str, Any]) -> tuple[list[str], int]:
    """``cel_errors`` against a given openAPIV3Schema (e.g. of a CRD a chart renders)."""
    errors: list[str] = []
    count = 0

    def walk(value: Any, node: dict[str, Any], path: str) -> None:
        nonlocal count
        for rule in node.get("x-kubernetes-validations") or []:
            if "oldSelf" in rule["rule"]:
                continue  # a transition rule: only meaningful on update
            count += 1
            try:
                ok = _program(rule["rule"]).evaluate({"self": celpy.json_to_cel(value)})
            except Exception as exc:  # noqa: BLE001 - any evaluation failure must surface in the test
                errors.append(f"{path or '<root>'}: rule {rule['rule']!r} could not be evaluated: {exc}")
                continue
            if ok is not True and not (isinstance(ok, celpy.celtypes.BoolType) and bool(ok)):
                errors.append(f"{path or '<root>'}: {rule.get('message') or rule['rule']}")
        if isinstance(value, dict):
            props = node.get("properties") or {}
            extra = node.get("additionalProperties")
            for key, child in value.items():
                sub = props.get(key) or (extra if isinstance(extra, dict) else None)
                if sub is not None:
                    walk(child, sub, f"{path}.{key}" if path else key)
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for i, child in enumerate(value):
                walk(child, node["items"], f"{path}[{i}]")

    walk(obj, schema, "")
    return errors, count
