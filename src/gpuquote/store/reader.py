"""Read-only access for queries, without importing SQLAlchemy when the store is a SQLite file.

`gpuquote offers` must start in well under half a second; SQLAlchemy's import alone costs ~0.2 s,
so SQLite reads go through the stdlib sqlite3 module with the same portable SQL text (named
parameters) that PostgreSQL runs through SQLAlchemy.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from gpuquote.config import EMBEDDED_SNAPSHOT, db_url
from gpuquote.errors import StoreError
from gpuquote.store.version import SCHEMA_VERSION


class Reader:
    """Runs SELECTs with :named parameters; rows come back as dicts."""

    def __init__(self, where: str, sqlite_path: Path | None = None, readonly: bool = False, engine=None):
        self.where = where
        self._engine = engine
        self._con = None
        if sqlite_path is not None:
            try:
                uri = f"file:{sqlite_path}?mode=ro" + ("&immutable=1" if readonly else "")
                self._con = sqlite3.connect(uri, uri=True, check_same_thread=False)
                self._con.row_factory = sqlite3.Row
            except sqlite3.Error as e:
                raise StoreError(f"store: cannot open {where}: {e}", field="GPUQUOTE_DB") from None
        self.check()

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> list[dict]:
        if self._con is not None:
            try:
                return [dict(r) for r in self._con.execute(sql, params or {})]
            except sqlite3.DatabaseError as e:
                raise StoreError(f"store: {self.where} is not a readable gpuquote database ({e})",
                                 field="GPUQUOTE_DB") from None
        from sqlalchemy import text

        with self._engine.connect() as c:
            return [dict(r._mapping) for r in c.execute(text(sql), params or {})]

    def check(self) -> None:
        rows = {r["key"]: r["value"] for r in
                self.execute("SELECT key, value FROM meta WHERE key IN ('schema_version', 'embedded_merged')")}
        if "schema_version" not in rows:
            raise StoreError(f"store: {self.where} has no schema version; not a gpuquote database",
                             field="GPUQUOTE_DB")
        self.schema_version = int(rows["schema_version"])
        self.embedded_merged = rows.get("embedded_merged")  # store/embedded.py

    def close(self) -> None:
        if self._con is not None:
            self._con.close()


def open_reader() -> Reader:
    """The user's store if it exists, else the snapshot embedded in the package."""
    url = db_url()
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///"):])
        if path.is_dir():
            raise StoreError(f"store: database path {path} is a directory", field="GPUQUOTE_DB")
        if path.exists() and path.stat().st_size > 0:
            reader = Reader(str(path), sqlite_path=path)
            if reader.schema_version < SCHEMA_VERSION:  # written by an older gpuquote: migrate once, then read
                reader.close()
                from gpuquote.store.db import _engine, migrate

                migrate(_engine(url))
                reader = Reader(str(path), sqlite_path=path)
            from gpuquote.store.embedded import needs_catch_up

            if needs_catch_up(reader.embedded_merged):  # a newer gpuquote's catalog: imported once
                reader.close()
                from gpuquote.store.db import _engine, catch_up_quietly

                catch_up_quietly(_engine(url), reader.embedded_merged)
                reader = Reader(str(path), sqlite_path=path)
            return reader
        return embedded_reader()
    from gpuquote.store.db import read_engine

    engine, where = read_engine()
    if where == "embedded snapshot":
        return embedded_reader()
    return Reader(where, engine=engine)


def embedded_reader() -> Reader:
    if not EMBEDDED_SNAPSHOT.exists():
        raise StoreError("store: the embedded snapshot is missing from the package; run scripts/build_snapshot.py",
                         field="snapshot")
    return Reader("embedded snapshot", sqlite_path=EMBEDDED_SNAPSHOT, readonly=True)
