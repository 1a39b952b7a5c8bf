"""One conversion per resource for all rules of one ``Analyze`` or ``AnalyzeStack`` request.

The SDK hands every stack rule the whole stack, so each rule turned every resource's props into plain data again:
16 rules x 1,237 resources of a 200-pool stack; and each resource rule of a type turned the same resource (and its
provider) into plain data again: about 13 rules per node pool. Within one request the props of a URN are the same for
every rule, so a caller that serves the pack in its own process (the offline preview) wraps each request in
``one_conversion()`` and the rules share the plain copies (they only read them); the stack rules also share the list
of the stack's resources, each getting its own copy of the list. Without it (the Pulumi CLI's path) each rule
converts, as before; ``tests/policies/test_policy_paths_agree.py`` holds that both give the same findings.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator

_CACHE: ContextVar[dict[str, Any] | None] = ContextVar("gpu_cluster_stack_props", default=None)


@contextmanager
def one_conversion() -> Iterator[None]:
    token = _CACHE.set({})
    try:
        yield
    finally:
        _CACHE.reset(token)


def converted(urn: str, convert: Callable[[], Any]) -> Any:
    """``convert()``, once per URN (or other key) inside ``one_conversion()``; every time outside it."""
    cache = _CACHE.get()
    if cache is None:
        return convert()
    if urn not in cache:
        cache[urn] = convert()
    return cache[urn]
