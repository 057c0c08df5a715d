"""The current catalog held in memory as NumPy columns, for a long-running server.

Why: a distinct offers query through SQL costs a scan plus one dict per row (~10 ms for the full catalog);
with 50 concurrent clients on two cores that is a p99 of hundreds of ms. Here the rows are read once per
store change (invalidated by the store's stamp: the SQLite file's and WAL's stat, or PostgreSQL's newest
snapshot id), filters are vectorised masks, sorting is one `np.lexsort`, and only the page of rows asked
for is copied out. Results equal the SQL path's (tests/test_offers_summary.py compares both).

The CLI never builds this (a one-shot command pays the load for one query); the web app enables it.
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import numpy as np

from gpuquote.store import SORT_COLUMNS, OfferFilter, open_reader, row_to_dict
from gpuquote.store.queries import NOT_NULL, PLAN_COLUMNS
from gpuquote.store.rows import _freshness_cached

_ENABLED = False
_LOCK = threading.Lock()
_CACHE: dict = {"stamp": None, "cols": None}
NUMERIC = {"usd_per_gpu_hour", "usd_per_node_hour", "gpu_count", "gpu_memory_gib", "vcpus", "ram_gib"}


def enable(on: bool = True) -> None:
    """The web app turns the in-memory catalog on; everything else keeps reading SQL."""
    global _ENABLED
    _ENABLED = on


def enabled() -> bool:
    return _ENABLED


def store_stamp() -> tuple:
    """Changes whenever the store may have changed (cheap: two stat calls, or one indexed query)."""
    from gpuquote.config import db_url

    url = db_url()
    if url.startswith("sqlite:///"):
        db, wal, embedded = _stat_paths(url)
        try:
            st = os.stat(db)
        except OSError:  # no user store yet: the embedded snapshot answers (it changes only with the package)
            try:
                e = os.stat(embedded)
                return (url, None, (e.st_mtime_ns, e.st_size))
            except OSError:
                return (url, None, None)
        try:
            w = os.stat(wal)
            return (url, (st.st_mtime_ns, st.st_size), (w.st_mtime_ns, w.st_size))
        except OSError:
            return (url, (st.st_mtime_ns, st.st_size), None)
    r = open_reader()
    try:
        return (url, r.execute("SELECT COALESCE(MAX(id), 0) AS n FROM snapshots")[0]["n"])
    finally:
        r.close()


@lru_cache(maxsize=16)
def _stat_paths(url: str) -> tuple[str, str, str]:
    """The SQLite file, its WAL and the embedded snapshot, as strings (os.stat without pathlib per request)."""
    from gpuquote.config import EMBEDDED_SNAPSHOT

    p = Path(url[len("sqlite:///"):])
    return str(p), str(p.with_name(p.name + "-wal")), str(EMBEDDED_SNAPSHOT)


def _rank(values: list) -> np.ndarray:
    """Dense ascending rank of each value (None ranks 0, first, as SQLite orders NULL in ASC)."""
    uniq = sorted({v for v in values if v is not None})
    pos = {v: i + 1 for i, v in enumerate(uniq)}
    return np.fromiter((pos.get(v, 0) if v is not None else 0 for v in values), dtype=np.int64, count=len(values))


class Columns:
    """Every current offer: the stored row dicts plus one array per filter/sort column."""

    def __init__(self, raw: list[dict], where: str):
        self.where = where
        n = len(raw)
        self.n = n
        now = datetime.now(UTC)
        self.rows = [row_to_dict(r, now) for r in raw]
        self.pk = np.array([r["pk"] for r in raw], dtype=np.int64)
        self.pk_index = {int(p): i for i, p in enumerate(self.pk)}
        self.plan = {c: [r[c] for r in raw] for c in PLAN_COLUMNS}
        self.fetched_at = [r["fetched_at"] for r in raw]
        obj = {c: np.array([r[c] for r in raw] + [None], dtype=object)[:n]
               for c in ("gpu_id", "provider", "intra_node", "source", "form")}
        self.obj = obj
        # integer codes per categorical column: an IN filter is one boolean lookup table, not np.isin on objects
        self.codes: dict[str, dict] = {}
        self.code_arr: dict[str, np.ndarray] = {}
        for c in obj:
            table: dict = {}
            self.code_arr[c] = np.fromiter((table.setdefault(r[c], len(table)) for r in raw), dtype=np.int64,
                                           count=n)
            self.codes[c] = table
        self.provider_names = {k: v for v, k in self.codes["provider"].items()}
        self.region_lower = [(r["region"] or "").lower() for r in raw]
        self.spot = np.array([bool(r["spot"]) for r in raw], dtype=bool)
        self.num = {c: np.array([np.nan if r[c] is None else float(r[c]) for r in raw], dtype=np.float64)
                    for c in NUMERIC}
        self.null = {c: np.isnan(a) for c, a in self.num.items()}
        self.price_or_inf = np.where(self.null["usd_per_gpu_hour"], np.inf, self.num["usd_per_gpu_hour"])
        # ranks for string sort keys; the SQL tie-break "provider, region, offer_id" as one rank
        self.str_rank = {c: _rank([r[c] for r in raw]) for c in ("provider", "region", "gpu_id", "sku", "fetched_at")}
        self.str_null = {c: np.array([r[c] is None for r in raw], dtype=bool) for c in self.str_rank}
        order = sorted(range(n), key=lambda i: (raw[i]["provider"] or "", raw[i]["region"] is not None,
                                                raw[i]["region"] or "", raw[i]["offer_id"] or ""))
        self.tail = np.empty(n, dtype=np.int64)
        self.tail[np.array(order, dtype=np.int64)] = np.arange(n, dtype=np.int64)
        self._region_cache: dict[str, np.ndarray] = {}
        self._json: list[bytes | None] = [None] * n
        self._json_hour = ""
        self._tables: dict[tuple, object] = {}
        self._orders: dict[tuple[str, bool], np.ndarray] = {}
        self._in_cache: dict[tuple, np.ndarray] = {}

    # --- filtering ---------------------------------------------------------------------------------------------
    def mask(self, f: OfferFilter) -> np.ndarray:
        m = np.ones(self.n, dtype=bool)
        if f.gpu_ids is not None:
            m &= self._in("gpu_id", f.gpu_ids)
        if f.min_gpus is not None:
            m &= self.num["gpu_count"] >= f.min_gpus
        if f.interconnect:
            m &= self._in("intra_node", [f.interconnect])
        if f.region:
            m &= self._region(f.region.lower())
        if f.spot is not None:
            m &= self.spot == bool(f.spot)
        if f.providers:
            m &= self._in("provider", f.providers)
        if f.max_price_usd is not None:
            m &= self.price_or_inf <= f.max_price_usd
        if f.sources:
            m &= self._in("source", f.sources)
        if f.form:
            m &= self._in("form", [f.form])
        return m

    def _in(self, col: str, values) -> np.ndarray:
        """Rows whose `col` is one of `values` (kept per value set: filters repeat, their combinations do not)."""
        key = (col, tuple(values))
        hit = self._in_cache.get(key)
        if hit is None:
            hit = self._in_of(col, values)
            hit.flags.writeable = False
            if len(self._in_cache) < 1024:
                self._in_cache[key] = hit
        return hit

    def _in_of(self, col: str, values) -> np.ndarray:
        table = self.codes[col]
        lut = np.zeros(len(table) + 1, dtype=bool)
        for v in values:
            k = table.get(v)
            if k is not None:
                lut[k] = True
        return lut[self.code_arr[col]]

    def _region(self, r: str) -> np.ndarray:
        hit = self._region_cache.get(r)
        if hit is None:
            hit = np.fromiter((x.startswith(r) for x in self.region_lower), dtype=bool, count=self.n)
            if len(self._region_cache) < 1024:
                self._region_cache[r] = hit
        return hit

    # --- sorting -----------------------------------------------------------------------------------------------
    def order(self, idx: np.ndarray, sort: str, descending: bool) -> np.ndarray:
        col = SORT_COLUMNS[sort]
        if col in NUMERIC:
            key = self.num[col][idx]
            null = self.null[col][idx]
            key = np.where(null, 0.0, -key if descending else key)
        else:
            key = self.str_rank[col][idx]
            null = self.str_null[col][idx]
            key = -key if descending else key
        if col in NOT_NULL:
            null = np.zeros(len(idx), dtype=bool)
        return idx[np.lexsort((self.tail[idx], key, null))]

    def full_order(self, sort: str, descending: bool) -> np.ndarray:
        """Every offer in this sort's order (ties broken by provider, region, offer id: a total order)."""
        key = (sort, descending)
        got = self._orders.get(key)
        if got is None:
            got = self._orders[key] = self.order(np.arange(self.n, dtype=np.int64), sort, descending)
        return got

    def warm(self, max_offers: int = 50_000) -> None:
        """Encode every row and sort by every key now (a server's warm-up; ~0.1 s for 5,000 offers), so the first
        requests after a start do not pay for it together."""
        if self.n > max_offers:
            return
        for sort in sorted(set(SORT_COLUMNS)):
            for desc in (False, True):
                self.full_order(sort, desc)
        now_hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0).isoformat()
        self.page_json(np.arange(self.n, dtype=np.int64), now_hour)

    def row(self, i: int, now_hour: str) -> dict:
        d = dict(self.rows[i])
        d["freshness"] = _freshness_cached(self.fetched_at[i], now_hour) if self.fetched_at[i] else "unknown"
        return d

    def page_json(self, where: np.ndarray, now_hour: str, pre: bytes = b"", post: bytes = b"") -> bytes:
        """pre + the rows at `where` as `dumps` writes a list nested two levels deep (the "offers" of a body) + post;
        each row's text is cached (freshness moves hourly, so the cache is the hour's)."""
        if self._json_hour != now_hour:
            self._json = [None] * self.n
            self._json_hour = now_hour
        cache = self._json
        parts = []
        for i in where.tolist():
            text = cache[i]
            if text is None:
                from gpuquote.service.encoding import dumps_bytes

                text = cache[i] = dumps_bytes(self.row(i, now_hour)).replace(b"\n", b"\n    ")
            parts.append(text)
        return b"".join((pre, b"[\n    ", b",\n    ".join(parts), b"\n  ]", post))


