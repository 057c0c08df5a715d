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


PG_URL = os.environ.get("GPUQUOTE_TEST_PG", "").strip()


def pytest_generate_tests(metafunc):
    """Tests marked db_backends run on SQLite, and again on PostgreSQL when GPUQUOTE_TEST_PG is set."""
    if metafunc.definition.get_closest_marker("db_backends") and "db_backend" in metafunc.fixturenames:
        metafunc.parametrize("db_backend", ["sqlite", "postgres"] if PG_URL else ["sqlite"], indirect=True)


@pytest.fixture
def db_backend(request, monkeypatch):
    """sqlite (the default), or a fresh PostgreSQL schema for this test (dropped afterwards)."""
    backend = getattr(request, "param", "sqlite")
    if backend != "postgres":
        yield backend
        return
    import uuid

    psycopg = pytest.importorskip("psycopg")
    schema = f"gq_test_{uuid.uuid4().hex[:12]}"
    admin_url = PG_URL.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin_url, autocommit=True) as c:
        c.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in PG_URL else "?"
    monkeypatch.setenv("GPUQUOTE_DB", f"{PG_URL}{sep}options=-csearch_path%3D{schema}")
    try:
        yield backend
    finally:
        with psycopg.connect(admin_url, autocommit=True) as c:
            c.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch, db_backend):
    """Every test gets its own empty user data dir (or PostgreSQL schema); nothing touches the real store."""
    home = tmp_path / "gpuquote-home"
    monkeypatch.setenv("GPUQUOTE_HOME", str(home))
    if db_backend == "sqlite":
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
