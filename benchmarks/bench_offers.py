"""Benchmark `gpuquote offers`: cold start as a fresh process, and filter + sort over 1,000,000 offers.

Targets (issue 2): a cold `gpuquote offers --gpu a100-80gb` well under 0.5 s on a 2-core machine;
a filter + sort over a 1M-offer store under 1 s. Prints medians; machines are noisy.
Run: python benchmarks/bench_offers.py [--runs 7] [--offers 1000000] [--skip-big]

Side by side with SkyPilot (issue 14: >= 20x faster than `sky show-gpus A100-80GB` with its API server warm):
when `sky` is on PATH (`pip install skypilot`, then `sky api start` once, or let the first call start it), the
same number of cold `sky show-gpus A100-80GB` runs is timed after one unmeasured warm-up call, interleaved with
the gpuquote runs, and the ratio of the medians is printed. Without `sky` the line says so.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def cold_start(runs: int) -> list[float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), GPUQUOTE_HOME=tempfile.mkdtemp())
    env.pop("GPUQUOTE_DB", None)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gpuquote", "offers", "--gpu", "a100-80gb"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return times


def side_by_side(runs: int) -> None:
    """Interleaved runs of `gpuquote offers --gpu a100-80gb` and `sky show-gpus A100-80GB` (API server warm)."""
    import shutil

    sky = shutil.which("sky")
    if sky is None:
        print("sky (SkyPilot) is not installed: no side-by-side ratio; pip install skypilot to measure it")
        return
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), GPUQUOTE_HOME=tempfile.mkdtemp())
    env.pop("GPUQUOTE_DB", None)
    sky_cmd = [sky, "show-gpus", "A100-80GB"]
    subprocess.run(sky_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)  # starts the server
    ours, theirs = [], []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gpuquote", "offers", "--gpu", "a100-80gb"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        subprocess.run(sky_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        theirs.append(time.perf_counter() - t)
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"side by side, {runs} interleaved runs: gpuquote offers --gpu a100-80gb median {a:.3f} s; "
          f"sky show-gpus A100-80GB (API server warm) median {b:.3f} s; ratio {b / a:.1f}x "
          f"(target >= 20x: {'PASS' if b / a >= 20 else 'MISS'})")


def synthetic_store(path: Path, n: int) -> None:
    """A real gpuquote store (same schema) holding n offers in one snapshot."""
    os.environ["GPUQUOTE_DB"] = str(path)
    from gpuquote.store import write_engine

    write_engine(seed=False).dispose()
    import sqlite3

    from gpuquote.hardware import group_ids

    gpus = group_ids()
    providers = [f"p{i}" for i in range(40)]
    rnd = random.Random(42)
    now = datetime.now(UTC).isoformat()
    con = sqlite3.connect(path)
    con.execute("INSERT INTO snapshots (id, source, status, fetched_at, imported_at, offers_count, repaired,"
                " skipped) VALUES (1, 'synthetic', 'good', ?, ?, ?, 0, 0)", (now, now, n))
    con.execute("INSERT INTO current (source, snapshot_id) VALUES ('synthetic', 1)")
    cols = ("snapshot_id, is_current, offer_id, provider, region, sku, gpu_id, gpu_count, gpu_exclusive, form_factor,"
            " intra_node, inter_node_kind, price_amount, price_currency, price_per, spot, covers, extras, source,"
            " fetched_at, usd_per_gpu_hour, usd_per_node_hour, notes")

    def rows():
        for i in range(n):
            c = rnd.choice((1, 2, 4, 8))
            p = round(rnd.uniform(0.2, 12.0), 4)
            yield (1, 1, f"o{i}", rnd.choice(providers), f"region-{rnd.randrange(60)}", f"sku{i % 5000}",
                   rnd.choice(gpus), c, "true", "sxm", rnd.choice(("nvswitch", "pcie", "none", "unknown")),
                   "unknown", p * c, "USD", "hour", rnd.random() < 0.3, "[]", "{}", "synthetic", now, p, p * c, "[]")

    con.executemany(f"INSERT INTO offers ({cols}) VALUES ({', '.join('?' * 23)})", rows())
    con.commit()
    con.execute("ANALYZE")  # as every gpuquote import does
    con.close()


def query_times(runs: int) -> dict[str, list[float]]:
    from gpuquote.service.offers import list_offers

    cases = {
        "--gpu a100-80gb (sort price, 50 rows)": dict(gpu="a100-80gb", limit=50),
        "--gpu h100 --min-gpus 8 --interconnect nvswitch --no-spot (all rows)":
            dict(gpu="h100", min_gpus=8, interconnect="nvswitch", spot=False),
        "no filter, --sort provider (50 rows)": dict(sort="provider", limit=50),
        "--max-price-usd 1.0 (all rows)": dict(max_price_usd=1.0),
    }
    out = {}
    for name, kw in cases.items():
        ts = []
        for _ in range(runs):
            t = time.perf_counter()
            d = list_offers(**kw)
            ts.append(time.perf_counter() - t)
        out[f"{name}: {d['count']} matches"] = ts
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--offers", type=int, default=1_000_000)
    ap.add_argument("--skip-big", action="store_true", help="only the cold start (and the SkyPilot ratio)")
    args = ap.parse_args()
    ts = cold_start(args.runs)
    t0 = time.perf_counter()
    for _ in range(args.runs):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = (time.perf_counter() - t0) / args.runs
    print(f"cold `gpuquote offers --gpu a100-80gb` (embedded snapshot), {args.runs} runs: "
          f"median {statistics.median(ts):.3f} s, min {min(ts):.3f} s  (target < 0.5 s; "
          f"a bare `python -c pass` takes {bare:.3f} s here)")
    side_by_side(args.runs)
    if args.skip_big:
        return
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "big.sqlite"
        t = time.perf_counter()
        synthetic_store(path, args.offers)
        print(f"built a synthetic store of {args.offers:,} offers in {time.perf_counter() - t:.1f} s")
        for name, ts in query_times(max(3, args.runs // 2)).items():
            print(f"  {name}: median {statistics.median(ts):.3f} s  (target < 1 s)")


if __name__ == "__main__":
    main()
