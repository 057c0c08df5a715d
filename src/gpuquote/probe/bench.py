"""Optional micro-benchmarks (`gpuquote probe --bench`), each bounded in time and memory.

- disk: sequential write then read of a temporary file with O_DIRECT (bypassing the page cache), in a
  temporary directory that is removed afterwards; at most `disk_mib` MiB, 4 MiB per request.
- host memory: numpy copy bandwidth on two buffers of at most 256 MiB (and 1/8 of available RAM).
- GPU (only with PyTorch and a GPU): bf16 matmul TFLOPS, HBM copy bandwidth, host-to-device
  bandwidth (pinned), NCCL all-reduce bus bandwidth across the local GPUs. It runs in a child process
  under a hard timeout, so a hung CUDA call cannot hold the probe past its bound.

Each GPU figure is set against the catalog peak of the GPU the inventory identified.
"""

from __future__ import annotations

import json
import mmap
import os
import sys
import tempfile
import time
from pathlib import Path

BLOCK = 4 * 2**20
DEFAULT_BENCH_S = 120.0
DEFAULT_DISK_MIB = 1024


def _gbs(nbytes: float, seconds: float) -> float | None:
    return round(nbytes / seconds / 1e9, 2) if seconds > 0 else None


def disk_bench(work_dir: str | Path | None = None, size_mib: int = DEFAULT_DISK_MIB, seconds: float = 20.0) -> dict:
    """Sequential O_DIRECT write and read of one temporary file; stops at size or at the time limit."""
    if not hasattr(os, "O_DIRECT"):
        return {"status": "unavailable", "reason": "O_DIRECT not available on this OS"}
    size = max(1, size_mib) * 2**20
    buf = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT requires
    buf.write(os.urandom(BLOCK))
    out: dict = {"status": "ok", "o_direct": True}
    with tempfile.TemporaryDirectory(prefix="gpuquote-probe-", dir=work_dir) as d:
        path = os.path.join(d, "bench.bin")
        out["directory"] = str(Path(d).parent)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
        except OSError as e:  # tmpfs and some overlay filesystems refuse O_DIRECT
            buf.close()
            return {"status": "unavailable", "reason": f"O_DIRECT refused here ({e.strerror}); pass --bench-dir "
                    "on the NVMe filesystem", "directory": out["directory"]}
        written = 0
        t0 = time.monotonic()
        try:
            while written < size and time.monotonic() - t0 < seconds / 2:
                written += os.write(fd, buf)
            os.fsync(fd)
        finally:
            os.close(fd)
        tw = time.monotonic() - t0
        read = 0
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        t0 = time.monotonic()
        try:
            while read < written and time.monotonic() - t0 < seconds / 2:
                n = os.readv(fd, [buf])
                if n <= 0:
                    break
                read += n
        finally:
            os.close(fd)
        tr = time.monotonic() - t0
    buf.close()
    out.update({"bytes_written": written, "write_gbs": _gbs(written, tw), "bytes_read": read,
                "read_gbs": _gbs(read, tr)})
    return out


