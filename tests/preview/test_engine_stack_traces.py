"""The offline run skips the SDK's per-registration stack trace (the mocks drop it) and puts the SDK's function back
afterwards; what the program registers is the same either way."""

from __future__ import annotations

from preview.engine import PROJECT_ROOT, no_stack_traces, read_stack_file, run_program
from preview.sdk_private import RESOURCE_MODULE


def test_no_trace_is_captured_during_the_run_and_the_sdk_function_comes_back(monkeypatch):
    calls: list[int] = []
    real = RESOURCE_MODULE._get_stack_trace

    def counting():
        calls.append(1)
        return real()

    monkeypatch.setattr(RESOURCE_MODULE, "_get_stack_trace", counting)
    config = read_stack_file(PROJECT_ROOT / "Pulumi.dev.yaml")
    skipped = run_program(config, "dev")
    assert len(calls) <= 1 and RESOURCE_MODULE._get_stack_trace is counting  # at most the root stack's, set up first
    calls.clear()
    with_traces = run_program_with_traces(config, monkeypatch)
    assert len(calls) >= len(skipped.resources) - 1  # with the capture on: one per registration

    def seen(recording):  # registration order follows the event loop, so compare as sets of registrations
        return sorted((r.type, r.name, r.parent_urn, repr(r.redacted_inputs)) for r in recording.resources)

    assert seen(skipped) == seen(with_traces)


def run_program_with_traces(config, monkeypatch):
    """The same run with the SDK's capture left on (``no_stack_traces`` made a no-op)."""
    import contextlib
    import preview.engine as engine

    monkeypatch.setattr(engine, "no_stack_traces", contextlib.nullcontext)
    return run_program(config, "dev")


def test_the_context_restores_even_on_error():
    real = RESOURCE_MODULE._get_stack_trace
    try:
        with no_stack_traces():
            assert RESOURCE_MODULE._get_stack_trace is not real
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert RESOURCE_MODULE._get_stack_trace is real
