"""Every YAML snippet the docs show is valid YAML and uses only keys the configuration models know, where the models
put them: a renamed or moved key in the spec fails here, though no documented command runs the snippet."""

from __future__ import annotations

import re
import typing
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from stacks.spec.stack import NodePool, StackSpec
from tests.conftest import PROJECT_ROOT

PAGES = [
    PROJECT_ROOT / "README.md",
    PROJECT_ROOT / "CONTRIBUTING.md",
    *sorted((PROJECT_ROOT / "docs").glob("*.md")),
    *sorted((PROJECT_ROOT / "docs" / "contributing").glob("*.md")),
]
YAML_FENCE = re.compile(r"^```yaml\n(.*?)^```", re.MULTILINE | re.DOTALL)
NAMESPACE = "gpu-cluster:"
ELIDED = {"…", "..."}
"""``window: {…}``: the docs leave a value out on purpose."""


def snippets() -> list[tuple[str, str]]:
    return [
        (f"{page.relative_to(PROJECT_ROOT)}#{i}", block)
        for page in PAGES
        for i, block in enumerate(YAML_FENCE.findall(page.read_text(encoding="utf-8")))
    ]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models a field holds directly or as list items (not as map values: those keys are the user's)."""
    out: list[type[BaseModel]] = []
    stack = [annotation]
    while stack:
        ann = stack.pop()
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.append(ann)
        elif typing.get_origin(ann) not in (dict, typing.Dict):
            stack += list(typing.get_args(ann))
    return out


def unknown_keys(value: Any, models: list[type[BaseModel]], path: str) -> list[str]:
    if isinstance(value, list):
        return [k for i, item in enumerate(value) for k in unknown_keys(item, models, f"{path}[{i}]")]
    if not isinstance(value, dict) or not models:
        return []
    out = []
    for key, child in value.items():
        if key in ELIDED:
            continue
        fields = [(m, f) for m in models for name, f in m.model_fields.items() if (f.alias or name) == key]
        if not fields:
            out.append(f"{path}.{key}" if path else str(key))
            continue
        out += unknown_keys(child, [x for _, f in fields for x in _models_in(f.annotation)], f"{path}.{key}")
    return out


def roots(doc: Any) -> list[tuple[Any, list[type[BaseModel]], str]]:
    """Where a snippet starts: a stack file (``config:``), its ``gpu-cluster:`` keys, or a list of node pools."""
    if isinstance(doc, dict) and "config" in doc:
        doc = doc["config"]
    if isinstance(doc, dict) and any(str(k).startswith(NAMESPACE) for k in doc):
        return [
            ({k.removeprefix(NAMESPACE): v for k, v in doc.items() if str(k).startswith(NAMESPACE)}, [StackSpec], "")
        ]
    if isinstance(doc, list) and all(isinstance(p, dict) and "machineType" in p for p in doc):
        return [(doc, [NodePool], "nodePools")]
    return []


def test_the_docs_have_stack_file_snippets():
    assert sum(1 for _, text in snippets() for doc in yaml.safe_load_all(text) if roots(doc)) >= 8


@pytest.mark.parametrize("where, text", snippets(), ids=[w for w, _ in snippets()])
def test_every_yaml_snippet_uses_real_keys(where, text):
    docs = list(yaml.safe_load_all(text))  # also: it parses
    bad = [k for doc in docs for value, models, path in roots(doc) for k in unknown_keys(value, models, path)]
    assert bad == [], f"{where}: keys the configuration does not have (see docs/configuration.md)"
