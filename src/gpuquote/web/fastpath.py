"""GET /api/offers answered before FastAPI's routing: the same bytes, a third of the CPU.

Why: from the in-memory catalog an offers query costs ~0.3 ms, while FastAPI's per-request machinery (the
dependency solver, the query model, five middleware layers) costs about twice that; with
50 concurrent clients on one worker the queue multiplies it into the p99. This layer parses the query with
the route's own query model (web/queries.py: `OffersQuery`, so the same bounds and accepted values), calls the
same service (`list_offers` + `offers_json`) and adds what the outer layers would (security headers, gzip).

Whatever it does not fully own it hands on untouched: another path or method, `format=csv`, `currency`, a
value the model refuses (the route answers the 422 with its own message), a service error (the route answers
the 400), or a catalog not built yet (the server's warm-up builds it). tests/test_fastpath.py checks that the
answers equal the route's.
GPUQUOTE_WEB_FASTPATH=0 turns it off.
"""

from __future__ import annotations

import gzip
import os
from urllib.parse import parse_qsl

from pydantic import ValidationError

from gpuquote.errors import BadInput
from gpuquote.web.compress import LEVEL
from gpuquote.web.middleware import SECURITY_HEADERS
from gpuquote.web.queries import OffersQuery
from gpuquote.web.turns import turn

GZIP_MIN = 1024  # as compress.add_gzip
PATH = "/api/offers"


def _params(query_string: bytes) -> dict | None:
    """Starlette's reading of a query: the last value of each name, every value of `provider`."""
    out: dict = {}
    providers: list[str] = []
    for k, v in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        if k == "provider":
            providers.append(v)
        elif k == "currency":
            if v:
                return None  # *_cny twins: the route
        else:
            out[k] = v
    if providers:
        out["provider"] = providers
    return out


def answer(query_string: bytes) -> bytes | None:
    """The body the route would send for this query, or None when the route must answer."""
    from gpuquote.service import columns

    if not columns.enabled() or not columns.built():  # (a stale catalog is rebuilt by the query, as the route does)
        return None
    raw = _params(query_string)
    if raw is None:
        return None
    try:
        q = OffersQuery.model_validate(raw)
    except ValidationError:
        return None
    if q.format != "json" or q.currency:
        return None
    from gpuquote.service.money import chosen
    from gpuquote.service.offers import list_offers

    try:
        if chosen(None) != "USD":  # GPUQUOTE_CURRENCY set: the route adds the twins
            return None
        data = list_offers(**q.list_args(), rows=False)
    except BadInput:
        return None
    return columns.offers_json(data)


class OffersFastPath:
    """Outermost ASGI layer: answers GET /api/offers itself when it can (see the module docstring)."""

    def __init__(self, app):
        self.app = app
        self.enabled = os.environ.get("GPUQUOTE_WEB_FASTPATH", "1") not in ("0", "false", "no")
        self.hits = 0

    def __getattr__(self, name: str):  # wrapping the FastAPI app itself: its openapi(), state, routes...
        inner = self.__dict__.get("app")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)

    async def __call__(self, scope, receive, send):
        if not (self.enabled and scope["type"] == "http" and scope["path"] == PATH and scope["method"] == "GET"):
            return await self.app(scope, receive, send)
        async with turn():  # served in arrival order (web/turns.py); the send below is outside the turn
            try:
                body = answer(scope.get("query_string", b""))
            except Exception:  # anything unexpected: the route answers, and its error handling logs it
                body = None
        if body is None:
            return await self.app(scope, receive, send)
        self.hits += 1
        headers = [(b"content-type", b"application/json")]
        if len(body) >= GZIP_MIN:  # as Starlette's GZipMiddleware: vary on any large body, gzip if accepted
            headers.append((b"vary", b"Accept-Encoding"))
            accept = next((v for k, v in scope["headers"] if k == b"accept-encoding"), b"")
            if b"gzip" in accept:
                body = gzip.compress(body, compresslevel=LEVEL)
                headers.append((b"content-encoding", b"gzip"))
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers + SECURITY_HEADERS})
        await send({"type": "http.response.body", "body": body})
