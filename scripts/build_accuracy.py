"""Write src/gpuquote/data/accuracy_cases.json: every published case's error, shipped with the package.

    python scripts/build_accuracy.py            # central errors + leave-one-out for fitted cases (slow)
    python scripts/build_accuracy.py --no-loo   # central errors only (loo_error = error)
    python scripts/build_accuracy.py --check    # exit 1 if the file differs from the estimator now
    python scripts/build_accuracy.py --summary  # print medians per regime / category

Runs each case of shared/calibration/index.json, shared/calibration/regimes/index.json and
tests/fixtures/holdout/index.json through the estimator (each inference case on the engine its
source names: `engine_cases` in data/calibration.yaml). Leave-one-out refits the fitted constants
that list a case without it (benchmarks/accuracy.py's fitter) and records that error; hold-out cases
are never fitted, so theirs is the central error. The estimate's `accuracy` band reads this file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import accuracy as bench  # noqa: E402

from gpuquote.errors import GpuquoteError  # noqa: E402
from gpuquote.estimate import load_job  # noqa: E402
from gpuquote.estimate.accuracy import case_engine, interconnect_class, workload_kind  # noqa: E402
from gpuquote.estimate.constants import override  # noqa: E402
from gpuquote.hardware import get_gpu  # noqa: E402
from gpuquote.service.estimate import estimate_job  # noqa: E402

OUT = ROOT / "src" / "gpuquote" / "data" / "accuracy_cases.json"


run_case = bench.run_case  # runs each inference case on its engine (engine_cases)


def all_cases() -> list[dict]:
    shared = bench.find_shared()
    out = []
    for name, index in (
        ("calibration", shared / "calibration" / "index.json"),
        ("regimes", shared / "calibration" / "regimes" / "index.json"),
        ("holdout", bench.HOLDOUT_INDEX),
    ):
        for c in bench.load_index(index):
            c["set"] = name
            out.append(c)
    return out


def _source(case: dict) -> str:
    s = case.get("source")
    if isinstance(s, dict) and s.get("title"):
        return str(s["title"])
    head = Path(case["path"]).read_text(encoding="utf-8").splitlines()[:1]
    return head[0].removeprefix("# Source:").strip() if head and head[0].startswith("# Source:") else ""


def describe(case: dict) -> dict:
    """The case's neighbourhood keys: GPU family, interconnect class, workload kind."""
    job = load_job(case["path"])
    hw = job.hardware
    gpu = get_gpu(hw.gpu if hw and hw.gpu else "a100-80gb-sxm4")
    try:
        out = estimate_job(load_job(case["path"], engine=case_engine(case["id"])))
        shape = out.get("shape")
        gpus = shape["tp"] * shape["pp"] if shape else int(out["gpus"])
        nodes = int(out["nodes"]) if not shape else -(-gpus // ((hw.gpus_per_node if hw else None) or 8))
    except GpuquoteError:
        gpus, nodes = (hw.gpus or 1) if hw else 1, 1
    intra = (hw.intra_node if hw else None) or ("nvswitch" if gpu.form_factor in ("sxm", "oam") else "pcie")
    inter = hw.inter_node.kind if hw and hw.inter_node else ("ib" if gpu.form_factor == "sxm" else "ethernet")
    return {
        "gpu": gpu.id,
        "gpu_family": gpu.family,
        "interconnect": interconnect_class(gpus, nodes, intra, inter),
        "workload": workload_kind(job.kind, job.method),
    }


#: What a constant falls back to when the remaining cases say nothing about it (leave-one-out of the only
#: case that informs it): the reference engine, no host overhead, no PCIe surcharge.
PRIORS: dict[tuple[str, str | None], float] = {
    **{("engine_efficiency", e): 1.0 for e in ("vllm", "tgi", "llama.cpp", "sglang")},
    ("engine_seq_step_us", "tgi"): 0.0,
    ("pcie_allreduce_latency_us", None): 0.0,
}


def _set(vals: dict, name: str, key: str | None, x: float) -> dict:
    out = dict(vals)
    out[name] = x if key is None else {**vals[name], key: x}
    return out


def loo_values(fitting: dict[str, dict], exclude: str, owners: set[str]) -> dict:
    """Refit the constants fitted on `exclude` without it; a key the other cases do not move (a flat
    loss) takes its prior (PRIORS) or keeps its value, instead of the fitter's arbitrary midpoint."""
    fitted = bench.fitted_constants()
    vals = bench.fit(fitting, exclude=exclude, rounds=1, only=owners)
    for name in owners:
        spec = fitted[name]
        subset = [fitting[i] for i in spec.get("cases", []) if i in fitting and i != exclude]
        cur = spec["value"]
        keys = [None] if not isinstance(cur, dict) else spec.get("fit_keys", list(cur))
        for key in keys:
            x = vals[name] if key is None else vals[name][key]
            with override(**vals):
                here = bench.loss(subset)
            with override(**_set(vals, name, key, x * 1.5 if x else 1.0)):
                there = bench.loss(subset)
            if abs(here - there) < 1e-9:
                prior = PRIORS.get((name, key), cur if key is None else cur[key])
                vals = _set(vals, name, key, prior)
    return vals


def build(loo: bool) -> dict:
    cases = all_cases()
    fitting = {c["id"]: c for c in cases if c["set"] != "holdout"}
    fitted = bench.fitted_constants()
    rows = []
    for c in cases:
        _, err, note = run_case(c)
        loo_err = err
        if loo and c["set"] != "holdout":
            owners = {k for k, v in fitted.items() if c["id"] in v.get("cases", [])}
            if owners:
                vals = loo_values(fitting, c["id"], owners)
                with override(**vals):
                    loo_err = run_case(c)[1]
        rows.append(
            {
                "id": c["id"],
                "set": c["set"],
                **describe(c),
                "category": c["category"],
                "regime": c.get("regime"),
                "engine": case_engine(c["id"]),
                "error": None if err is None else round(err, 4),
                "loo_error": None if loo_err is None else round(loo_err, 4),
                "note": note if note not in ("value",) else None,
                "source": _source(c),
            }
        )
    return {
        "about": "Per-case errors of gpuquote estimate on the published cases (scripts/build_accuracy.py); "
        "error = (estimate - published) / published, loo_error refits the constants fitted on the case "
        "without it. The estimate's `accuracy` band is computed from these.",
        "cases": rows,
    }


def summary(doc: dict) -> None:
    groups: dict[str, list[tuple[float, float]]] = {}
    for r in doc["cases"]:
        key = f"{r['set']}:{r['regime'] or r['category']}"
        e, le = r["error"], r["loo_error"]
        groups.setdefault(key, []).append((abs(e) if e is not None else 9.99, abs(le) if le is not None else 9.99))
        if (
            r["set"] == "regimes"
            and r["category"].startswith("inference")
            and r["regime"]
            not in (
                "e_tp_over_pcie",
                "f_serving_load",
            )
        ):
            groups.setdefault("regimes:other-regime inference", []).append(groups[key][-1])
    print(f"{'group':48s} {'n':>3s} {'median':>8s} {'LOO median':>11s}")
    for k in sorted(groups):
        v = groups[k]
        print(
            f"{k:48s} {len(v):3d} {statistics.median(x for x, _ in v) * 100:7.1f}% "
            f"{statistics.median(y for _, y in v) * 100:10.1f}%"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-loo", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args()
    if args.check:
        have = json.loads(OUT.read_text(encoding="utf-8"))
        now = build(loo=False)
        stale = [
            r["id"]
            for r, n in zip(have["cases"], now["cases"], strict=False)
            if r["id"] != n["id"] or r["error"] != n["error"]
        ]
        if stale or len(have["cases"]) != len(now["cases"]):
            sys.exit(f"accuracy_cases.json is out of date ({len(stale)} cases differ): run scripts/build_accuracy.py")
        print("accuracy_cases.json is up to date")
        return
    doc = build(loo=not args.no_loo)
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(doc['cases'])} cases)")
    if args.summary:
        summary(doc)


if __name__ == "__main__":
    main()
