"""A time limit per request, so that one slow or hostile request never holds a client or the server.

Parsing is bounded first (gpuquote.safeload: size, depth, aliases), so a request rarely gets near
the limit; this is the second line. The app runs in its own task; when the deadline passes first,
the client gets a 503 naming the limit at once and whatever the app sends later is dropped. The
route's thread cannot be killed from outside (Python has no safe way), so it finishes in the
background; while more than `max_overdue` such requests are still running, new heavy requests are
refused with a 503 "busy" instead of piling up. `/api/health` and static files are never limited.
"""

from __future__ import annotations

import asyncio
import os

from gpuquote.i18n import t
from gpuquote.web.middleware import _json_error, _send_simple

DEFAULT_TIMEOUT_S = 20.0
EXEMPT = ("/api/health", "/static/")


class RequestDeadline:
    """Answer 503 when the app has not started its response within timeout_s."""

    def __init__(self, app, timeout_s: float | None = None, max_overdue: int = 4):
        self.app = app
        self.timeout_s = timeout_s or float(os.environ.get("GPUQUOTE_REQUEST_TIMEOUT_S", DEFAULT_TIMEOUT_S))
        self.max_overdue = max_overdue
        self.overdue: set[asyncio.Task] = set()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("path", "").startswith(EXEMPT):
            return await self.app(scope, receive, send)
        if len(self.overdue) >= self.max_overdue:
            status, body = _json_error(503, t("hostile.busy", n=len(self.overdue)), "request")
            return await _send_simple(send, status, body)
        state = {"started": False, "late": False}

        async def guarded_send(m):
            if state["late"]:
                return
            if m["type"] == "http.response.start":
                state["started"] = True
            await send(m)

        task = asyncio.ensure_future(self.app(scope, receive, guarded_send))
        done, _ = await asyncio.wait({task}, timeout=self.timeout_s)
        if task in done:
            return task.result()
        if state["started"]:  # a streaming answer is under way: let it finish
            return await task
        state["late"] = True
        self.overdue.add(task)
        task.add_done_callback(self._finished)
        status, body = _json_error(503, t("hostile.timeout", field="request", limit=self.timeout_s), "request")
        await _send_simple(send, status, body)

    def _finished(self, task: asyncio.Task) -> None:
        self.overdue.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved, so asyncio does not log "never retrieved"
