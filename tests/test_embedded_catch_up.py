"""store/embedded.py: a store seeded by an older gpuquote catches up with the catalog this version ships."""

from __future__ import annotations

import os
import sqlite3

import pytest

from gpuquote.config import EMBEDDED_SNAPSHOT
from gpuquote.service.offers import list_offers
from gpuquote.store.embedded import META_KEY, embedded_identity


def _old_store(tmp_path, monkeypatch):
    """The embedded snapshot as an older gpuquote left it in a user's store: no alicloud yet, one vast row read
    with another memory, AWS refreshed by the user since, and no record of a catch-up."""
    db = tmp_path / "user.sqlite"
    db.write_bytes(EMBEDDED_SNAPSHOT.read_bytes())
    with sqlite3.connect(db) as c:
        sid = c.execute("SELECT snapshot_id FROM current WHERE source = 'skypilot:alicloud'").fetchone()
        assert sid, "the embedded snapshot has Alibaba Cloud"
        c.execute("DELETE FROM offers WHERE snapshot_id = ?", sid)
        c.execute("DELETE FROM current WHERE source = 'skypilot:alicloud'")
        c.execute("DELETE FROM snapshots WHERE id = ?", sid)
        vast = c.execute("SELECT pk, offer_id, gpu_memory_gib FROM offers WHERE provider = 'vast' AND is_current = 1 "
                         "AND gpu_memory_gib IS NOT NULL ORDER BY pk LIMIT 1").fetchone()
        c.execute("UPDATE offers SET gpu_memory_gib = gpu_memory_gib * 2 WHERE pk = ?", (vast[0],))
        c.execute("UPDATE snapshots SET fetched_at = '2026-11-01T00:00:00+00:00' WHERE id = "
                  "(SELECT snapshot_id FROM current WHERE source = 'skypilot:aws')")
        c.execute("DELETE FROM meta WHERE key = ?", (META_KEY,))
    monkeypatch.setenv("GPUQUOTE_DB", str(db))
    return db, vast


def _snapshots(db) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, source, fetched_at FROM snapshots ORDER BY id").fetchall()


def test_first_read_imports_what_is_new_and_keeps_what_the_user_refreshed(tmp_path, monkeypatch):
    db, (_, vast_id, vast_mem) = _old_store(tmp_path, monkeypatch)
    before = _snapshots(db)
    got = list_offers(provider="alicloud", limit=5)
    assert got["count"] > 1000, "Alibaba Cloud offers are there on the first read"
    after = _snapshots(db)
    new = [s for s in after if s not in before]
    assert sorted(s[1] for s in new) == ["skypilot:alicloud", "skypilot:vast"]
    vast = [o for o in list_offers(provider="vast", limit=100000)["offers"] if o["offer_id"] == vast_id]
    assert vast and vast[0]["gpu_memory_gib"] == vast_mem, "the row as this gpuquote reads it"
    with sqlite3.connect(db) as c:
        aws_current = c.execute("SELECT s.fetched_at FROM current c JOIN snapshots s ON s.id = c.snapshot_id "
                                "WHERE c.source = 'skypilot:aws'").fetchone()[0]
        old_vast = c.execute("SELECT COUNT(*) FROM offers o JOIN snapshots s ON s.id = o.snapshot_id "
                             "WHERE s.source = 'skypilot:vast' AND o.is_current = 0").fetchone()[0]
        assert c.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()[0] == embedded_identity()
    assert aws_current == "2026-11-01T00:00:00+00:00", "the user's newer AWS snapshot stays current"
    assert old_vast > 0, "the old rows are kept as history"
    list_offers(limit=1)
    assert _snapshots(db) == after, "once per embedded snapshot"


def test_a_store_that_caught_up_is_left_alone(tmp_path, monkeypatch):
    db, _ = _old_store(tmp_path, monkeypatch)
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (META_KEY, embedded_identity()))
    before = _snapshots(db)
    assert list_offers(provider="alicloud", limit=1)["count"] == 0
    assert _snapshots(db) == before


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root can write a read-only file")
def test_a_read_only_store_still_answers(tmp_path, monkeypatch):
    db, _ = _old_store(tmp_path, monkeypatch)
    db.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        assert list_offers(provider="aws", limit=1)["count"] > 0
    finally:
        tmp_path.chmod(0o755)
        db.chmod(0o644)
