"""``helm template`` of every ``helm.v3.Release`` a recording holds, on the pinned chart staged in ``../shared/charts``
(or the ``scripts/fetch-upstream.sh`` cache), with exactly the recorded values, namespace and release name.

Each distinct (helm, chart, values, namespace, name, kube version, API versions) is rendered once per session; the
releases of a stack render in parallel (Helm is a separate process).
"""

from __future__ import annotations

import functools
import json
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from preview.engine import Recording, Registered
from tests.conftest import require_shared
from tests.support.helm.binary import HELM3, HelmPin, helm_path
from tests.support.kube.schema import unwrap_secrets

RELEASE = "kubernetes:helm.sh/v3:Release"
DEFAULT_KUBE_VERSION = "1.35"
"""GKE REGULAR channel (no version in the recording) and the EKS default: the Kubernetes minor the checks use."""


class RenderError(AssertionError):
    """``helm template`` failed: a template error or a values.schema.json violation (the message is Helm's)."""


@dataclass(frozen=True)
class ReleaseCall:
    """What Pulumi would hand Helm for one recorded Release."""

    resource: str
    """The Pulumi resource name (for messages)."""
    name: str
    namespace: str
    chart_name: str
    chart: str
    """Staged chart folder under ``charts/``: ``<chart basename>-<version>``."""
    values_json: str
    kube_version: str

    @property
    def values(self) -> dict[str, Any]:
        return json.loads(self.values_json)


def plain(value: Any) -> Any:
    """Recorded inputs as Helm sees them: secrets unwrapped, integral floats back to ints."""
    value = unwrap_secrets(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def kube_version(rec: Recording) -> str:
    eks = [r for r in rec.resources if r.type == "aws:eks/cluster:Cluster"]
    return str(eks[0].inputs.get("version") or DEFAULT_KUBE_VERSION) if eks else DEFAULT_KUBE_VERSION


STAGED_AS = {"dra-driver-nvidia-gpu-0.4.0": "dra-driver-nvidia-gpu-v0.4.0"}
"""Charts staged under their git tag's name where the published (OCI, strict semver) version has no "v"."""


def release_call(res: Registered, kube: str, values: dict[str, Any] | None = None) -> ReleaseCall:
    """The call for ``res``; ``values`` replaces the recorded values (the checker's own tests break one)."""
    inputs = res.inputs
    chart = str(inputs["chart"]).rsplit("/", 1)[-1]
    vals = plain(inputs.get("values") or {}) if values is None else values
    return ReleaseCall(
        resource=res.name,
        name=str(inputs.get("name") or res.name),
        namespace=str(inputs.get("namespace") or "default"),
        chart_name=chart,
        chart=STAGED_AS.get(f"{chart}-{inputs['version']}", f"{chart}-{inputs['version']}"),
        values_json=json.dumps(vals, sort_keys=True),
        kube_version=kube,
    )


def release_calls(rec: Recording) -> list[ReleaseCall]:
    kube = kube_version(rec)
    return [release_call(r, kube) for r in rec.resources if r.type == RELEASE]


def chart_dir(call: ReleaseCall) -> Path:
    return require_shared("charts", call.chart)


def render(call: ReleaseCall, api_versions: Sequence[str] = (), helm: HelmPin = HELM3) -> list[dict[str, Any]]:
    """The rendered objects (CRDs from ``crds/`` included, as ``helm install`` creates them)."""
    return [dict(o) for o in _render(call, tuple(sorted(api_versions)), helm, str(chart_dir(call)))]


@functools.lru_cache(maxsize=None)
def _render(call: ReleaseCall, api_versions: tuple[str, ...], helm: HelmPin, chart: str) -> tuple[dict, ...]:
    text = render_text(call, api_versions, helm)
    return tuple(d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if d)  # libyaml: MBs of CRDs


def render_text(call: ReleaseCall, api_versions: Sequence[str] = (), helm: HelmPin = HELM3) -> str:
    """``helm template``'s output as text (uncached); ``RenderError`` when Helm refuses."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=True) as values:
        values.write(call.values_json)
        values.flush()
        cmd = [
            str(helm_path(helm)),
            "template",
            call.name,
            str(chart_dir(call)),
            "--namespace",
            call.namespace,
            "--kube-version",
            f"v{call.kube_version}.0",
            "--include-crds",
            "--values",
            values.name,
        ]
        for api in api_versions:
            cmd += ["--api-versions", api]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300)
    if proc.returncode != 0:
        raise RenderError(f"helm {helm.version} template {call.chart} (release {call.resource}): {proc.stderr.strip()}")
    return proc.stdout


def crd_api_versions(objects: list[dict[str, Any]]) -> list[str]:
    """``group/version`` and ``group/version/Kind`` of every served version of the CRDs among ``objects``."""
    out = []
    for crd in (o for o in objects if o.get("kind") == "CustomResourceDefinition"):
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for v in crd["spec"]["versions"]:
            if v.get("served"):
                out += [f"{group}/{v['name']}", f"{group}/{v['name']}/{kind}"]
    return sorted(set(out))


def render_stack(rec: Recording, helm: HelmPin = HELM3) -> dict[str, list[dict[str, Any]]]:
    """Release resource name -> rendered objects, every release rendered with ``--api-versions`` for all the CRDs
    the stack's releases install (a first pass finds them)."""
    calls = release_calls(rec)
    helm_path(
        helm
    )  # extract (cold cache) before any thread of the pool runs Helm: docs of tests/support/helm/binary.py
    with ThreadPoolExecutor(max_workers=2) as pool:
        first = list(pool.map(lambda c: render(c, (), helm), calls))
        apis = crd_api_versions([o for objs in first for o in objs])
        # a chart whose templates never ask .Capabilities.APIVersions renders the same either way: render it once
        final = list(
            pool.map(
                lambda cf: render(cf[0], apis, helm) if asks_api_versions(cf[0].chart) else cf[1], zip(calls, first)
            )
        )
    return {c.resource: objs for c, objs in zip(calls, final)}


@functools.lru_cache(maxsize=None)
def asks_api_versions(chart: str) -> bool:
    root = require_shared("charts", chart)
    return any(
        "APIVersions" in f.read_text(encoding="utf-8", errors="replace")
        for f in root.rglob("*")
        if f.is_file() and f.suffix in (".yaml", ".tpl", ".yml")
    )