def memory_bench(seconds: float = 3.0, max_mib: int = 256, root: str | Path = "/") -> dict:
    """Host memory copy bandwidth (read + write bytes per second) with numpy."""
    import numpy as np

    avail_mib = None
    try:
        for line in (Path(root) / "proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                avail_mib = int(line.split()[1]) // 1024
    except OSError:
        pass
    mib = min(max_mib, avail_mib // 8 if avail_mib else max_mib)
    if mib < 8:
        return {"status": "unavailable", "reason": "too little free memory"}
    n = mib * 2**20 // 8
    src = np.ones(n, dtype=np.float64)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    copies = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        np.copyto(dst, src)
        copies += 1
    dt = time.monotonic() - t0
    return {"status": "ok", "buffer_mib": mib, "copy_gbs": _gbs(2 * src.nbytes * copies, dt)}


def compare_to_peak(measured: dict, gpu_id: str | None) -> list[dict]:
    """Each GPU figure as a fraction of the catalog peak: 'matmul 270 TFLOPS = 87% of the a100-80gb-sxm4 peak'."""
    from gpuquote.hardware import load_gpus

    g = load_gpus().get(gpu_id or "")
    rows = []
    specs = [
        ("bf16_matmul_tflops", "bf16 matmul", "TFLOPS", g.bf16_tflops if g else None, "dense bf16 peak"),
        ("hbm_copy_gbs", "HBM copy", "GB/s", g.memory_bandwidth_gbs if g else None, "memory bandwidth"),
        ("h2d_gbs", "host-to-device", "GB/s", g.pcie_bandwidth_gbs / 2 if g and g.pcie_bandwidth_gbs else None,
         "PCIe, one direction"),
        ("allreduce_busbw_gbs", "NCCL all-reduce bus bandwidth", "GB/s",
         g.nvlink_bandwidth_gbs / 2 if g and g.nvlink_bandwidth_gbs else None, "NVLink, one direction"),
    ]
    for key, label, unit, peak, what in specs:
        v = measured.get(key)
        if v is None:
            continue
        pct = round(100 * v / peak) if peak else None
        text = f"{label} {v:g} {unit}" + (f" = {pct}% of the {gpu_id} {what} ({peak:g} {unit})" if pct else "")
        rows.append({"metric": key, "value": v, "unit": unit, "peak": peak, "percent_of_peak": pct, "text": text})
    return rows


def gpu_bench(measure_s: float, hard_s: float, gpu_id: str | None) -> dict:
    """Run the GPU measurements in a child process, killed (with its children) after hard_s seconds."""
    from gpuquote.probe.run import run_cmd

    r = run_cmd([sys.executable, "-m", "gpuquote.probe.bench", "--gpu", f"{measure_s:.1f}"], timeout_s=hard_s)
    if r.status == "timeout":
        return {"status": "timeout", "reason": f"GPU benchmark stopped at its {hard_s:.0f} s bound"}
    try:
        data = json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else {}
    except (ValueError, IndexError):
        data = {}
    if not data:
        return {"status": "error", "reason": (r.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    if data.get("status") == "ok":
        data["versus_peak"] = compare_to_peak(data, gpu_id)
    return data


def run_bench(inventory: dict, seconds: float = DEFAULT_BENCH_S, work_dir: str | Path | None = None,
              disk_mib: int = DEFAULT_DISK_MIB, root: str | Path = "/") -> dict:
    """All measurements within `seconds` (disk 1/4, memory a few s, GPU the rest)."""
    t0 = time.monotonic()
    out: dict = {"bound_s": seconds}
    out["disk"] = disk_bench(work_dir, disk_mib, seconds=max(1.0, seconds / 4))
    out["host_memory"] = memory_bench(seconds=min(3.0, max(0.5, seconds / 20)), root=root)
    left = seconds - (time.monotonic() - t0)
    if not inventory.get("gpus"):
        out["gpu"] = {"status": "unavailable", "reason": "no GPU"}
    elif left < 30:
        out["gpu"] = {"status": "skipped", "reason": f"{left:.0f} s left within the bound; the GPU part needs 30"}
    else:  # CUDA start-up and NCCL set-up take 5-20 s of the hard bound outside the measured slots
        out["gpu"] = gpu_bench(max(5.0, left - 25), left - 1, inventory["gpu_summary"].get("gpu_id"))
    out["seconds"] = round(time.monotonic() - t0, 2)
    return out


# --- the child process -----------------------------------------------------------------------------------------

def _allreduce_worker(rank: int, world: int, port: int, mib: int, seconds: float, q) -> None:  # pragma: no cover
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    x = torch.ones(mib * 2**20 // 4, dtype=torch.float32, device="cuda")
    for _ in range(3):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    iters = 0
    t0 = time.monotonic()
    while True:
        dist.all_reduce(x)
        iters += 1
        torch.cuda.synchronize()
        flag = torch.tensor([1 if time.monotonic() - t0 < seconds else 0], device="cuda")
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
        if flag.item() == 0:
            break
    dt = time.monotonic() - t0
    if rank == 0:
        algbw = x.numel() * 4 * iters / dt
        q.put(round(algbw * 2 * (world - 1) / world / 1e9, 1))
    dist.destroy_process_group()


def _gpu_main(seconds: float) -> dict:  # pragma: no cover - needs PyTorch and a GPU
    try:
        import torch
    except ImportError:
        return {"status": "unavailable", "reason": "PyTorch is not installed"}
    if not torch.cuda.is_available():
        return {"status": "unavailable", "reason": "PyTorch sees no CUDA/ROCm device"}
    slot = min(5.0, max(1.0, seconds / 5))
    dev = torch.device("cuda:0")
    res: dict = {"status": "ok", "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                 "gpus_visible": torch.cuda.device_count()}
    free, _total = torch.cuda.mem_get_info(0)

    def timed(fn, budget: float) -> tuple[int, float]:
        for _ in range(2):
            fn()
        torch.cuda.synchronize()
        n, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < budget:
            fn()
            n += 1
            torch.cuda.synchronize()
        return n, time.monotonic() - t0

    n = 8192
    t: dict = {"a": torch.randn(n, n, dtype=torch.bfloat16, device=dev),
               "b": torch.randn(n, n, dtype=torch.bfloat16, device=dev)}
    it, dt = timed(lambda: t["a"] @ t["b"], slot)
    res["bf16_matmul_tflops"] = round(2 * n**3 * it / dt / 1e12, 1)
    nbytes = int(min(2 * 2**30, free // 8))
    t = {"src": torch.empty(nbytes, dtype=torch.uint8, device=dev)}
    t["dst"] = torch.empty_like(t["src"])
    it, dt = timed(lambda: t["dst"].copy_(t["src"]), slot)
    res["hbm_copy_gbs"] = round(2 * nbytes * it / dt / 1e9, 1)
    hb = int(min(512 * 2**20, nbytes))
    t = {"host": torch.empty(hb, dtype=torch.uint8).pin_memory(), "dev": torch.empty(hb, dtype=torch.uint8, device=dev)}
    it, dt = timed(lambda: t["dev"].copy_(t["host"], non_blocking=True), slot)
    res["h2d_gbs"] = round(hb * it / dt / 1e9, 1)
    t = {}
    torch.cuda.empty_cache()
    world = torch.cuda.device_count()
    if world > 1 and torch.distributed.is_nccl_available():
        import socket

        import torch.multiprocessing as mp

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        from gpuquote.probe.bench import _allreduce_worker as worker  # picklable by module name under spawn

        ctx = mp.get_context("spawn")
        q = ctx.SimpleQueue()
        mp.start_processes(worker, args=(world, port, 256, slot, q), nprocs=world, join=True,
                           start_method="spawn")
        res["allreduce_busbw_gbs"] = q.get()
        res["allreduce_gpus"] = world
    return res


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) == 3 and sys.argv[1] == "--gpu":
        try:
            out = _gpu_main(float(sys.argv[2]))
        except Exception as e:  # report, never a traceback on stdout
            out = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:300]}
        print(json.dumps(out))
