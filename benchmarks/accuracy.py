"""Accuracy of `gpuquote estimate` against the published cases in shared/calibration/index.json.

    python benchmarks/accuracy.py            # per case and per category errors
    python benchmarks/accuracy.py --loo      # + leave-one-out: refit each fitted constant without the case
    python benchmarks/accuracy.py --fit      # fit the constants marked `fitted` in data/calibration.yaml
    python benchmarks/accuracy.py --holdout  # + the hold-out cases (tests/fixtures/holdout), never used for fitting

The regime cases (shared/calibration/regimes/index.json: PCIe vs SXM, thin networks, consumer GPUs,
AMD, TP over PCIe, serving under load) run every time, with a median error per `regime`; a regime
case may be listed among a fitted constant's cases, and then --loo refits without it as well.

Every case runs through gpuquote.service.estimate.estimate_job, the function behind the CLI.
Error = (estimate x convert - published) / published; an upper (lower) bound counts only when broken.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gpuquote.errors import GpuquoteError  # noqa: E402
from gpuquote.estimate import load_job  # noqa: E402
from gpuquote.estimate.accuracy import case_engine  # noqa: E402
from gpuquote.estimate.constants import calibration_table, override  # noqa: E402
from gpuquote.service.estimate import estimate_job  # noqa: E402


def find_shared() -> Path:
    for cand in (os.environ.get("GPUQUOTE_SHARED"), ROOT.parent / "shared", Path("/work/shared")):
        if cand and (Path(cand) / "calibration" / "index.json").exists():
            return Path(cand)
    sys.exit("shared/calibration/index.json not found (set GPUQUOTE_SHARED)")


HOLDOUT_INDEX = ROOT / "tests" / "fixtures" / "holdout" / "index.json"
FITCASES_INDEX = ROOT / "tests" / "fixtures" / "fitcases" / "index.json"  # the project's own fitted-on cases


def load_index(index: Path) -> list[dict]:
    """Expressible cases of an index.json (calibration or hold-out), each with the absolute job path."""
    idx = json.loads(index.read_text())
    cases = [c for c in idx["cases"] if c.get("expressible", True)]
    for c in cases:
        c["path"] = index.parent / c["file"]
    return cases


def load_cases(shared: Path) -> list[dict]:
    return load_index(shared / "calibration" / "index.json")


def load_regimes(shared: Path) -> list[dict]:
    """The regime cases (same format as index.json plus `regime`); empty if the folder is absent."""
    index = shared / "calibration" / "regimes" / "index.json"
    return load_index(index) if index.exists() else []


def category_medians(cases: list[dict]) -> dict[str, dict]:
    """Per category: n, median absolute error, share within ±25%, and the per-case errors (no printing)."""
    by_cat: dict[str, list[float]] = {}
    for c in cases:
        _, err, _ = run_case(c)
        by_cat.setdefault(c["category"], []).append(abs(err) if err is not None else math.inf)
    return {
        cat: {"n": len(e), "median_abs_err": statistics.median(e), "within_25": sum(x <= 0.25 for x in e) / len(e)}
        for cat, e in by_cat.items()
    }


def _get(d: dict, path: str) -> float | None:
    for part in path.split("."):
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return d if isinstance(d, int | float) else None


def run_case(case: dict) -> tuple[float | None, float | None, str]:
    """(estimate in published units, signed error, note)."""
    try:  # each inference case on the engine its source names (calibration.yaml engine_cases)
        out = estimate_job(load_job(case["path"], engine=case_engine(case["id"])))
    except GpuquoteError as e:
        return None, None, f"error: {e}"
    v = _get(out, case["metric_path"])
    if v is None:
        return None, None, f"no {case['metric_path']}"
    est = v * case["convert"]
    pub = float(case["published"]["value"])
    err = (est - pub) / pub
    cmp_ = case.get("comparison", "value")
    if cmp_ == "upper_bound":
        err = max(0.0, err)
    elif cmp_ == "lower_bound":
        err = min(0.0, err)
    return est, err, cmp_


def loss(cases: list[dict]) -> float:
    total = 0.0
    for c in cases:
        est, err, _ = run_case(c)
        if err is None:
            total += 5.0
        else:
            total += abs(math.log1p(max(err, -0.99)))
    return total


def fitted_constants() -> dict[str, dict]:
    return {k: v for k, v in calibration_table().items() if v.get("kind") == "fitted"}


def _scalar_keys(name: str, value) -> list[tuple[str, str | None]]:
    if isinstance(value, dict):
        return [(name, k) for k in value]
    return [(name, None)]


def fit(
    cases_by_id: dict[str, dict], exclude: str | None = None, rounds: int = 2, only: set[str] | None = None
) -> dict:
    """Coordinate descent (golden-section in log space) on each fitted constant over its listed cases."""
    vals = {
        k: (dict(v["value"]) if isinstance(v["value"], dict) else v["value"])
        for k, v in fitted_constants().items()
    }
    for _ in range(rounds):
        for name, spec in fitted_constants().items():
            if only is not None and name not in only:
                continue
            ids = [i for i in spec.get("cases", []) if i in cases_by_id and i != exclude]
            if not ids:
                continue
            subset = [cases_by_id[i] for i in ids]
            keys = [None] if not isinstance(vals[name], dict) else spec.get("fit_keys", list(vals[name]))
            for key in keys:
                cur = vals[name] if key is None else vals[name][key]
                if isinstance(cur, int) and not isinstance(cur, bool):
                    cur = float(cur)

                def f(x: float, name=name, key=key, subset=subset) -> float:
                    trial = dict(vals)
                    if key is None:
                        trial[name] = x
                    else:
                        trial[name] = {**vals[name], key: x}
                    with override(**trial):
                        return loss(subset)

                lo, hi = math.log(cur / 3), math.log(cur * 3)
                if (
                    name in ("goodput", "hbm_efficiency", "comm_overlap", "allocator_overhead")
                    or name == "quantized_bw_factor"
                ):
                    hi = min(hi, 0.0)
                gr = (math.sqrt(5) - 1) / 2
                a, b = lo, hi
                c_, d_ = b - gr * (b - a), a + gr * (b - a)
                fc, fd = f(math.exp(c_)), f(math.exp(d_))
                for _ in range(18):
                    if fc < fd:
                        b, d_, fd = d_, c_, fc
                        c_ = b - gr * (b - a)
                        fc = f(math.exp(c_))
                    else:
                        a, c_, fc = c_, d_, fd
                        d_ = a + gr * (b - a)
                        fd = f(math.exp(d_))
                best = math.exp((a + b) / 2)
                if f(best) > f(cur):
                    best = cur
                if key is None:
                    vals[name] = round(best, 4)
                else:
                    vals[name][key] = round(best, 4)
    return vals


def report(
    cases: list[dict], loo: dict[str, float | None] | None = None, group: str = "category"
) -> dict[str, dict]:
    by_cat: dict[str, list[float]] = {}
    by_cat_loo: dict[str, list[float]] = {}
    print(
        f"{'case':44s} {'category':22s} {'published':>12s} {'estimated':>12s} {'error':>8s}"
        + ("  LOO err" if loo is not None else "")
    )
    for c in cases:
        est, err, note = run_case(c)
        pub = c["published"]["value"]
        cat = c[group]
        by_cat.setdefault(cat, []).append(abs(err) if err is not None else math.inf)
        line = f"{c['id']:44s} {cat:22s} {pub:12.5g} {est if est is not None else float('nan'):12.5g} "
        line += f"{err * 100 if err is not None else float('nan'):+7.1f}%"
        if note not in ("value",):
            line += f" ({note})"
        if loo is not None:
            le = loo.get(c["id"])
            if le is None:
                le = err
            by_cat_loo.setdefault(cat, []).append(abs(le) if le is not None else math.inf)
            line += f"  {le * 100 if le is not None else float('nan'):+7.1f}%"
        print(line)
    print()
    print(
        f"{group:24s} {'n':>3s} {'median |err|':>13s} {'within ±25%':>12s}"
        + (f" {'LOO median':>11s} {'LOO ±25%':>9s}" if loo is not None else "")
    )
    summary = {}
    for cat, errs in by_cat.items():
        med = statistics.median(errs)
        share = sum(e <= 0.25 for e in errs) / len(errs)
        line = f"{cat:24s} {len(errs):3d} {med * 100:12.1f}% {share * 100:11.0f}%"
        summary[cat] = {"n": len(errs), "median_abs_err": med, "within_25": share}
        if loo is not None:
            le = by_cat_loo[cat]
            lmed = statistics.median(le)
            line += f" {lmed * 100:10.1f}% {sum(e <= 0.25 for e in le) / len(le) * 100:8.0f}%"
            summary[cat].update(loo_median_abs_err=lmed)
        print(line)
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--loo", action="store_true", help="leave-one-out errors (refits per case; slower)")
    ap.add_argument("--fit", action="store_true", help="fit the `fitted` constants and print them")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON at the end")
    ap.add_argument("--holdout", action="store_true", help="also run the hold-out cases and compare per category")
    args = ap.parse_args()
    shared = find_shared()
    cases = load_cases(shared)
    regimes = load_regimes(shared)
    by_id = {c["id"]: c for c in [*cases, *regimes, *load_index(FITCASES_INDEX)]}
    if args.fit:
        vals = fit(by_id)
        print("fitted constants:")
        for k, v in vals.items():
            print(f"  {k}: {v}")
        with override(**vals):
            report(cases)
            if regimes:
                print("\n== regime cases (shared/calibration/regimes) ==")
                report(regimes, group="regime")
        return
    loo = None
    if args.loo:
        loo = {}
        fitted = fitted_constants()
        for c in [*cases, *regimes]:
            owners = {k for k, v in fitted.items() if c["id"] in v.get("cases", [])}
            if not owners:
                continue
            vals = fit(by_id, exclude=c["id"], rounds=1, only=owners)
            with override(**vals):
                loo[c["id"]] = run_case(c)[1]
    summary = report(cases, loo)
    if regimes:
        print("\n== regime cases (shared/calibration/regimes; median per regime) ==")
        by_regime = report(regimes, loo, group="regime")
    else:
        by_regime = {}
    if args.holdout:
        print("\n== hold-out cases (tests/fixtures/holdout; not used by --fit) ==")
        held = report(load_index(HOLDOUT_INDEX))
        print(f"\n{'category':24s} {'calib n':>7s} {'calib median':>13s} {'hold-out n':>10s} {'hold-out median':>16s}")
        for cat in sorted(set(summary) | set(held)):
            c, h = summary.get(cat), held.get(cat)
            line = f"{cat:24s} "
            line += f"{c['n']:7d} {c['median_abs_err'] * 100:12.1f}% " if c else f"{'-':>7s} {'-':>13s} "
            line += f"{h['n']:10d} {h['median_abs_err'] * 100:15.1f}%" if h else f"{'-':>10s} {'-':>16s}"
            print(line)
        summary = {"calibration": summary, "holdout": held}
    if by_regime:
        summary = {**summary, "regimes": by_regime}  # a key added beside the categories (or calibration/holdout)
    if args.json:
        print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
