"""Run-time settings read from the environment (no layer imports)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
EMBEDDED_SNAPSHOT = DATA_DIR / "snapshot.sqlite"


def user_data_dir() -> Path:
    """Where the user's store lives unless GPUQUOTE_DB says otherwise."""
    if os.environ.get("GPUQUOTE_HOME"):
        return Path(os.environ["GPUQUOTE_HOME"])
    from platformdirs import user_data_dir as _udd

    return Path(_udd("gpuquote", appauthor=False))


#: What db_url() reads from the environment (platformdirs reads the last four): its answer is cached per value.
_URL_ENV = ("GPUQUOTE_DB", "GPUQUOTE_HOME", "XDG_DATA_HOME", "HOME", "APPDATA", "LOCALAPPDATA")


def db_url() -> str:
    """GPUQUOTE_DB: a path to a SQLite file, or any SQLAlchemy URL (postgresql://...).

    A server asks on every request (the in-memory catalog checks the store's stamp), so the answer is cached
    for the environment it was computed in."""
    env = os.environ
    return _db_url(tuple(env.get(k) for k in _URL_ENV))


@lru_cache(maxsize=32)
def _db_url(env: tuple) -> str:
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
