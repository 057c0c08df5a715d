"""Benchmark `gpuquote plan`: latency on the embedded snapshot and on 10k / 100k / 1M synthetic offers.

Targets (issue 5): 10k offers < 100 ms, 1M < 2 s on a 2-core machine. The synthetic offers are drawn from
the GPUs and node shapes of the real snapshot (a few hundred distinct hardware configurations), with
random prices, providers and spot flags; the offer query is not timed, the planning is.
Run: python benchmarks/bench_plan.py [--job examples/jobs/lora-70b.yaml] [--runs 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def synthetic(real: list[dict], n: int, seed: int = 7) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        r = dict(rnd.choice(real))
        price = r["usd_per_node_hour"] * rnd.uniform(0.6, 1.6)
        r.update(offer_id=f"syn{i}", provider=f"p{rnd.randrange(200)}", usd_per_node_hour=price,
                 usd_per_gpu_hour=price / r["gpu_count"], spot=rnd.random() < 0.3,
                 price={**r["price"], "amount": price, "currency": "USD", "per": "hour", "term_months": None})
        out.append(r)
    return out


def synthetic_table(real: list[dict], n: int, seed: int = 7):
    """The same offers as `synthetic`, built as columns (as a columnar read from the store would give)."""
    import numpy as np

    from gpuquote.plan.table import OfferTable

    base = OfferTable.from_rows(real)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(real), n)
    factor = rng.uniform(0.6, 1.6, n)
    spot = rng.random(n) < 0.3
    prov = np.array([f"p{i}" for i in range(200)], dtype=object)[rng.integers(0, 200, n)]
    cols = {k: v[pick] for k, v in base.c.items()}
    cols["rate"] = cols["rate"] * factor
    cols["spot"], cols["provider"] = spot, prov
    cols["per_simple"] = np.ones(n, dtype=bool)

    def row(i: int) -> dict:
        r = dict(real[int(pick[i])])
        price = float(cols["rate"][i])
        r.update(offer_id=f"syn{i}", provider=str(prov[i]), usd_per_node_hour=price,
                 usd_per_gpu_hour=price / r["gpu_count"], spot=bool(spot[i]),
                 price={**r["price"], "amount": price, "currency": "USD", "per": "hour", "term_months": None})
        return r

    return OfferTable(cols, row)


def timed(fn, runs: int) -> float:
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--job", default=str(ROOT / "examples" / "jobs" / "lora-70b.yaml"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    args = ap.parse_args()

    from gpuquote.estimate import load_job
    from gpuquote.estimate.api import clear_caches
    from gpuquote.plan import PlanOptions, plan
    from gpuquote.service.plan import plan_job
    from gpuquote.store import OfferFilter, embedded_reader, query_offers

    job = load_job(args.job)
    import os

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall times below grow with it)")
    t = time.perf_counter()
    c0 = time.process_time()
    d = plan_job(args.job)
    first, cpu = time.perf_counter() - t, time.process_time() - c0
    print(f"job {Path(args.job).name}: first plan on the embedded snapshot ({d['candidates']} offers, "
          f"{d['configurations']} configurations, estimates not cached): {first:.3f} s")
    # the layout search runs once per configuration and node count; CPU time is immune to other load
    print(f"  per configuration (layout search + estimate, cold): {cpu / max(1, d['configurations']) * 1e3:.1f} ms "
          f"CPU ({cpu:.2f} s CPU in all)")
    print(f"  warm plan_job (query + plan + advice): median {timed(lambda: plan_job(args.job), args.runs):.3f} s")
    real, _ = query_offers(embedded_reader(), OfferFilter())
    real = [r for r in real if r["usd_per_node_hour"] and r["gpu_count"] >= 1 and r["gpu_exclusive"] is True
            and float(r["gpu_count"]).is_integer()]
    for n in [int(x) for x in args.sizes.split(",")]:
        target = "< 0.1 s" if n <= 10_000 else ("< 2 s" if n >= 1_000_000 else "-")
        table = synthetic_table(real, n)
        clear_caches()
        cold = timed(lambda table=table: plan(job, table, PlanOptions(top=10)), 1)
        warm = timed(lambda table=table: plan(job, table, PlanOptions(top=10)), args.runs)
        print(f"  {n:>9,} offers as columns: plan median {warm:.3f} s (estimates cached), first run {cold:.3f} s"
              f"  (target {target})")
        if n <= 100_000:
            rows = synthetic(real, n)
            warm = timed(lambda rows=rows: plan(job, rows, PlanOptions(top=10)), args.runs)
            print(f"  {n:>9,} offers as dict rows (what the store query returns): plan median {warm:.3f} s")


if __name__ == "__main__":
    main()
