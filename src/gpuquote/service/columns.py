"""The current catalog held in memory as NumPy columns, for a long-running server.

Why: a distinct offers query through SQL costs a scan plus one dict per row (~10 ms for the full catalog);
with 50 concurrent clients on two cores that is a p99 of hundreds of ms. Here the rows are read once per
store change (invalidated by the store's stamp: the SQLite file's and WAL's stat, or PostgreSQL's newest
snapshot id), filters are vectorised masks, sorting is one `np.lexsort`, and only the page of rows asked
for is copied out. Results equal the SQL path's (tests/test_offers_summary.py compares both).

The CLI never builds this (a one-shot command pays the load for one query); the web app enables it.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
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
    from gpuquote.config import EMBEDDED_SNAPSHOT, db_url

    url = db_url()
    if url.startswith("sqlite:///"):
        p = Path(url[len("sqlite:///"):])
        out: list = [url]
        for f in (p, p.with_name(p.name + "-wal"), EMBEDDED_SNAPSHOT):
            try:
                st = f.stat()
                out.append((st.st_mtime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)
    r = open_reader()
    try:
        return (url, r.execute("SELECT COALESCE(MAX(id), 0) AS n FROM snapshots")[0]["n"])
    finally:
        r.close()


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
        self._json: dict[tuple[int, int], str] = {}
        self._json_hour = ""
        self._tables: dict[tuple, object] = {}

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

    def row(self, i: int, now_hour: str) -> dict:
        d = dict(self.rows[i])
        d["freshness"] = _freshness_cached(self.fetched_at[i], now_hour) if self.fetched_at[i] else "unknown"
        return d

    def row_json(self, i: int, now_hour: str, depth: int) -> str:
        """Row i as `dumps` writes it nested `depth` levels deep (cached per row; freshness moves hourly)."""
        if self._json_hour != now_hour:
            self._json.clear()
            self._json_hour = now_hour
        text = self._json.get((i, depth))
        if text is None:
            from gpuquote.service.encoding import dumps

            text = dumps(self.row(i, now_hour))
            text = self._json[(i, depth)] = text.replace("\n", "\n" + "  " * depth) if depth else text
        return text


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


class Page(list):
    """The rows of a page (a list of dicts, as always) that also knows their positions in the columns, so
    `offers_json` can splice in each row's cached JSON text instead of encoding it again."""

    def __init__(self, rows: list[dict], where: np.ndarray, cols: Columns, now_hour: str):
        super().__init__(rows)
        self.where = where
        self.cols = cols
        self.now_hour = now_hour


def query(f: OfferFilter, offset: int = 0) -> tuple[list[dict], int, list[str], np.ndarray, Columns]:
    """(rows of the page, total matches, providers of all matches, indices of all matches, the columns)."""
    c = current()
    idx = np.nonzero(c.mask(f))[0]
    inv = {k: v for v, k in c.codes["provider"].items()}
    providers = sorted(inv[int(k)] for k in np.unique(c.code_arr["provider"][idx]))
    ordered = c.order(idx, f.sort, f.descending)
    page = ordered[offset:offset + f.limit] if f.limit else ordered[offset:]
    now_hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0).isoformat()
    return Page([c.row(int(i), now_hour) for i in page], page, c, now_hour), int(len(idx)), providers, idx, c


MARK = "\x00gpuquote-offers\x00"


def offers_json(body: dict) -> str:
    """`dumps(body)` for a `list_offers` result, fast: each row's text comes from the per-row cache.

    Byte-identical to dumps (tests/test_offers_summary.py): the stdlib encoder writes a value nested d levels
    deep as its standalone text with every newline followed by 2*d more spaces.
    """
    from gpuquote.service.encoding import dumps

    rows = body.get("offers")
    if not isinstance(rows, Page) or not rows or body.get("currency"):  # *_cny twins: not in the row cache
        return dumps(body)
    head = dumps({**body, "offers": MARK})
    items = ",\n    ".join(rows.cols.row_json(int(i), rows.now_hour, 2) for i in rows.where)
    return head.replace(dumps(MARK), "[\n    " + items + "\n  ]", 1)


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
    with _LOCK:
        if len(c._tables) >= 256:
            c._tables.pop(next(iter(c._tables)))
        c._tables[key] = table
    return table, c.where


__all__ = ["Columns", "Page", "current", "enable", "enabled", "offers_json", "plan_columns", "plan_table", "query",
           "store_stamp"]
