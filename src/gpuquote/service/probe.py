"""`gpuquote probe`: what this machine is, and where it differs from a quote."""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from pathlib import Path

from gpuquote.errors import BadInput


def probe_machine(quote_path: str | Path | None = None, quote_id: str | None = None, bench: bool = False,
                  root: str | Path = "/", timeout_s: float = 60.0, recorded: str | Path | None = None,
                  bench_seconds: float = 120.0, bench_dir: str | Path | None = None,
                  bench_disk_mib: int = 1024) -> dict:
    """Inventory (+ measurements with bench) (+ verdict with a quote) as one JSON-ready dict.

    recorded: a folder of outputs captured on another machine (see docs/probe.md); its `root/`
    subfolder, if present, stands for / (proc, sys). `exit_code` is 3 when an item differs.
    """
    from gpuquote.probe import RecordedRunner, collect, compare, exit_code, live_runner, load_quote

    if timeout_s <= 0:
        raise BadInput("timeout: must be a positive number of seconds", field="timeout")
    if bench and bench_seconds <= 0:
        raise BadInput("bench-seconds: must be a positive number of seconds", field="bench-seconds")
    if bench_dir is not None and not Path(bench_dir).is_dir():
        raise BadInput(f"bench-dir: {bench_dir} is not a directory", field="bench-dir")
    quote = None
    if quote_id and not quote_path:
        raise BadInput("id: --id needs --quote FILE", field="id")
    if quote_path:
        quote = load_quote(quote_path, quote_id)  # read first: a bad quote fails before any probing
    runner = live_runner
    if recorded is not None:
        rec = Path(recorded)
        if not rec.is_dir():
            raise BadInput(f"recorded: {rec} is not a folder of recorded outputs", field="recorded")
        runner = RecordedRunner(rec)
        if str(root) == "/":
            root = rec / "root" if (rec / "root").is_dir() else rec / "__no_root__"
    if not Path(root).is_dir() and recorded is None:
        raise BadInput(f"root: {root} is not a directory", field="root")
    inv = collect(runner, root, timeout_s=timeout_s)
    out: dict = {
        "probed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": {"hostname": platform.node() if recorded is None else None,
                 "kernel": platform.release() if recorded is None else None,
                 "recorded": str(recorded) if recorded is not None else None, "root": str(root)},
        **inv,
        "bench": None,
        "quote": None,
        "verdict": [],
        "summary": None,
        "exit_code": 0,
    }
    if bench:
        from gpuquote.probe.bench import run_bench

        if recorded is not None:
            out["bench"] = {"status": "unavailable", "reason": "measurements need the machine itself, not "
                            "recorded outputs"}
        else:
            out["bench"] = run_bench(inv, seconds=bench_seconds, work_dir=bench_dir, disk_mib=bench_disk_mib,
                                     root=root)
    if quote is not None:
        items = compare(quote, inv)
        out["quote"] = {"id": quote.get("id"), "vendor": quote.get("vendor"), "file": str(quote_path)}
        out["verdict"] = items
        out["summary"] = {s: sum(1 for i in items if i["status"] == s) for s in ("confirmed", "differs",
                                                                                   "unverifiable")}
        out["exit_code"] = exit_code(items)
    return out
