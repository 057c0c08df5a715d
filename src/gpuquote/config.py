"""Run-time settings read from the environment (no layer imports)."""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
EMBEDDED_SNAPSHOT = DATA_DIR / "snapshot.sqlite"


def user_data_dir() -> Path:
    """Where the user's store lives unless GPUQUOTE_DB says otherwise."""
    if os.environ.get("GPUQUOTE_HOME"):
        return Path(os.environ["GPUQUOTE_HOME"])
    from platformdirs import user_data_dir as _udd

    return Path(_udd("gpuquote", appauthor=False))


def db_url() -> str:
    """GPUQUOTE_DB: a path to a SQLite file, or any SQLAlchemy URL (postgresql://...)."""
    raw = os.environ.get("GPUQUOTE_DB", "").strip()
    if not raw:
        return f"sqlite:///{user_data_dir() / 'gpuquote.sqlite'}"
    if "://" in raw:
        if raw.startswith("postgresql://"):
            return "postgresql+psycopg://" + raw[len("postgresql://"):]
        if raw.startswith("postgres://"):
            return "postgresql+psycopg://" + raw[len("postgres://"):]
        return raw
    return f"sqlite:///{Path(raw).expanduser()}"
