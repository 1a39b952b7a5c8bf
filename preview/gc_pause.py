"""Pause Python's cyclic garbage collector around the offline run's bulk work (the program under the mocks, the
policy pack in this process).

Both build hundreds of thousands of objects that live until the run ends (every registration, its Outputs and
futures, the pack's proxies), and the collector rescans everything alive, the imported provider modules included,
each time enough new objects have piled up: at 200 pools about a third of the preview's CPU went to rescanning
objects that were never garbage (docs/benchmarks.md). Reference counting still frees everything acyclic while the
collector is paused; the few cycles the run leaves (finished asyncio tasks, exceptions) wait for the next collection
after it. Nesting is fine (a fleet manager's preview runs its workers' programs inside its own); the previous state
comes back on exit, also on an exception.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:  # nobody else froze objects: ours alone move, and none stay frozen
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
