"""security-privileged-images-by-digest against the real render: every example's Helm releases rendered by Helm 3
(and the objects the program creates) give the host-level containers that really run; the rule, which sees only the
releases' values and the program's objects (catalog/data/host-level-images.csv for the charts' defaults), must see
each of them, report each one not pinned by digest and no image the charts do not render."""
from __future__ import annotations

from typing import Any

import pytest

from plan.host_access import HostContainer, host_containers, pod_specs
from policies.host_images import seen_host_containers
from policies.rule import Resource
from policies.rules.security_privileged_images_by_digest import RULE
from tests.support.helm.checks import image_refs, program_objects
from tests.support.helm.examples import rendered
from tests.support.helm.render import plain
from tests.support.spec.gpu_runtime_matrix import EXAMPLE_STACKS


def nodeset_pod(nodeset: dict[str, Any]) -> dict[str, Any]:
    """A Slinky NodeSet's pod: its template plus slurmd, which Slinky's operator runs privileged."""
    spec = dict(nodeset["spec"].get("template", {}).get("spec", {}))
    slurmd = {"name": "slurmd", **nodeset["spec"]["slurmd"], "securityContext": {"privileged": True}}
    return {**spec, "containers": [*(spec.get("containers") or []), slurmd]}


def rendered_host_containers(stack: str) -> list[HostContainer]:
    r = rendered(stack)
    out: list[HostContainer] = []
    for obj in r.objects + program_objects(r.rec):
        specs = [nodeset_pod(obj)] if obj["kind"] == "NodeSet" else [s for _, s in pod_specs(obj)]
        for spec in specs:
            out += host_containers(spec)
    return out


def operand_images(stack: str) -> set[str]:
    """Images of the GPU Operator's operands: the operator makes their pods from the rendered ClusterPolicy."""
    return {ref for o in rendered(stack).objects if o["kind"] == "ClusterPolicy" for _, ref in image_refs(o)}


def resources(stack: str) -> list[Resource]:
    return [Resource(x.type, x.name, x.urn, plain(x.inputs)) for x in rendered(stack).rec.resources]


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_the_rule_sees_every_host_level_container_the_example_renders(stack):
    really = {c.image for c in rendered_host_containers(stack)}
    seen = {s.container.image for r in resources(stack) for s in seen_host_containers(r.type, r.props)}
    assert really <= seen, f"{stack}: rendered host-level images the rule does not see: {sorted(really - seen)}"
    phantom = seen - really - operand_images(stack)
    assert not phantom, f"{stack}: the rule reads images no chart of the stack renders: {sorted(phantom)}"


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_rendered_host_level_image_not_pinned_by_digest_is_reported(stack):
    messages = " ".join(f.message for r in resources(stack) for f in RULE.evaluate(r)[0])
    containers = rendered_host_containers(stack)
    for c in containers:
        assert (f" {c.image} (" in messages) is not c.by_digest, (stack, c)
    assert all(c.by_digest for c in containers if c.image.startswith("docker.io/library/ubuntu")), \
        f"{stack}: an ubuntu tag runs in the host's namespaces"


def test_the_examples_have_host_level_containers_pinned_and_unpinned():
    """The checks above ran on something: both kinds occur across the examples."""
    everything = [c for s in EXAMPLE_STACKS for c in rendered_host_containers(s)]
    assert {c.by_digest for c in everything} == {True, False}
    assert {"privileged", "hostPID"} <= {reason for c in everything for reason in c.reasons}