def current() -> Columns:
    """The columns for the store as it is now (rebuilt when its stamp changed)."""
    stamp = store_stamp()
    cols = _CACHE["cols"]
    if cols is not None and _CACHE["stamp"] == stamp:
        return cols
    with _LOCK:
        if _CACHE["cols"] is not None and _CACHE["stamp"] == stamp:
            return _CACHE["cols"]
        reader = open_reader()
        try:
            raw = reader.execute("SELECT * FROM offers WHERE is_current = 1 ORDER BY pk")  # the SQL plan path's order
            cols = Columns(raw, reader.where)
        finally:
            reader.close()
        _CACHE.update(stamp=stamp, cols=cols)
        return cols


def built() -> bool:
    """The columns were built at least once (they may be stale: `current()` rebuilds them)."""
    return _CACHE["cols"] is not None


def ready(max_offers: int = 50_000) -> bool:
    """The columns are built for the store as it is now and hold at most `max_offers` offers: a query or plan
    will not rebuild them, and building a plan table for a new filter costs milliseconds."""
    cols = _CACHE["cols"]
    return cols is not None and cols.n <= max_offers and _CACHE["stamp"] == store_stamp()


class Page(list):
    """The rows of a page (a list of dicts, as always) that also knows their positions in the columns, so
    `offers_json` can splice in each row's cached JSON text instead of encoding it again. Built with
    rows=False (the API's JSON answer), it holds no dicts at all until `materialize()`."""

    def __init__(self, rows: list[dict], where: np.ndarray, cols: Columns, now_hour: str, built: bool = True):
        super().__init__(rows)
        self.where = where
        self.cols = cols
        self.now_hour = now_hour
        self.built = built

    def materialize(self) -> Page:
        if not self.built:
            self.extend(self.cols.row(int(i), self.now_hour) for i in self.where)
            self.built = True
        return self


