"""The GEMM wave-tail term: small per-GPU GEMMs (small hidden, few tokens per micro-batch, wide TP)
reach a lower share of the tensor-core peak. Checked by hand on a known shape, by behaviour, and
against the physical range of its one fitted constant."""

from __future__ import annotations

import math

import pytest

from gpuquote.estimate import Hardware, estimate
from gpuquote.estimate.compute import gemm_size_factor, layer_gemms
from gpuquote.estimate.constants import K, calibration_table, override
from gpuquote.models import get_model


def _arch(name: str):
    return get_model(name)


def test_llama2_7b_forward_factor_by_hand():
    """Llama 2 7B (hidden 4096, SwiGLU ffn 11008, 32 layers, 32000 vocab, MHA; model card):
    forward GEMMs QKV 4096->12288, out 4096->4096, gate+up 4096->22016, down 11008->4096, head 4096->32000."""
    a = _arch("llama-2-7b")
    t = 2048.0
    shapes = [(32, 12288, 4096), (32, 4096, 4096), (32, 22016, 4096), (32, 4096, 11008), (1, 32000, 4096)]
    vol = sum(c * t * n * k for c, n, k in shapes)
    inner = sum(c * k for c, _, k in shapes)
    d0 = float(K.gemm_tail_dim)
    expected = vol / (vol + d0 * d0 * inner)
    assert gemm_size_factor(a, 1, t, "infer") == pytest.approx(expected, rel=1e-9)
    # one GEMM alone is 1 / (1 + d0^2 / (M N)): the half-empty last wave of M x N output tiles
    m, n, k = 2048.0, 4096.0, 4096.0
    assert m * n * k / (m * n * k + d0 * d0 * k) == pytest.approx(1 / (1 + d0 * d0 / (m * n)))


def test_training_adds_gradient_gemms_with_their_inner_dims():
    """Training runs each forward GEMM (inner K) also as data-gradient (inner N) and weight-gradient
    (inner M = tokens) GEMMs; full recomputation repeats the forward; LoRA skips weight gradients."""
    a = _arch("llama-2-7b")
    t, d0sq = 4096.0, float(K.gemm_tail_dim) ** 2
    g = layer_gemms(a, 1)

    def by_hand(fwd: float, wgrad: bool) -> float:
        vol = sum(c * (fwd + 1 + wgrad) * t * s * n * k for c, s, n, k in g)
        inner = sum(c * (fwd * k + n + (t * s if wgrad else 0.0)) for c, s, n, k in g)
        return vol / (vol + d0sq * inner)

    assert gemm_size_factor(a, 1, t, "train") == pytest.approx(by_hand(1, True), rel=1e-12)
    assert gemm_size_factor(a, 1, t, "train_recompute") == pytest.approx(by_hand(2, True), rel=1e-12)
    assert gemm_size_factor(a, 1, t, "lora") == pytest.approx(by_hand(1, False), rel=1e-12)


def test_factor_grows_with_tokens_and_hidden_and_falls_with_tp():
    small, big = _arch("tinyllama-1.1b"), _arch("llama-2-70b")
    for a in (small, big):
        for passes in ("infer", "train"):
            f = [gemm_size_factor(a, 1, t, passes) for t in (512, 2048, 8192, 65536)]
            assert f == sorted(f) and f[0] < f[-1] < 1.0
        # forward GEMMs saturate with tokens; weight-gradient GEMMs keep a hidden x width output
        assert gemm_size_factor(a, 1, 65536, "infer") > 0.99
        assert gemm_size_factor(a, 8, 2048) < gemm_size_factor(a, 2, 2048) < gemm_size_factor(a, 1, 2048)
    assert gemm_size_factor(small, 1, 2048) < gemm_size_factor(big, 1, 2048)
    assert gemm_size_factor(small, 1, 65536, "train") < gemm_size_factor(big, 1, 65536, "train")


def test_moe_experts_see_their_share_of_the_tokens():
    """A routed expert multiplies active/experts of the tokens: Mixtral's experts run thinner GEMMs than a
    dense model of the same hidden and ffn width."""
    a = _arch("mixtral-8x7b")
    routed = [x for x in layer_gemms(a, 1) if x[1] < 1.0]
    assert routed and all(s == pytest.approx(a.active_experts / a.experts) for _, s, _, _ in routed)
    assert sum(c for c, *_ in routed) == 2 * a.experts * (a.dec_layers - a.dense_layers)


def test_fitted_tail_dim_is_inside_the_physical_range():
    """d0^2 = SMs x tile area / 2: from 128x128 tiles on an A100 (108 SMs) to 128x256 tiles on an H100 (132)."""
    spec = calibration_table()["gemm_tail_dim"]
    assert spec["kind"] == "fitted" and len(spec["cases"]) >= 10
    lo, hi = math.sqrt(108 * 128 * 128 / 2), math.sqrt(132 * 128 * 256 / 2)
    assert lo <= spec["value"] <= hi


TRAIN_1B = {"kind": "train", "model": "tinyllama-1.1b", "method": "full", "precision": "bf16", "seq_len": 2048,
            "sharding": "zero1", "tokens": 1e9, "activation_checkpointing": "none",
            "global_batch_tokens": 8 * 8 * 2048}  # same tokens per step: 8 micro-batches of 1 or one of 8


def test_bigger_micro_batches_raise_mfu_of_a_small_model():
    hw = Hardware(gpu="a100-80gb-sxm4", gpus=8, gpus_per_node=8, intra_node="nvswitch")
    mb1 = estimate({**TRAIN_1B, "micro_batch": 1}, hw)
    mb8 = estimate({**TRAIN_1B, "micro_batch": 8}, hw)
    assert mb8.mfu > 1.05 * mb1.mfu
    with override(gemm_tail_dim=1e-6):  # without the term the micro-batch size hardly matters
        flat1 = estimate({**TRAIN_1B, "micro_batch": 1}, hw)
        flat8 = estimate({**TRAIN_1B, "micro_batch": 8}, hw)
    assert flat8.mfu == pytest.approx(flat1.mfu, rel=0.03)
    assert flat1.mfu > mb1.mfu


def test_compute_bound_throughput_moves_by_the_factor():
    """On one GPU with no communication, dense time scales by exactly 1/factor (attention is not a weight GEMM)."""
    job = {**TRAIN_1B, "sharding": None, "micro_batch": 1, "global_batch_tokens": None}
    hw = Hardware(gpu="a100-80gb-sxm4", gpus=1)
    with_term = estimate(job, hw)
    with override(gemm_tail_dim=1e-6):
        without = estimate(job, hw)
    assert with_term.tokens_per_s < without.tokens_per_s
    f = gemm_size_factor(_arch("tinyllama-1.1b"), 1, 2048.0, "train")
    slow = without.tokens_per_s / with_term.tokens_per_s
    assert 1.0 + 0.6 * (1.0 / f - 1.0) < slow < 1.0 / f  # dense GEMMs (most of the time) slow down, attention not


def test_prefill_is_not_scaled():
    """Inference engines pick GEMM kernels per shape at build time (TensorRT tactic timing), so prefill
    keeps the plain rule: TTFT does not move with the training-calibrated term."""
    job = {"kind": "infer", "model": "llama-2-7b", "precision": "bf16", "prompt_tokens": 2048, "output_tokens": 1,
           "batch": 1}
    base = estimate(job, gpu="h100-80gb-sxm5", gpus=1).latency
    with override(gemm_tail_dim=1e-6):
        off = estimate(job, gpu="h100-80gb-sxm5", gpus=1).latency
    assert base == off
