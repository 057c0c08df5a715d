"""Open the catalog store: the user's database, or the embedded snapshot until the first write.

SQLite file by default (platform data dir, or GPUQUOTE_DB), PostgreSQL when GPUQUOTE_DB is a
postgresql:// URL. A fresh install reads the snapshot shipped inside the package; the first write
copies it into the user's store so that history starts from it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, select
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from gpuquote.config import EMBEDDED_SNAPSHOT, db_url
from gpuquote.errors import StoreError
from gpuquote.store import schema


def _sqlite_path(url: str) -> Path | None:
    return Path(url[len("sqlite:///"):]) if url.startswith("sqlite:///") else None


def _engine(url: str, readonly: bool = False) -> Engine:
    path = _sqlite_path(url)
    if path is not None:
        if readonly:
            eng = create_engine("sqlite://", creator=lambda: _ro_connect(path))
        else:
            eng = create_engine(url)

            @event.listens_for(eng, "connect")
            def _pragmas(dbapi_conn, _rec):  # pragma: no cover - trivial
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA foreign_keys=ON")
                cur.execute("PRAGMA busy_timeout=10000")
                cur.close()
        return eng
    try:
        return create_engine(url, pool_pre_ping=True)
    except (SQLAlchemyError, ImportError) as e:
        raise StoreError(f"store: cannot use database URL from GPUQUOTE_DB: {e}", field="GPUQUOTE_DB") from None


def _ro_connect(path: Path):
    import sqlite3

    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)


def check_schema(engine: Engine, where: str) -> int:
    """Schema version of an existing store; StoreError if it is not a gpuquote store."""
    try:
        with engine.connect() as c:
            row = c.execute(select(schema.meta.c.value).where(schema.meta.c.key == "schema_version")).first()
    except (DBAPIError, SQLAlchemyError) as e:
        msg = str(getattr(e, "orig", e)).splitlines()[0]
        raise StoreError(f"store: {where} is not a readable gpuquote database ({msg})", field="GPUQUOTE_DB") from None
    if row is None:
        raise StoreError(f"store: {where} has no schema version; not a gpuquote database", field="GPUQUOTE_DB")
    return int(row[0])


def migrate(engine: Engine) -> None:
    """Create missing tables and apply migrations up to SCHEMA_VERSION, in one transaction."""
    from sqlalchemy import text

    with engine.begin() as c:
        schema.metadata.create_all(c)
        row = c.execute(select(schema.meta.c.value).where(schema.meta.c.key == "schema_version")).first()
        version = int(row[0]) if row else None
        if version is None:
            c.execute(schema.meta.insert().values(key="schema_version", value=str(schema.SCHEMA_VERSION)))
            return
        if version > schema.SCHEMA_VERSION:
            raise StoreError(f"store: database schema {version} is newer than this gpuquote ({schema.SCHEMA_VERSION});"
                             " upgrade gpuquote", field="GPUQUOTE_DB")
        for v in range(version + 1, schema.SCHEMA_VERSION + 1):
            for stmt in schema.MIGRATIONS.get(v, []):
                c.execute(text(stmt))
        c.execute(schema.meta.update().where(schema.meta.c.key == "schema_version")
                  .values(value=str(schema.SCHEMA_VERSION)))


UNSEEDED = "unseeded"  # a store created without the embedded catalog (write_engine(seed=False)): never caught up


def _seeded_mark() -> str:
    from gpuquote.store.embedded import embedded_identity

    return embedded_identity() or ""


def _mark(engine: Engine, value: str) -> None:
    from gpuquote.store.embedded import META_KEY

    with engine.begin() as c:
        c.execute(schema.meta.delete().where(schema.meta.c.key == META_KEY))
        c.execute(schema.meta.insert().values(key=META_KEY, value=value))


def catch_up_quietly(engine: Engine, merged: str | None = "?") -> None:
    """Import what a newer embedded snapshot knows (store/embedded.py), when it is new to this store. Never fails:
    a read-only store or a concurrent catch-up leaves the store as it is, and the next run tries again."""
    from gpuquote.store.embedded import META_KEY, catch_up, needs_catch_up

    try:
        if merged == "?":
            with engine.connect() as c:
                row = c.execute(select(schema.meta.c.value).where(schema.meta.c.key == META_KEY)).first()
            merged = row[0] if row else None
        if needs_catch_up(merged):
            catch_up(engine)
    except (SQLAlchemyError, OSError, StoreError):
        pass


def user_store_exists(url: str | None = None) -> bool:
    url = url or db_url()
    path = _sqlite_path(url)
    if path is None:
        return True  # a server database: always the store
    if path.is_dir():
        raise StoreError(f"store: database path {path} is a directory", field="GPUQUOTE_DB")
    return path.exists() and path.stat().st_size > 0


def read_engine() -> tuple[Engine, str]:
    """Engine for queries: the user's store if it exists, else the embedded snapshot (read-only)."""
    url = db_url()
    if user_store_exists(url):
        eng = _engine(url)
        path = _sqlite_path(url)
        where = str(path) if path else "GPUQUOTE_DB"
        if path is None:
            # A server database that was never written answers from the embedded snapshot.
            try:
                version = check_schema(eng, where)
            except StoreError:
                with eng.connect() as c:
                    if not eng.dialect.has_table(c, "meta"):
                        return _embedded(), "embedded snapshot"
                raise
        else:
            version = check_schema(eng, where)
        if version < schema.SCHEMA_VERSION:
            migrate(eng)  # written by an older gpuquote: migrate once, then read
        catch_up_quietly(eng)
        return eng, where
    return _embedded(), "embedded snapshot"


