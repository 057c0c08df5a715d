"""Hold-out accuracy: published measurements that no constant was fitted on (tests/fixtures/holdout).

Runs every case through benchmarks/accuracy.py (the same `estimate_job` path as the calibration harness)
and bounds the median absolute error per category. Tolerances, and why:

* 25% for train_throughput_mfu, finetune_peak_memory, inference_throughput and inference_latency:
  measured medians 8-16% on 4-7 cases each; 25% leaves room for one case moving without hiding a
  systematic regression (the calibration's in-sample target is 15%).
* 35% for train_gpu_hours and kv_cache_capacity: 4 and 2 cases, each with one outlier whose cause the
  job contract cannot carry (Llama 3.1 8B's card hours imply 14% MFU; vLLM's TP4 profiling reserves
  ~14 GiB/GPU outside the allocator), so the median sits at 27-32% today.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "tests" / "fixtures" / "holdout" / "index.json"
TOLERANCE = {
    "train_throughput_mfu": 0.25,
    "finetune_peak_memory": 0.25,
    "inference_throughput": 0.25,
    "inference_latency": 0.25,
    "train_gpu_hours": 0.35,
    "kv_cache_capacity": 0.35,
}


def _accuracy():
    spec = importlib.util.spec_from_file_location("accuracy", ROOT / "benchmarks" / "accuracy.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def accuracy():
    return _accuracy()


def test_holdout_index_is_sourced_and_disjoint_from_calibration(accuracy):
    idx = json.loads(INDEX.read_text())
    cases = idx["cases"]
    assert len(cases) >= 10
    assert set(TOLERANCE) == {c["category"] for c in cases}
    calib_ids = {c["id"] for c in accuracy.load_cases(accuracy.find_shared())}
    for c in cases:
        assert c["id"] not in calib_ids, c["id"]
        assert c["source"]["url"].startswith("https://"), c["id"]
        assert (INDEX.parent / c["file"]).read_text().startswith("# Source: "), c["id"]
        assert c["published"]["value"] > 0 and c["convert"] > 0


def test_every_holdout_case_runs_through_the_harness(accuracy):
    for c in accuracy.load_index(INDEX):
        est, err, note = accuracy.run_case(c)
        assert est is not None and math.isfinite(est) and est > 0, (c["id"], note)


def test_holdout_median_error_per_category_within_tolerance(accuracy):
    summary = accuracy.category_medians(accuracy.load_index(INDEX))
    for cat, tol in TOLERANCE.items():
        assert summary[cat]["n"] >= 2, cat
        assert summary[cat]["median_abs_err"] <= tol, (cat, summary[cat]["median_abs_err"], tol)
