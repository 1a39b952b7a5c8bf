"""Joins between resources that stack rules need: an EKS node group's launch template and placement group.

At ``pulumi preview`` the IDs that link them are unknown (the launch template does not exist yet), so the join
uses what is known: the ``gpu-cluster/pool`` tag, then a shared parent component, then an explicit name.
"""

from __future__ import annotations

from policies.resources import LAUNCH_TEMPLATE, PLACEMENT_GROUP, pool_tag
from policies.rule import Resource
from policies.values import as_dict, dig


def _pick(candidates: list[Resource], group: Resource, pool: str) -> Resource | None:
    tagged = [r for r in candidates if pool_tag(r.props) == pool]
    if len(tagged) == 1:
        return tagged[0]
    siblings = [r for r in candidates if group.parent and r.parent == group.parent]
    if len(siblings) == 1:
        return siblings[0]
    return None


def launch_template_of(group: Resource, pool: str, resources: list[Resource]) -> Resource | None:
    ref = as_dict(group.props.get("launchTemplate"))
    if not ref:
        return None
    candidates = [r for r in resources if r.type == LAUNCH_TEMPLATE]
    named = ref.get("name")
    if isinstance(named, str):
        by_name = [r for r in candidates if r.props.get("name") == named]
        if len(by_name) == 1:
            return by_name[0]
    return _pick(candidates, group, pool)


def placement_group_of(template: Resource, pool: str, resources: list[Resource]) -> Resource | None:
    name = dig(template.props, "placement", "groupName")
    candidates = [r for r in resources if r.type == PLACEMENT_GROUP]
    if isinstance(name, str):
        by_name = [r for r in candidates if r.props.get("name", r.name) == name]
        if len(by_name) == 1:
            return by_name[0]
    return _pick(candidates, template, pool)