def query(f: OfferFilter, offset: int = 0, rows: bool = True
          ) -> tuple[list[dict], int, list[str], np.ndarray, Columns]:
    """(rows of the page, total matches, providers of all matches, indices of all matches, the columns).

    rows=False: the page's rows are not built as dicts (a Page to materialize, or to write with offers_json)."""
    c = current()
    m = c.mask(f)
    idx = np.nonzero(m)[0]
    present = np.nonzero(np.bincount(c.code_arr["provider"][idx], minlength=len(c.codes["provider"])))[0]
    providers = sorted(c.provider_names[k] for k in present.tolist())
    full = c.full_order(f.sort, f.descending)
    ordered = full[m[full]]  # the catalog sorted once per key; a total order, so filtering keeps it sorted
    page = ordered[offset:offset + f.limit] if f.limit else ordered[offset:]
    now_hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0).isoformat()
    out = Page([], page, c, now_hour, built=False)
    return (out.materialize() if rows else out), int(len(idx)), providers, idx, c


MARK = "\x00gpuquote-offers\x00"


def offers_json(body: dict) -> bytes:
    """`dumps(body)` as UTF-8 for a `list_offers` result, fast: each row's text comes from the per-row cache.

    Byte-identical to dumps (tests/test_offers_summary.py): the encoder writes a value nested d levels deep as
    its standalone text with every newline followed by 2*d more spaces.
    """
    from gpuquote.service.encoding import dumps, dumps_bytes

    rows = body.get("offers")
    if not isinstance(rows, Page) or body.get("currency"):  # *_cny twins: not in the row cache
        if isinstance(rows, Page):
            rows.materialize()
        return dumps_bytes(body)
    if not len(rows.where):
        return dumps_bytes({**body, "offers": []})
    pre, post = dumps_bytes({**body, "offers": MARK}).split(dumps(MARK).encode(), 1)
    return rows.cols.page_json(rows.where, rows.now_hour, pre, post)


