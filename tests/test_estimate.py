"""Estimator: first-principles figures, behaviour across hardware, bad input, the calibration cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuquote.errors import BadInput
from gpuquote.estimate import Hardware, checkpoint_bytes, estimate, load_job, min_gpus
from gpuquote.estimate.constants import calibration_table
from gpuquote.estimate.memory import train_memory
from gpuquote.estimate.setup import GIB, Layout, Machine
from gpuquote.hardware import get_gpu

CONTRACT_MEMORY = {
    "weights_gib",
    "gradients_gib",
    "optimizer_gib",
    "activations_gib",
    "kv_cache_gib",
    "overhead_gib",
    "total_per_gpu_gib",
}


def _infer(**kw):
    return {
        "kind": "infer",
        "model": "llama-2-7b",
        "precision": "bf16",
        "prompt_tokens": 512,
        "output_tokens": 256,
        "batch": 1,
        **kw,
    }


def _train(**kw):
    return {
        "kind": "train",
        "model": "llama-2-7b",
        "method": "full",
        "precision": "bf16",
        "seq_len": 4096,
        "micro_batch": 1,
        "tokens": 1e9,
        **kw,
    }


# ---- first principles ---------------------------------------------------------------------------
def test_llama2_7b_bf16_weights_12_55_gib():
    r = estimate(_infer(), gpu="a100-80gb-sxm4", gpus=1).to_dict()
    assert r["memory"]["weights_gib"] == pytest.approx(12.55, abs=0.01)


def test_mixed_precision_adamw_is_16_bytes_per_param():
    job = load_job(_train(sharding="none", activation_checkpointing="full"))
    a = job.arch
    m = Machine(
        gpu=get_gpu("h100-80gb-sxm5"),
        gpus=1,
        gpus_per_node=8,
        intra_node="none",
        inter_kind="none",
        inter_gbps=100,
        power_limit_w=None,
    )
    mem = train_memory(job, a, m, Layout(), 1)
    assert (mem.weights + mem.gradients + mem.optimizer) / a.total_params == pytest.approx(16.0)


def test_zero_stages_shard_the_right_parts():
    # TP/PP pinned: a stated sharding constrains only its own dimension (zero1 lets TP/PP vary)
    base = _train(activation_checkpointing="full", tensor_parallel=1, pipeline_parallel=1)
    r = {
        s: estimate({**base, "sharding": s}, gpu="h100-80gb-sxm5", gpus=8).memory
        for s in ("zero1", "zero2", "zero3")
    }
    p = load_job(base).arch.total_params
    assert r["zero1"].optimizer == pytest.approx(12 * p / 8)
    assert r["zero1"].gradients == pytest.approx(2 * p)
    assert r["zero2"].gradients == pytest.approx(2 * p / 8)
    assert r["zero3"].weights < 2 * p / 4  # sharded, plus a couple of gathered layers


def test_kv_cache_llama2_70b_bf16_320_kib_per_token():
    job = {
        "kind": "infer",
        "model": "llama-2-70b",
        "precision": "bf16",
        "prompt_tokens": 1023,
        "output_tokens": 1,
        "batch": 1,
        "kv_cache_precision": "bf16",
    }
    r = estimate(job, gpu="h200-141gb-sxm", gpus=1)
    assert r.memory.kv_cache == pytest.approx(1024 * 320 * 1024)


def test_fp8_on_a100_refused_naming_hopper():
    with pytest.raises(BadInput, match="Hopper"):
        estimate(_train(precision="fp8"), gpu="a100-80gb-sxm4", gpus=8)


def test_activation_checkpointing_trades_memory_for_compute():
    res = {
        c: estimate(_train(activation_checkpointing=c, sharding="zero1"), gpu="h100-80gb-sxm5", gpus=8)
        for c in ("none", "full")
    }
    assert res["full"].memory.activations < res["none"].memory.activations / 4
    assert res["full"].tokens_per_s < res["none"].tokens_per_s * 0.85


def test_qlora_fits_where_full_finetune_does_not():
    q = estimate(_train(model="llama-2-13b", method="qlora", seq_len=1024), gpu="rtx-4090", gpus=1)
    f = estimate(_train(model="llama-2-13b", method="full", seq_len=1024), gpu="rtx-4090", gpus=1)
    assert q.fits and not f.fits


# ---- hardware shapes the answer -----------------------------------------------------------------
def test_pcie_and_multinode_are_slower():
    # pure FSDP (TP/PP pinned at 1): a stated sharding alone would let the search use TP and PP
    job = _train(
        model="llama-2-13b", sharding="zero3", activation_checkpointing="full", micro_batch=1, tensor_parallel=1,
        pipeline_parallel=1,
    )
    sxm = estimate(job, Hardware(gpu="a100-80gb-sxm4", gpus=8, gpus_per_node=8, intra_node="nvswitch"))
    pcie = estimate(job, Hardware(gpu="a100-80gb-pcie", gpus=8, gpus_per_node=8, intra_node="pcie"))
    assert pcie.tokens_per_s < 0.9 * sxm.tokens_per_s
    tp_job = _train(model="llama-2-13b", tensor_parallel=8, activation_checkpointing="full")
    tp_sxm = estimate(tp_job, Hardware(gpu="a100-80gb-sxm4", gpus=8, gpus_per_node=8, intra_node="nvswitch"))
    tp_pcie = estimate(tp_job, Hardware(gpu="a100-80gb-pcie", gpus=8, gpus_per_node=8, intra_node="pcie"))
    assert tp_pcie.tokens_per_s < 0.6 * tp_sxm.tokens_per_s and tp_pcie.bound == "network"
    fast = estimate(
        job,
        Hardware(
            gpu="a100-80gb-sxm4", gpus=32, gpus_per_node=8, inter_node={"kind": "ib", "gbps_per_node": 1600}
        ),
    )
    slow = estimate(
        job,
        Hardware(
            gpu="a100-80gb-sxm4",
            gpus=32,
            gpus_per_node=8,
            inter_node={"kind": "ethernet", "gbps_per_node": 25},
        ),
    )
    assert slow.tokens_per_s < 0.5 * fast.tokens_per_s
    assert slow.bound == "network"


def test_h100_faster_than_a100_but_lower_mfu():
    job = _train(sharding="zero1")
    a = estimate(job, gpu="a100-80gb-sxm4", gpus=8)
    h = estimate(job, gpu="h100-80gb-sxm5", gpus=8)
    assert h.tokens_per_s > 1.8 * a.tokens_per_s
    assert h.mfu < a.mfu


def test_power_cap_slows_compute():
    job = _train(sharding="zero1")
    full = estimate(job, Hardware(gpu="a100-80gb-sxm4", gpus=8))
    capped = estimate(job, Hardware(gpu="a100-80gb-sxm4", gpus=8, power_limit_w=250))
    assert capped.tokens_per_s < full.tokens_per_s * 0.9


def test_decode_is_bandwidth_bound_and_batches_help():
    one = estimate(_infer(batch=1), gpu="h100-80gb-sxm5", gpus=1)
    many = estimate(_infer(batch=64), gpu="h100-80gb-sxm5", gpus=1)
    assert one.bound == "memory"
    assert many.tokens_per_s > 20 * one.tokens_per_s
    assert many.latency["tpot_ms"] > one.latency["tpot_ms"]
    h200 = estimate(_infer(batch=1), gpu="h200-141gb-sxm", gpus=1)
    assert h200.latency["tpot_ms"] < one.latency["tpot_ms"]  # 4.8 vs 3.35 TB/s


def test_batch_max_fills_kv_cache():
    r = estimate(_infer(batch="max", model="llama-3.1-8b"), gpu="h100-80gb-sxm5", gpus=1)
    cap = r.capacity
    assert cap["max_batch"] == cap["max_kv_tokens"] // (512 + 256)
    assert r.memory.total <= 80 * GIB


def test_min_gpus_70b_and_none_for_impossible():
    job = {"kind": "infer", "model": "llama-2-70b", "precision": "bf16", "batch": 1}
    assert min_gpus(job, "a100-80gb-sxm4") == 2
    assert min_gpus(job, "h200-141gb-sxm") == 2  # 128.5 GiB of weights > 0.9 x 141
    assert min_gpus({**job, "gpu_memory_utilization": 0.95}, "h200-141gb-sxm") == 1
    huge = _train(model="llama-3.1-405b", sharding="none", tensor_parallel=1, pipeline_parallel=1)
    assert min_gpus(huge, "rtx-4090", gpus_per_node=8) is None


def test_checkpoint_bytes():
    p = load_job(_train()).arch.total_params
    assert checkpoint_bytes(_train()) == pytest.approx(14 * p)  # bf16 weights + fp32 master + 2 moments
    assert checkpoint_bytes(_train(method="lora")) < 0.05 * 16 * p


def test_compute_job():
    r = estimate(
        {"kind": "compute", "flops": 1e21, "precision": "fp64", "efficiency": 0.5},
        gpu="a100-80gb-sxm4",
        gpus=4,
    ).to_dict()
    assert r["time_hours"] == pytest.approx(1e21 / (4 * 19.5e12 * 0.5) / 3600)


def test_contract_keys_and_assumptions():
    r = estimate(_infer(), gpu="a100-80gb-sxm4", gpus=1).to_dict()
    assert set(r["memory"]) >= CONTRACT_MEMORY
    assert {"tokens_per_s", "tokens_per_s_per_gpu", "mfu", "bound"} <= set(r["throughput"])
    assert {"ttft_ms", "tpot_ms"} <= set(r["latency"]) and {"max_kv_tokens", "max_batch"} <= set(
        r["capacity"]
    )
    for k in ("gpu", "gpus", "fits", "min_gpus", "time_hours", "gpu_hours", "assumptions"):
        assert k in r
    assert any(a.startswith("gpu_memory_utilization") for a in r["assumptions"])
    json.dumps(r)


def test_estimate_is_fast():
    import time

    job = load_job(_train(model="llama-3-70b", sharding="zero3"))
    t0 = time.perf_counter()
    for n in (8, 16, 32, 64):
        estimate(job, Hardware(gpu="h100-80gb-sxm5", gpus=n, gpus_per_node=8))
    assert (time.perf_counter() - t0) / 4 < 0.05  # generous bound for CI; benchmarks/ measures < 1 ms


# ---- bad input ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "job,hw,pattern",
    [
        ({"kind": "infer", "model": "gpt-17"}, {"gpu": "a100-80gb-sxm4"}, r"model: unknown model"),
        (_infer(), {"gpu": "a999"}, r"gpu: unknown GPU"),
        (_infer(precision="fp7"), {"gpu": "a100-80gb-sxm4"}, r"precision: .*accepted: .*bf16"),
        (_infer(gpu_memory_utilization=1.5), {"gpu": "a100-80gb-sxm4"}, r"gpu_memory_utilization"),
        (
            _train(tensor_parallel=3),
            {"gpu": "a100-80gb-sxm4", "gpus": 3},
            r"tensor_parallel: 3 does not divide",
        ),
        (_train(bogus=1), {"gpu": "a100-80gb-sxm4"}, r"bogus: unknown field; accepted"),
    ],
)
def test_bad_input_one_line(job, hw, pattern):
    with pytest.raises(BadInput, match=pattern) as e:
        estimate(job, hw)
    assert "\n" not in str(e.value)


def test_fits_nowhere_is_bad_input():
    job = _train(model="llama-3.1-405b", sharding="none", tensor_parallel=1, pipeline_parallel=1)
    with pytest.raises(BadInput, match="fits on no count"):
        estimate(job, {"gpu": "rtx-4090"})


# ---- calibration ------------------------------------------------------------------------------------
def test_every_fitted_constant_names_its_cases(shared_dir):
    ids = {c["id"] for c in json.loads((shared_dir / "calibration" / "index.json").read_text())["cases"]}
    regimes = shared_dir / "calibration" / "regimes" / "index.json"  # the regime cases calibrate too
    ids |= {c["id"] for c in json.loads(regimes.read_text())["cases"]} if regimes.exists() else set()
    fitcases = Path(__file__).parent / "fixtures" / "fitcases" / "index.json"  # the project's own
    ids |= {c["id"] for c in json.loads(fitcases.read_text())["cases"]}
    for name, spec in calibration_table().items():
        assert spec.get("meaning"), name
        if spec["kind"] == "fitted":
            assert spec["cases"] and set(spec["cases"]) <= ids, name
        else:
            assert spec.get("source"), name


def test_calibration_medians_within_target(shared_dir):
    import statistics
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import accuracy

    cases = accuracy.load_cases(shared_dir)
    by_cat: dict[str, list[float]] = {}
    for c in cases:
        _, err, _ = accuracy.run_case(c)
        assert err is not None, c["id"]
        by_cat.setdefault(c["category"], []).append(abs(err))
    for cat, errs in by_cat.items():
        assert statistics.median(errs) <= 0.15, (cat, statistics.median(errs))
