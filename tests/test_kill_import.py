"""SIGKILL during `gpuquote import` never leaves a broken store (the benchmark does 20 kills; this does 3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_sigkill_mid_import_keeps_last_good_snapshot_current():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "kill_import.py"), "--runs", "3", "--offers", "3000",
                        "--seed", "7"], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK: 3 SIGKILLs, store readable every time" in r.stdout