def plan_columns(f: OfferFilter) -> tuple[dict[str, list], callable]:
    """`query_offer_columns` from memory, plus a fetch(i) of the full offer row (the planner's callback)."""
    c = current()
    idx = np.nonzero(c.mask(f))[0]
    if f.limit:  # the first `limit` in the filter's sort order, as query_offers returns them
        idx = c.order(idx, f.sort, f.descending)[: f.limit]
    now_hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0).isoformat()
    cols = {k: [v[i] for i in idx] for k, v in c.plan.items()}
    return cols, (lambda i: c.row(int(idx[i]), now_hour))


def plan_table(f: OfferFilter):
    """The planner's OfferTable for this filter, from memory; cached per filter until the store or hour changes
    (building one parses each offer's extras; a plan then only evaluates configurations)."""
    from gpuquote.plan.table import OfferTable

    c = current()
    now_hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0).isoformat()
    key = (now_hour, tuple(f.gpu_ids) if f.gpu_ids is not None else None, f.min_gpus, f.interconnect,
           (f.region or "").lower() or None, f.spot, tuple(f.providers or ()) or None, f.max_price_usd,
           tuple(f.sources or ()) or None, f.limit, f.sort if f.limit else None, f.descending if f.limit else None)
    with _LOCK:
        hit = c._tables.get(key)
    if hit is not None:
        return hit, c.where
    cols, fetch = plan_columns(f)
    table = OfferTable.from_columns(cols, fetch)
    table.shared = True  # kept and planned again: the planner may remember work done on it
    with _LOCK:
        if len(c._tables) >= 256:
            c._tables.pop(next(iter(c._tables)))
        c._tables[key] = table
    return table, c.where


def advice_table(parts: list[OfferFilter]):
    """The concatenation of the plan tables of these filters (the upgrade advice's offers), cached with them."""
    from gpuquote.plan.table import OfferTable

    tables = [plan_table(f)[0] for f in parts]
    c = current()
    key = ("advice", *(id(t) for t in tables))
    with _LOCK:
        hit = c._tables.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[1], tables, strict=True)):
        return hit[0]
    out = tables[0]
    for t in tables[1:]:
        out = OfferTable.concat(out, t)
    out.shared = True
    with _LOCK:
        c._tables[key] = (out, tables)  # the parts kept alive with it, so their ids stay theirs
    return out


__all__ = ["Columns", "Page", "advice_table", "built", "current", "enable", "enabled", "offers_json", "plan_columns",
           "plan_table", "query", "ready", "store_stamp"]
