"""Pure ASGI middleware: bounded request bodies, security headers, and a response cache for the API.

Pure ASGI (not BaseHTTPMiddleware) because these wrap every request and must add microseconds, not
milliseconds: the offers API has a p99 budget of 50 ms with 50 concurrent clients on two cores.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from pathlib import Path

from gpuquote.service.encoding import dumps

SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    # Scripts only from this server (no inline script, no CDN); Plotly needs inline styles.
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                 b"img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; "
                                 b"frame-ancestors 'none'; form-action 'self'"),
]


def _json_error(status: int, message: str, field: str) -> tuple[int, bytes]:
    return status, dumps({"error": message, "field": field, "accepted": None}).encode()


async def _send_simple(send, status: int, body: bytes, ctype: bytes = b"application/json") -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", ctype), (b"content-length", str(len(body)).encode()),
                            *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """Refuse bodies over max_bytes with 413 (by Content-Length, and by counting a chunked stream)."""

    def __init__(self, app, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        msg = f"body: request body over {self.max_bytes} bytes; upload a smaller file"
        for k, v in scope.get("headers", ()):
            if k == b"content-length":
                try:
                    n = int(v)
                except ValueError:
                    n = -1
                if n < 0 or n > self.max_bytes:
                    status, body = _json_error(413, msg, "body")
                    return await _send_simple(send, status, body)
        seen = 0
        state = {"started": False, "refused": False}

        async def counted_receive():
            nonlocal seen
            m = await receive()
            if m["type"] == "http.request":
                seen += len(m.get("body", b""))
                if seen > self.max_bytes and not state["refused"]:
                    state["refused"] = True
                    if not state["started"]:
                        state["started"] = True
                        status, body = _json_error(413, msg, "body")
                        await _send_simple(send, status, body)
                    return {"type": "http.disconnect"}  # the app stops reading; its answer is dropped
            return m

        async def guarded_send(m):
            if state["refused"]:
                return
            if m["type"] == "http.response.start":
                state["started"] = True
            await send(m)

        await self.app(scope, counted_receive, guarded_send)


class SecurityHeaders:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(m):
            if m["type"] == "http.response.start":
                have = {k.lower() for k, _ in m.get("headers", [])}
                m = dict(m)
                m["headers"] = list(m.get("headers", [])) + [h for h in SECURITY_HEADERS if h[0] not in have]
            await send(m)

        await self.app(scope, receive, with_headers)


def store_stamp() -> tuple:
    """Changes whenever the store may have changed: SQLite file and WAL stat, else the newest snapshot id."""
    from gpuquote.config import db_url

    url = db_url()
    if url.startswith("sqlite:///"):
        p = Path(url[len("sqlite:///"):])
        out = [url]
        for f in (p, p.with_name(p.name + "-wal")):
            try:
                st = f.stat()
                out.append((st.st_mtime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)
    return (url, _server_stamp(url))


_STAMP_ENGINES: dict[str, object] = {}


def _server_stamp(url: str):
    """The newest snapshot id (every import and refresh adds one): one indexed query on a pooled connection."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import SQLAlchemyError

    eng = _STAMP_ENGINES.get(url)
    if eng is None:
        eng = _STAMP_ENGINES[url] = create_engine(url, pool_pre_ping=True, pool_size=2)
    try:
        with eng.connect() as c:
            return c.execute(text("SELECT COALESCE(MAX(id), 0) FROM snapshots")).scalar()
    except SQLAlchemyError:
        return ("no-store", time.monotonic())  # never cached across requests: a unique stamp


class ResponseCache:
    """Caches successful bodies of deterministic API requests (GET, and POST plan/estimate/quote JSON).

    Key: method, path, query string, body hash and the store stamp (SQLite: the file's and WAL's stat;
    PostgreSQL: the newest snapshot id); entries also expire after `ttl_s` (freshness bands move with the
    clock). Bounded by entry count and bytes. GPUQUOTE_WEB_CACHE=0 turns it off (the benchmark reports both).
    """

    def __init__(self, app, paths: tuple[str, ...], ttl_s: float = 60.0, max_entries: int = 512,
                 max_bytes: int = 64 * 2**20, max_entry_bytes: int = 8 * 2**20):
        self.app = app
        self.paths = paths
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_entry_bytes = max_entry_bytes
        self.enabled = os.environ.get("GPUQUOTE_WEB_CACHE", "1") not in ("0", "false", "no")
        self._d: OrderedDict[tuple, tuple[float, int, list, bytes]] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def clear(self) -> None:
        self._d.clear()
        self._bytes = 0

    async def __call__(self, scope, receive, send):
        if (not self.enabled or scope["type"] != "http" or scope["method"] not in ("GET", "POST")
                or not scope["path"].startswith(self.paths)):
            return await self.app(scope, receive, send)
        body = b""
        if scope["method"] == "POST":
            ctype = next((v for k, v in scope["headers"] if k == b"content-type"), b"")
            if not ctype.startswith(b"application/json"):
                return await self.app(scope, receive, send)
            more = True
            while more:
                m = await receive()
                if m["type"] != "http.request":
                    return await self.app(scope, _replay(b"", receive, m), send)
                body += m.get("body", b"")
                more = m.get("more_body", False)
            receive = _replay(body, receive)
        key = (scope["method"], scope["path"], scope.get("query_string", b""),
               hashlib.sha256(body).digest() if body else b"", store_stamp())
        now = time.monotonic()
        hit = self._d.get(key)
        if hit is not None and now - hit[0] < self.ttl_s:
            self._d.move_to_end(key)
            self.hits += 1
            _, status, headers, content = hit
            # a copy: an outer middleware (gzip) edits the headers of the message it is sent in place
            await send({"type": "http.response.start", "status": status, "headers": list(headers)})
            await send({"type": "http.response.body", "body": content})
            return
        self.misses += 1
        captured: dict = {"status": None, "headers": None, "body": [], "ok": True}

        async def capture(m):
            if m["type"] == "http.response.start":
                captured["status"] = m["status"]
                captured["headers"] = list(m.get("headers", []))
            elif m["type"] == "http.response.body":
                captured["body"].append(m.get("body", b""))
                if m.get("more_body"):
                    captured["ok"] = False  # streamed: not cached
            await send(m)

        await self.app(scope, receive, capture)
        if captured["status"] == 200 and captured["ok"]:
            content = b"".join(captured["body"])
            if len(content) <= self.max_entry_bytes:
                self._put(key, (now, 200, captured["headers"], content))

    def _put(self, key, entry) -> None:
        old = self._d.pop(key, None)
        if old:
            self._bytes -= len(old[3])
        self._d[key] = entry
        self._bytes += len(entry[3])
        while self._d and (len(self._d) > self.max_entries or self._bytes > self.max_bytes):
            _, ev = self._d.popitem(last=False)
            self._bytes -= len(ev[3])


def _replay(body: bytes, receive, first: dict | None = None):
    """Hand the buffered body to the app once, then pass through to the real channel (disconnects)."""
    sent = False

    async def replay():
        nonlocal sent
        if not sent:
            sent = True
            return first if first is not None else {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
