"""The error band of an estimate, from the published cases nearest to it.

Every published case (shared/calibration, its regimes, the project's hold-out) was run through the
estimator by scripts/build_accuracy.py; data/accuracy_cases.json ships each one's GPU family,
interconnect class, workload kind and leave-one-out error, so users get the band without the cases.
The band is the 80th-percentile |error| of the nearest group: same family, interconnect and kind;
else same family and kind; else no published measurement, and the band is the kind's across other
GPUs, doubled (at least NO_CASE_FLOOR_PCT), with a basis that says so.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache

from gpuquote.config import DATA_DIR
from gpuquote.i18n import Msg

#: Categories whose error is a time / throughput error (memory and KV-capacity cases are not).
TIME_CATEGORIES = (
    "train_wallclock",
    "train_throughput_mfu",
    "train_gpu_hours",
    "inference_throughput",
    "inference_latency",
)
MIN_BAND_PCT = 10.0
NO_CASE_FLOOR_PCT = 50.0


@lru_cache(maxsize=1)
def accuracy_cases() -> list[dict]:
    """The shipped per-case errors (empty if the file is missing)."""
    path = DATA_DIR / "accuracy_cases.json"
    if not path.exists():
        return []
    return json.loads(path.read_text(encoding="utf-8"))["cases"]


def case_engine(case_id: str) -> str | None:
    """The engine a published inference case ran on, as its source names it (calibration.yaml engine_cases)."""
    from gpuquote.estimate.constants import K

    for eng, ids in K.engine_cases.items():
        if case_id in ids:
            return eng
    return None


def workload_kind(kind: str, method: str | None) -> str:
    """train (pretrain/full), finetune (LoRA/QLoRA), infer or compute."""
    if kind == "train":
        return "finetune" if method in ("lora", "qlora") else "train"
    return kind


def interconnect_class(gpus: int, nodes: int, intra: str, inter_kind: str) -> str:
    """single | nvlink | pcie (one node) | rdma | ethernet (several nodes)."""
    if gpus <= 1:
        return "single"
    if nodes > 1:
        return "rdma" if inter_kind in ("ib", "roce", "omnipath") else "ethernet"
    return "nvlink" if intra in ("nvswitch", "nvlink") else "pcie"


def _p80(errs: list[float]) -> float:
    s = sorted(errs)
    return s[min(len(s) - 1, max(0, math.ceil(0.8 * len(s)) - 1))]


def band(family: str, gpu: str, kind: str, interconnect: str) -> dict:
    """{band_pct, cases, basis, measured}: the estimate's likely error, from the nearest published cases."""
    pool = [c for c in accuracy_cases() if c["category"] in TIME_CATEGORIES and c["workload"] == kind]

    def err(c: dict) -> float:
        e = c["loo_error"] if c.get("loo_error") is not None else c["error"]
        return abs(e) * 100.0 if e is not None else 500.0

    exact = [c for c in pool if c["gpu_family"] == family and c["interconnect"] == interconnect]
    same = [c for c in pool if c["gpu_family"] == family]
    if len(exact) >= 2:
        chosen, basis = exact, Msg("est.acc.exact", n=len(exact), kind=kind, family=family, ic=interconnect)
        pct, measured = _p80([err(c) for c in chosen]), True
    elif same:
        chosen = same
        basis = Msg("est.acc.family", n=len(same), kind=kind, family=family, ic=interconnect)
        pct, measured = _p80([err(c) for c in chosen]), True
    else:
        chosen = pool
        pct = max(NO_CASE_FLOOR_PCT, 2.0 * _p80([err(c) for c in pool])) if pool else 100.0
        basis = Msg("est.acc.none", gpu=gpu, kind=kind, n=len(pool))
        measured = False
    return {
        "band_pct": round(max(MIN_BAND_PCT, pct), 0),
        "cases": sorted(c["id"] for c in chosen) if measured else [],
        "basis": basis,
        "measured": measured,
        "workload": kind,
    }
