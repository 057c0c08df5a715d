"""Run a read-only inspection command with a hard time limit; never raise.

A rented machine may lack any tool (no driver, a minimal container), or a tool may hang (a wedged
GPU makes nvidia-smi block for minutes). Every call therefore returns a CmdResult whose `status`
says what happened, and the probe reports the item as unknown instead of crashing or waiting.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Default per-command limit, seconds. nvidia-smi -q on an 8-GPU node takes ~1-3 s.
DEFAULT_TIMEOUT_S = 15.0
#: Output beyond this many bytes is cut off (a pathological tool cannot exhaust memory).
MAX_OUTPUT_BYTES = 16 * 1024 * 1024

STATUSES = ("ok", "missing", "timeout", "failed", "error")


@dataclass
class CmdResult:
    """What one command did. status: ok | missing (not installed) | timeout | failed (rc != 0) | error."""

    argv: tuple[str, ...]
    status: str
    stdout: str = ""
    stderr: str = ""
    rc: int | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict:
        return {"command": " ".join(self.argv), "status": self.status, "rc": self.rc,
                "seconds": round(self.seconds, 3), "stderr": self.stderr.strip()[-300:] or None}


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the process group we created for this command (the tool and anything it forked)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def run_cmd(argv: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S, *, env: dict | None = None) -> CmdResult:
    """Run argv (no shell) with a time limit; the child runs in its own session so a timeout kills it all."""
    argv = tuple(argv)
    t0 = time.monotonic()
    exe = shutil.which(argv[0], path=(env or os.environ).get("PATH"))
    if exe is None:
        return CmdResult(argv, "missing", stderr=f"{argv[0]}: not found")
    try:
        proc = subprocess.Popen([exe, *argv[1:]], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    except OSError as e:
        return CmdResult(argv, "error", stderr=str(e), seconds=time.monotonic() - t0)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        try:
            out, err = proc.communicate(timeout=2)
        except subprocess.TimeoutExpired:  # pipes held open by an unkillable grandchild: give up on them
            out, err = b"", b""
        return CmdResult(argv, "timeout", out[:MAX_OUTPUT_BYTES].decode("utf-8", "replace"),
                         f"timed out after {timeout_s:g} s", None, time.monotonic() - t0)
    dt = time.monotonic() - t0
    text = out[:MAX_OUTPUT_BYTES].decode("utf-8", "replace")
    etext = err[:65536].decode("utf-8", "replace")
    status = "ok" if proc.returncode == 0 else "failed"
    return CmdResult(argv, status, text, etext, proc.returncode, dt)


Runner = Callable[[Sequence[str], float], CmdResult]


def live_runner(argv: Sequence[str], timeout_s: float) -> CmdResult:
    """The runner used on a real machine."""
    return run_cmd(argv, timeout_s)


#: Command -> file name in a folder of recorded outputs (`gpuquote probe --recorded DIR`).
RECORDED_FILES: dict[tuple[str, ...], str] = {
    ("nvidia-smi", "-q", "-x"): "nvidia-smi-q-x.xml",
    ("nvidia-smi", "topo", "-m"): "nvidia-smi-topo-m.txt",
    ("nvidia-smi", "nvlink", "-s"): "nvidia-smi-nvlink-s.txt",
    ("nvidia-smi", "-L"): "nvidia-smi-L.txt",
    ("lscpu",): "lscpu.txt",
    ("lsblk", "-J", "-b", "-d", "-o", "NAME,SIZE,MODEL,TRAN,TYPE,ROTA"): "lsblk.json",
    ("lsblk", "-J", "-o", "NAME,PKNAME,MOUNTPOINT"): "lsblk-mounts.json",
    ("rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showbus", "--json"): "rocm-smi.json",
    ("amd-smi", "static", "--json"): "amd-smi-static.json",
}


class RecordedRunner:
    """Replays outputs recorded on another machine; a command without a file is reported missing."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def __call__(self, argv: Sequence[str], timeout_s: float) -> CmdResult:
        name = RECORDED_FILES.get(tuple(argv))
        path = self.folder / name if name else None
        if path is None or not path.is_file():
            return CmdResult(tuple(argv), "missing", stderr=f"no recorded output for {' '.join(argv)}")
        return CmdResult(tuple(argv), "ok", path.read_text(encoding="utf-8", errors="replace"), "", 0, 0.0)
