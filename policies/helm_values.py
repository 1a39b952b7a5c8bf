"""Walk the free-form values of Helm releases (and the data of ConfigMaps and Secrets) for the security rules."""

from __future__ import annotations

import base64
import binascii
from typing import Any, Iterator

from policies.resources import CONFIG_MAP, HELM_CHART_V4, HELM_RELEASE, SECRET, release_label
from policies.rule import Resource
from policies.values import as_dict

VALUE_CARRIERS = (HELM_RELEASE, HELM_CHART_V4, CONFIG_MAP, SECRET)


def strings(value: Any, path: str = "") -> Iterator[tuple[str, str, str]]:
    """(dotted path, last key, string) for every string leaf, e.g. ``("a.b[0].c", "c", "x")``."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaf_or_walk(v, f"{path}.{k}" if path else str(k), str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaf_or_walk(v, f"{path}[{i}]", "")


def _leaf_or_walk(value: Any, path: str, key: str) -> Iterator[tuple[str, str, str]]:
    if isinstance(value, str):
        yield path, key, value
    else:
        yield from strings(value, path)


def subject_of(r: Resource) -> tuple[str, tuple[str, ...]]:
    if r.type in (HELM_RELEASE, HELM_CHART_V4):
        name: str = r.props["name"] if isinstance(r.props.get("name"), str) else r.name
        return release_label(r.props, name), (name, r.name, r.urn)
    kind = "ConfigMap" if r.type == CONFIG_MAP else "Secret"
    meta_name = as_dict(r.props.get("metadata")).get("name")
    name = meta_name if isinstance(meta_name, str) else r.name
    return f"{kind} '{name}'", (name, r.name, r.urn)


def carried_strings(r: Resource) -> Iterator[tuple[str, str, str]]:
    """Every string a resource hands to the cluster: Helm values, ConfigMap data, Secret data (decoded)."""
    if r.type in (HELM_RELEASE, HELM_CHART_V4):
        yield from strings(as_dict(r.props.get("values")), "values")
    elif r.type == CONFIG_MAP:
        yield from strings(as_dict(r.props.get("data")), "data")
    elif r.type == SECRET:
        yield from strings(as_dict(r.props.get("stringData")), "stringData")
        for path, key, text in strings(as_dict(r.props.get("data")), "data"):
            try:
                yield path, key, base64.b64decode(text, validate=True).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                yield path, key, text
