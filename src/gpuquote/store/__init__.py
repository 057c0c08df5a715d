"""Persistence: snapshots per source (append-only), the current catalog, price history."""

from gpuquote.store.catalog import (
    SORT_COLUMNS,
    ImportResult,
    OfferFilter,
    import_offers,
    list_snapshots,
    query_offers,
    raw_responses,
)
from gpuquote.store.db import copy_store, migrate, read_engine, write_engine
from gpuquote.store.rows import freshness, row_to_dict

__all__ = [
    "SORT_COLUMNS", "ImportResult", "OfferFilter", "copy_store", "freshness", "import_offers", "list_snapshots",
    "migrate", "query_offers", "raw_responses", "read_engine", "row_to_dict", "write_engine",
]
