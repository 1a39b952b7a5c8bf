"""The example stacks (and the GPU runtime matrix configs) recorded once and rendered once per Helm version per
session, for the Helm release tests; the checks every rendered stack must pass, as one function."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from preview.engine import Recording, run_program
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS, config
from tests.support.helm.binary import HELM3, HelmPin
from tests.support.helm.installed_crds import installed_crds
from tests.support.helm.checks import CRDs, crds_of, duplicates, floating_images, object_errors, program_objects
from tests.support.spec.edit import edit
from tests.support.helm.render import (
    RELEASE,
    crd_api_versions,
    kube_version,
    release_call,
    release_calls,
    render,
    render_stack,
)


@functools.cache
def recording(name: str) -> Recording:
    """An example stack (by stack name) or a ``gpu_runtime_matrix`` config, recorded once (do not mutate)."""
    return run_program(config(name), name if name in EXAMPLE_STACKS else "dev")


@dataclass(frozen=True)
class RenderedStack:
    rec: Recording
    releases: dict[str, list[dict[str, Any]]]
    """Release resource name -> rendered objects."""

    @property
    def objects(self) -> list[dict[str, Any]]:
        return [o for objs in self.releases.values() for o in objs]

    @property
    def crds(self) -> CRDs:
        return crds_of(self.objects)

    def release(self, resource_name: str) -> list[dict[str, Any]]:
        assert resource_name in self.releases, f"no release {resource_name} (have {sorted(self.releases)})"
        return self.releases[resource_name]

    def one(self, kind: str, name: str | None = None, release: str | None = None) -> dict[str, Any]:
        pool = self.release(release) if release else self.objects
        hits = [o for o in pool if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
        assert len(hits) == 1, f"expected one {kind} {name or ''}, found {[o['metadata']['name'] for o in hits]}"
        return hits[0]


@functools.cache
def rendered(name: str, helm: HelmPin = HELM3) -> RenderedStack:
    rec = recording(name)
    return RenderedStack(rec, render_stack(rec, helm))


def problems(stack: RenderedStack) -> list[str]:
    """Every defect the checker knows besides a failed render (which raises): invalid objects, an object two owners
    render, a floating image tag."""
    installed, unvalidated = installed_crds(stack.rec)  # CRDs from outside the releases (a pinned URL, GKE)
    crds = {**stack.crds, **installed}
    out = [
        e
        for o in stack.objects
        if (o.get("apiVersion", "").rpartition("/")[0], o.get("kind")) not in unvalidated
        for e in object_errors(o, crds)
    ]
    namespaces = {c.resource: c.namespace for c in release_calls(stack.rec)}
    program = program_objects(stack.rec)
    out += duplicates({**stack.releases, "the program": program}, namespaces, crds)
    out += floating_images(stack.objects + program)
    return out


def with_edit(name: str, release: str, path: str | tuple, value: Any, helm: HelmPin = HELM3) -> RenderedStack:
    """``rendered(name)`` with one value of one release changed (``tests.support.spec.edit`` path); raises
    ``RenderError`` when Helm refuses the values."""
    base = rendered(name, helm)
    apis = crd_api_versions(base.objects)
    kube = kube_version(base.rec)
    releases = dict(base.releases)
    res = [r for r in base.rec.resources if r.type == RELEASE and r.name == release]
    assert len(res) == 1, f"no release {release} in {name}"
    values = edit(release_call(res[0], kube).values, path, value)
    releases[release] = render(release_call(res[0], kube, values), apis, helm)
    return RenderedStack(base.rec, releases)
