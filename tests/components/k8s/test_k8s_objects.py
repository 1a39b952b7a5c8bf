"""Every built-in Kubernetes object any example stack registers validates against the Kubernetes OpenAPI schema.

Custom resources (Kueue, Slinky, Trainer) are checked against their upstream CRDs elsewhere; this covers the core,
apps, batch, rbac, ... objects the components create directly, whatever component made them.
"""

from __future__ import annotations

import functools

import kubernetes_validate
import pytest

from preview.engine import PROJECT_ROOT, Recording, read_stack_file, run_program
from tests.support.kube.schema import K8S_VERSION, unwrap_secrets

STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in PROJECT_ROOT.glob("Pulumi.*.yaml"))
BUILT_IN_GROUPS = (
    "core/v1",
    "apps/v1",
    "batch/v1",
    "rbac.authorization.k8s.io/v1",
    "policy/v1",
    "storage.k8s.io/v1",
    "networking.k8s.io/v1",
    "scheduling.k8s.io/v1",
)


@functools.cache
def _recording(stack: str) -> Recording:
    return run_program(read_stack_file(PROJECT_ROOT / f"Pulumi.{stack}.yaml"), stack)


def _built_in(rec: Recording) -> list:
    return [
        r
        for r in rec.resources
        if r.type.startswith("kubernetes:")
        and any(r.type.startswith(f"kubernetes:{group}:") for group in BUILT_IN_GROUPS)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_every_built_in_object_validates(stack):
    for obj in _built_in(_recording(stack)):
        kubernetes_validate.validate(unwrap_secrets(obj.inputs), K8S_VERSION, strict=True)


def test_the_examples_create_workload_objects_so_the_check_above_has_teeth():
    kinds = {r.type for stack in STACKS for r in _built_in(_recording(stack))}
    assert {
        "kubernetes:apps/v1:StatefulSet",
        "kubernetes:batch/v1:Job",
        "kubernetes:core/v1:Namespace",
        "kubernetes:core/v1:Secret",
    } <= kinds, sorted(kinds)
