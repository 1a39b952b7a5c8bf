"""The offline run pauses Python's cyclic garbage collector while the program registers its resources, then hands
the survivors to the oldest generation and turns the collector back on: same registrations, same state afterwards."""

from __future__ import annotations

import contextlib
import gc
import weakref

import pytest

import preview.engine as engine
from preview.engine import PROJECT_ROOT, read_stack_file, run_program
from preview.mocks.cloud import RecordingMocks
from preview.gc_pause import paused_gc


def _seen(recording):  # registration order follows the event loop: compare as sets of registrations
    return sorted((r.type, r.name, r.parent_urn, repr(r.redacted_inputs)) for r in recording.resources)


def test_the_collector_is_off_while_the_program_registers_and_on_again_after(monkeypatch):
    states: list[bool] = []
    real = RecordingMocks.new_resource

    def watching(self, args):
        states.append(gc.isenabled())
        return real(self, args)

    monkeypatch.setattr(RecordingMocks, "new_resource", watching)
    config = read_stack_file(PROJECT_ROOT / "Pulumi.dev.yaml")
    assert gc.isenabled()
    paused = run_program(config, "dev")
    assert states and not any(states)  # every registration ran with the collector paused
    assert gc.isenabled() and gc.get_freeze_count() == 0  # back on, nothing left frozen

    states.clear()
    monkeypatch.setattr(engine, "paused_gc", contextlib.nullcontext)
    collected = run_program(config, "dev")
    assert states and all(states)
    assert _seen(paused) == _seen(collected)


@pytest.mark.slow
def test_survivors_go_to_the_oldest_generation_and_stay_collectable():
    class Node:
        pass

    with paused_gc():
        assert not gc.isenabled()
        kept = Node()
        cycle = Node()
        cycle.me = cycle  # garbage once the name is gone: only the collector can free it
        gone = weakref.ref(cycle)
        del cycle
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert any(o is kept for o in gc.get_objects(generation=2))  # no rescans of it by the young collections
    gc.collect()
    assert gone() is None  # the cycle was freed by the next full collection


def test_nesting_and_errors_restore_the_previous_state():
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner exit does not turn the collector on under the outer pause
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


@pytest.mark.slow
def test_objects_someone_else_froze_stay_frozen():
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        with paused_gc():
            pass
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        gc.unfreeze()
