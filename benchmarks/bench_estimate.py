"""Speed of one estimate per (job, GPU type, count, interconnect) configuration, as the planner calls it.

    python benchmarks/bench_estimate.py

Prints the median wall time per configuration for a cold call (caches cleared: the layout search
and min_gpus run in full) and a warm call (the result cache answers), per job kind.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gpuquote.estimate import Hardware, clear_caches, estimate, load_job  # noqa: E402

GPUS = ["a100-80gb-sxm4", "a100-80gb-pcie", "h100-80gb-sxm5", "h200-141gb-sxm", "l40s", "mi300x"]
COUNTS = [1, 2, 4, 8, 16, 32, 64]
LINKS = [("nvswitch", "ib", 1600.0), ("pcie", "ethernet", 100.0)]


def configs() -> list[Hardware]:
    out = []
    for g in GPUS:
        for n in COUNTS:
            for intra, kind, gbps in LINKS:
                out.append(Hardware(gpu=g, gpus=n, gpus_per_node=8, intra_node=intra,
                                    inter_node={"kind": kind, "gbps_per_node": gbps}))
    return out


def bench(job_path: Path, hws: list[Hardware]) -> tuple[float, float, int]:
    job = load_job(job_path)
    cold, warm, ok = [], [], 0
    for hw in hws:
        clear_caches()
        t0 = time.perf_counter()
        try:
            estimate(job, hw)
            ok += 1
        except Exception:  # noqa: BLE001 - refusals (e.g. fp8 on A100) are answers too
            pass
        t1 = time.perf_counter()
        with contextlib.suppress(Exception):
            estimate(job, hw)
        t2 = time.perf_counter()
        cold.append(t1 - t0)
        warm.append(t2 - t1)
    return statistics.median(cold), statistics.median(warm), ok


def main() -> None:
    hws = configs()
    print(f"{len(hws)} configurations per job ({len(GPUS)} GPUs x {len(COUNTS)} counts x {len(LINKS)} links)")
    print(f"{'job':34s} {'cold median':>12s} {'warm median':>12s} {'answered':>9s}")
    for p in sorted((ROOT / "examples" / "jobs").glob("*.yaml")):
        cold, warm, ok = bench(p, hws)
        print(f"{p.name:34s} {cold * 1e3:10.3f} ms {warm * 1e6:9.1f} us {ok:6d}/{len(hws)}")


if __name__ == "__main__":
    main()
