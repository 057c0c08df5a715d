"""Model presets: parameter counts computed from the shape agree with the published totals."""

from __future__ import annotations

import pytest

from gpuquote.errors import BadInput
from gpuquote.models import Architecture, architecture_from_dict, get_model, list_models

REQUIRED = [
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3-8b",
    "llama-3.1-8b",
    "llama-3-70b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "llama-3.3-70b",
    "qwen2.5-7b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "qwen2.5-72b",
    "mistral-7b",
    "mixtral-8x7b",
    "mixtral-8x22b",
    "deepseek-v3",
    "deepseek-r1",
    "gpt-3-175b",
    "bloom-176b",
    "opt-13b",
    "opt-175b",
    "tinyllama-1.1b",
    "mpt-7b",
    "mpt-30b",
    "bloomz-7b1",
    "mt0-xxl",
    "t0-3b",
    "megatron-gpt-22b",
    "megatron-gpt-145.6b",
    "megatron-gpt-1.7b",
]


@pytest.mark.parametrize("mid", REQUIRED)
def test_preset_exists_with_source(mid):
    a = get_model(mid)
    assert a.source.strip(), mid


@pytest.mark.parametrize("mid", sorted(list_models()))
def test_computed_total_matches_published(mid):
    a = get_model(mid)
    # published labels are rounded to 2-3 significant figures (e.g. "1.7B" for 1.65B)
    assert a.total_params / 1e9 == pytest.approx(a.params_b, rel=0.03), mid
    if a.active_params_b:
        assert a.active_params / 1e9 == pytest.approx(a.active_params_b, rel=0.03), mid


def test_llama2_7b_exact_count():
    # 32 x (4 h^2 + 3 h f + 2 h) + 2 V h + h, h=4096, f=11008, V=32000
    h, f, v, n = 4096, 11008, 32000, 32
    assert get_model("llama-2-7b").total_params == n * (4 * h * h + 3 * h * f + 2 * h) + 2 * v * h + h


def test_gqa_shrinks_attention_and_kv():
    mha = architecture_from_dict(
        {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 64, "ffn_hidden": 28672, "vocab": 32000}
    )
    gqa = get_model("llama-2-70b")
    assert mha.total_params - gqa.total_params == 80 * 2 * 8192 * (8192 - 1024)
    assert mha.kv_bytes_per_token(2) == 8 * gqa.kv_bytes_per_token(2)


def test_kv_per_token_llama2_70b_is_320_kib():
    assert get_model("llama-2-70b").kv_bytes_per_token(2) == 320 * 1024


def test_kv_per_token_opt13b_is_800_kib():
    assert get_model("opt-13b").kv_bytes_per_token(2) == 2 * 5120 * 40 * 2


def test_tied_embeddings_counted_once():
    base = {"layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 128, "vocab": 1000}
    tied = architecture_from_dict({**base, "tied_embeddings": True})
    untied = architecture_from_dict({**base, "tied_embeddings": False})
    assert untied.total_params - tied.total_params == 1000 * 64


def test_moe_total_vs_active():
    m = get_model("mixtral-8x7b")
    assert m.active_params < m.total_params / 3
    d = get_model("deepseek-v3")
    assert d.kv_bytes_per_token(2) == 61 * (512 + 64) * 2  # MLA latent cache


def test_unknown_model_is_bad_input():
    with pytest.raises(BadInput, match="model: unknown model 'llama-9-7b'.*closest"):
        get_model("llama-9-7b")


def test_aliases_resolve():
    assert get_model("Llama2-7B") is get_model("llama-2-7b")


def test_bad_architecture_fields():
    with pytest.raises(BadInput, match="architecture.mlp"):
        architecture_from_dict(
            {"layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 128, "vocab": 10, "mlp": "tanh"}
        )
    with pytest.raises(BadInput, match="unknown field"):
        architecture_from_dict(
            {"layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 128, "vocab": 10, "depth": 3}
        )
    with pytest.raises(BadInput, match="kv_heads"):
        Architecture(layers=2, hidden=64, heads=4, kv_heads=3, ffn_hidden=128, vocab=10)