def _embedded() -> Engine:
    if not EMBEDDED_SNAPSHOT.exists():
        raise StoreError("store: the embedded snapshot is missing from the package; run scripts/build_snapshot.py",
                         field="snapshot")
    return _engine(f"sqlite:///{EMBEDDED_SNAPSHOT}", readonly=True)


def write_engine(url: str | None = None, seed: bool = True) -> Engine:
    """Engine for writes; creates the store (seeded from the embedded snapshot) on first use."""
    url = url or db_url()
    path = _sqlite_path(url)
    if path is not None:
        if path.is_dir():
            raise StoreError(f"store: database path {path} is a directory", field="GPUQUOTE_DB")
        created = not path.exists() or path.stat().st_size == 0
        if created:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                if seed and EMBEDDED_SNAPSHOT.exists():
                    tmp = path.with_name(path.name + ".seeding")
                    shutil.copyfile(EMBEDDED_SNAPSHOT, tmp)
                    tmp.replace(path)  # atomic: a crash leaves no half-written store
            except OSError as e:
                raise StoreError(f"store: cannot create database at {path}: {e.strerror}",
                                 field="GPUQUOTE_DB") from None
        elif not _writable(path):
            raise StoreError(f"store: database {path} is not writable", field="GPUQUOTE_DB")
        eng = _engine(url)
        check_schema(eng, str(path)) if path.exists() and path.stat().st_size else None
        migrate(eng)
        if created:  # a copy of the embedded snapshot has caught up with it; an empty store never will
            _mark(eng, _seeded_mark() if seed and EMBEDDED_SNAPSHOT.exists() else UNSEEDED)
        catch_up_quietly(eng)
        return eng
    eng = _engine(url)
    try:
        with eng.connect() as c:
            fresh = not eng.dialect.has_table(c, "meta")
    except (DBAPIError, SQLAlchemyError) as e:
        msg = str(getattr(e, "orig", e)).splitlines()[0]
        raise StoreError(f"store: cannot connect to GPUQUOTE_DB: {msg}", field="GPUQUOTE_DB") from None
    migrate(eng)
    if fresh and seed and EMBEDDED_SNAPSHOT.exists():
        copy_store(_embedded(), eng)
        _mark(eng, _seeded_mark())
    elif fresh:
        _mark(eng, UNSEEDED)
    catch_up_quietly(eng)
    return eng


def _writable(path: Path) -> bool:
    import os

    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def copy_store(src: Engine, dst: Engine) -> None:
    """Copy every row of a store into an empty one (seeding PostgreSQL from the embedded snapshot)."""
    order = [schema.snapshots, schema.current, schema.raw_responses, schema.offers]
    with src.connect() as s, dst.begin() as d:
        for tbl in order:
            rows = [dict(r._mapping) for r in s.execute(select(tbl))]
            for i in range(0, len(rows), 5000):
                d.execute(tbl.insert(), rows[i:i + 5000])
        if dst.dialect.name == "postgresql":
            from sqlalchemy import text

            for tbl, col in ((schema.snapshots, "id"), (schema.raw_responses, "id"), (schema.offers, "pk")):
                d.execute(text(f"SELECT setval(pg_get_serial_sequence('{tbl.name}', '{col}'), "
                               f"COALESCE((SELECT MAX({col}) FROM {tbl.name}), 0) + 1, false)"))
