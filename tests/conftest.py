"""Shared test fixtures: an isolated store per test, the shared/ reference folder, a real CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
FIXTURES = Path(__file__).parent / "fixtures"


def find_shared() -> Path | None:
    """../shared beside the checkout (CI and sessions), or GPUQUOTE_SHARED."""
    for cand in (os.environ.get("GPUQUOTE_SHARED"), ROOT.parent / "shared", Path("/work/shared")):
        if cand and (Path(cand) / "DESIGN.md").exists():
            return Path(cand)
    return None


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    p = find_shared()
    if p is None:
        pytest.skip("shared/ reference folder not found (set GPUQUOTE_SHARED)")
    return p


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """Every test gets its own empty user data dir; nothing touches the real store."""
    home = tmp_path / "gpuquote-home"
    monkeypatch.setenv("GPUQUOTE_HOME", str(home))
    monkeypatch.delenv("GPUQUOTE_DB", raising=False)
    monkeypatch.setenv("GPUQUOTE_LANG", "en")
    return home


def run_cli(*args: str, env: dict | None = None, input: str | None = None, timeout: float = 120):
    """Run the real `gpuquote` command in a fresh process (as a user would)."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(SRC) + os.pathsep + e.get("PYTHONPATH", "")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "gpuquote", *args], capture_output=True, text=True,
                          env=e, input=input, timeout=timeout)


@pytest.fixture
def cli():
    return run_cli
