"""SIGKILL `gpuquote import` mid-write N times; the store must stay readable with a good snapshot current.

Usage: python benchmarks/kill_import.py [--runs 20] [--offers 40000] [--seed 1]
Builds a large vast.ai response, imports it once (the last good snapshot), then starts the real CLI
import of a slightly re-priced copy and kills it with SIGKILL at a random moment, `runs` times.
After each kill it opens the store afresh and checks: SQLite integrity_check is "ok", no
half-written snapshot exists, `current` for the source points at a `good` snapshot whose stored
offer count equals its recorded count. Exit 1 on the first violation.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GPUS = [("H100 SXM", 81559, 8), ("A100 SXM4", 81920, 4), ("A100 PCIE", 40960, 2), ("RTX 4090", 24564, 1),
        ("L40S", 46068, 1), ("H100 PCIE", 81559, 1)]


def make_response(path: Path, n: int, factor: float, seed: int) -> None:
    rng = random.Random(seed)
    offers = []
    for i in range(n):
        name, ram, count = GPUS[i % len(GPUS)]
        base = {"H100 SXM": 2.0, "A100 SXM4": 1.2, "A100 PCIE": 0.8, "RTX 4090": 0.4, "L40S": 0.9,
                "H100 PCIE": 2.3}[name]
        price = round(count * base * rng.uniform(0.8, 1.2) * factor, 4)
        offers.append({"id": 10_000_000 + i, "num_gpus": count, "gpu_name": name, "gpu_ram": ram,
                       "dph_total": price, "min_bid": round(price * 0.6, 4), "cpu_cores_effective": 16.0,
                       "cpu_ram": 128000, "geolocation": rng.choice(["Texas, US", "Oslo, NO", "Quebec, CA"]),
                       "bw_nvlink": 300.0 if count > 1 else 0.0, "rentable": True, "rented": False})
    path.write_text(json.dumps({"offers": offers}))


def check_store(db: Path, source: str) -> tuple[int, str]:
    con = sqlite3.connect(db)  # a normal connection: rolls back a hot journal left by the killed writer
    try:
        ok = con.execute("PRAGMA integrity_check").fetchone()[0]
        if ok != "ok":
            raise AssertionError(f"integrity_check: {ok}")
        half = con.execute("SELECT COUNT(*) FROM snapshots WHERE status NOT IN ('good', 'refused')").fetchone()[0]
        if half:
            raise AssertionError(f"{half} half-written snapshot(s) visible")
        row = con.execute("SELECT s.id, s.status, s.offers_count FROM current c JOIN snapshots s "
                          "ON s.id = c.snapshot_id WHERE c.source = ?", (source,)).fetchone()
        if row is None or row[1] != "good":
            raise AssertionError(f"current snapshot of {source} is {row}")
        stored = con.execute("SELECT COUNT(*) FROM offers WHERE snapshot_id = ?", (row[0],)).fetchone()[0]
        if stored != row[2]:
            raise AssertionError(f"snapshot {row[0]}: {stored} offers stored, {row[2]} recorded")
        return row[0], row[1]
    finally:
        con.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--offers", type=int, default=40000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="gq-kill-") as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, GPUQUOTE_HOME=str(tmp / "home"), PYTHONPATH=str(ROOT / "src"), GPUQUOTE_LANG="en")
        env.pop("GPUQUOTE_DB", None)
        cmd = [sys.executable, "-m", "gpuquote", "import", "vast"]
        base, variant = tmp / "base.json", tmp / "variant.json"
        make_response(base, args.offers, 1.0, args.seed)
        make_response(variant, args.offers, 1.05, args.seed + 1)
        t0 = time.perf_counter()
        subprocess.run([*cmd, str(base), "--json"], env=env, check=True, capture_output=True)
        full = time.perf_counter() - t0
        db = tmp / "home" / "gpuquote.sqlite"
        good, _ = check_store(db, "vast")
        print(f"baseline import of {args.offers} asks: {full:.2f} s, snapshot {good}")
        committed = 0
        for i in range(args.runs):
            delay = rng.uniform(0.3, max(0.35, full * 1.1))
            p = subprocess.Popen([*cmd, str(variant), "--force"], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            p.wait()
            sid, status = check_store(db, "vast")
            finished = sid != good
            committed += finished
            good = sid
            print(f"run {i + 1:2d}: killed after {delay:.2f} s -> current snapshot {sid} ({status}"
                  f"{', the killed import had committed' if finished else ', last good kept'})")
        print(f"OK: {args.runs} SIGKILLs, store readable every time; {committed} imports had committed before the kill")
    return 0


if __name__ == "__main__":
    sys.exit(main())
