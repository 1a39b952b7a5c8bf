"""The serving tables: every throughput row names a model of the model table and a catalog GPU, with its source and
date; the model shapes give the KV-cache sizes the research derived by hand (2 × layers × KV heads × head dim × 2 B)."""

from __future__ import annotations

import pytest

from catalog.serving import load_models, load_throughput


def test_every_throughput_row_names_a_known_model_with_source_and_date():
    models = load_models()
    for row in load_throughput():
        assert row.model in models, row.result_id
        assert row.source.startswith("MLPerf Inference v5.1") and row.date == "2025-09-09"
        assert row.output_tokens_per_s_per_gpu > 0 and row.p99_ttft_ms > 0 and row.p99_tpot_ms > 0


@pytest.mark.parametrize("model, kib", [("llama-3.1-8b", 128), ("llama-3.1-70b", 320), ("llama-3.1-405b", 504)])
def test_kv_cache_per_token_in_bf16_matches_the_derived_figures(model, kib):
    assert load_models()[model].kv_bytes_per_token("bf16") == kib * 1024


def test_llama_70b_bf16_weights_are_131_gib():
    assert load_models()["llama-3.1-70b"].weights_bytes("bf16") / 2**30 == pytest.approx(131.4, abs=0.05)
