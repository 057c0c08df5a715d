"""Compression: gzip for every text answer (JSON, HTML, CSS, JS, CSV), the chart library precompressed once.

Brotli is not used: the `brotli` packages on PyPI are compiled wheels, and the stdlib has no encoder.
"""

from __future__ import annotations

import gzip
from functools import lru_cache
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import Response
from starlette.middleware.gzip import GZipMiddleware

LEVEL = 5  # ~3x smaller JSON for ~1 ms per 100 KB; level 9 costs 3x the CPU for a few % more


def add_gzip(app: FastAPI) -> None:
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=LEVEL)


@lru_cache(maxsize=4)
def _gzipped(path: str, mtime_ns: int) -> bytes:
    return gzip.compress(Path(path).read_bytes(), compresslevel=9, mtime=0)


def gzip_file_response(path: Path, media_type: str) -> Response:
    """A large static file (plotly.min.js, 4.8 MB -> ~1.4 MB) compressed once at level 9, then from memory."""
    body = _gzipped(str(path), path.stat().st_mtime_ns)
    return Response(body, media_type=media_type, headers={"content-encoding": "gzip", "vary": "Accept-Encoding",
                                                          "cache-control": "public, max-age=86400"})
