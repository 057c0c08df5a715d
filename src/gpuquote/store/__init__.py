"""Persistence: snapshots per source (append-only), the current catalog, price history.

Reads (queries, Reader) avoid importing SQLAlchemy for SQLite stores; writes import it on first use.
"""

from gpuquote.store.queries import (
    SORT_COLUMNS,
    OfferFilter,
    distinct_providers,
    fetch_offer,
    list_snapshots,
    query_offer_columns,
    query_offers,
)
from gpuquote.store.reader import Reader, embedded_reader, open_reader
from gpuquote.store.rows import freshness, row_to_dict

_LAZY = {
    "ImportResult": "gpuquote.store.catalog", "import_offers": "gpuquote.store.catalog",
    "raw_responses": "gpuquote.store.catalog", "write_engine": "gpuquote.store.db",
    "read_engine": "gpuquote.store.db", "copy_store": "gpuquote.store.db", "migrate": "gpuquote.store.db",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = [
    "SORT_COLUMNS", "ImportResult", "OfferFilter", "Reader", "copy_store", "distinct_providers", "embedded_reader",
    "fetch_offer", "freshness", "import_offers", "list_snapshots", "migrate", "open_reader", "query_offer_columns",
    "query_offers", "raw_responses", "read_engine", "row_to_dict", "write_engine",
]
