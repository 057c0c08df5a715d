"""The web app: `create_app()` for tests and embedding, module-level `app` for uvicorn/gunicorn workers.

    uvicorn gpuquote.web.app:app --host 127.0.0.1 --port 8000 --workers 4

Errors: BadInput -> 400 JSON {error, field, accepted}; validation -> 422 naming the field; anything
else -> 500 JSON without a traceback (logged server-side). HTML pages show the same messages in page.
"""

from __future__ import annotations

import gc
import logging
import os
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.staticfiles import StaticFiles

from gpuquote.errors import BadInput
from gpuquote.service import columns
from gpuquote.service.encoding import dumps
from gpuquote.web import common, compress
from gpuquote.web.deadline import RequestDeadline
from gpuquote.web.fastpath import OffersFastPath
from gpuquote.web.middleware import BodyLimit, ResponseCache, SecurityHeaders

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"
log = logging.getLogger("gpuquote.web")
DEFAULT_MAX_BODY = 2 * 2**20  # 2 MiB: quote files are kilobytes; anything bigger is a mistake or an attack


def plotly_js() -> Path | None:
    """plotly.min.js from the installed `plotly` package (served locally: no CDN, works offline)."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("plotly")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    p = Path(next(iter(spec.submodule_search_locations))) / "package_data" / "plotly.min.js"
    return p if p.is_file() else None


def _json(status: int, body: dict) -> Response:
    return Response(dumps(body), status_code=status, media_type="application/json")


def _wants_html(request: Request) -> bool:
    return not request.url.path.startswith("/api/") and request.url.path != "/openapi.json" and \
        request.query_params.get("format") != "json"


def _validation_body(exc: RequestValidationError) -> dict:
    errs = exc.errors()
    first = errs[0] if errs else {}
    loc = [str(x) for x in first.get("loc", ()) if x not in ("body", "query", "path", "header", "cookie")]
    field = ".".join(loc) or (str(first.get("loc", ["body"])[0]) if first.get("loc") else "body")
    accepted = None
    ctx = first.get("ctx") or {}
    if "expected" in ctx:
        accepted = [x.strip().strip("'") for x in str(ctx["expected"]).replace(" or ", ",").split(",") if x.strip()]
    msg = f"{field}: {first.get('msg', 'invalid value')}" + (f"; accepted: {', '.join(accepted)}" if accepted else "")
    detail = [{"field": ".".join(str(x) for x in e.get("loc", ())), "message": e.get("msg"), "type": e.get("type")}
              for e in errs[:20]]
    return {"error": msg, "field": field, "accepted": accepted, "detail": detail}


def _warm() -> None:
    """What the first request would otherwise pay: the in-memory catalog and the service modules."""
    import importlib

    for mod in ("plan", "quotes", "offers", "estimate", "money"):
        importlib.import_module(f"gpuquote.service.{mod}")
    if columns.enabled():
        columns.current().warm()
        from gpuquote.web import fastpath

        for q in (b"limit=1", b"sort=provider&desc=true&limit=1", b"gpu=a100&spot=false&max_price_usd=9&limit=1"):
            fastpath.answer(q)  # the request path itself, once (imports, first calls)


@asynccontextmanager
async def lifespan(app: FastAPI):
    """Warm up, then move everything loaded so far out of the garbage collector's reach.

    A server holds the catalog, the estimate caches and every module as long-lived objects; CPython's cyclic
    collector would otherwise rescan them all each time a request's temporary objects trigger a full
    collection (a third of a 2,000-quote check). `gc.freeze()` parks them in the permanent generation, and a
    larger first threshold makes young collections rarer (requests allocate many short-lived dicts).
    """
    from starlette.concurrency import run_in_threadpool

    try:
        await run_in_threadpool(_warm)
    except Exception:  # a broken store must not stop the server: requests report it
        log.exception("warm-up failed")
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, 20, 20)
    yield


GC_THRESHOLD = 50_000


def create_app(max_body_bytes: int | None = None, fast_path: bool = True) -> FastAPI:
    """The app; fast_path=False leaves out web/fastpath.py's layer (the module-level `app` puts it outside)."""
    from gpuquote import __version__
    from gpuquote.web import api, pages, plan_page, rfq_watch

    app = FastAPI(title="gpuquote", version=__version__, openapi_url="/openapi.json", docs_url=None,
                  redoc_url=None, description="GPU offers, job plans and quote checks. Every body equals the "
                  "CLI's `--json` for the same arguments.", lifespan=lifespan)

    @app.exception_handler(BadInput)
    async def bad_input(request: Request, exc: BadInput):
        if _wants_html(request):
            return pages.error_page(request, 400, str(exc))
        return _json(400, exc.to_dict())

    @app.exception_handler(common.NotAvailable)
    async def not_available(request: Request, exc: common.NotAvailable):
        if _wants_html(request):
            return pages.error_page(request, 501, str(exc))
        return _json(501, {"error": str(exc), "field": None, "accepted": None})

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        body = _validation_body(exc)
        if _wants_html(request):
            return pages.error_page(request, 422, body["error"])
        return _json(422, body)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        field = {404: "path", 405: "method"}.get(exc.status_code, "request")
        msg = f"{field}: {exc.detail}" if exc.status_code in (404, 405) else str(exc.detail)
        if exc.status_code == 404:
            msg = f"path: no page or API route {request.url.path}"
        if _wants_html(request) and exc.status_code == 404:
            return pages.error_page(request, 404, msg)
        return _json(exc.status_code, {"error": msg, "field": field, "accepted": None})

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception):
        # Starlette re-raises after this answer, so the server log gets the traceback; the client does not.
        if _wants_html(request):
            return HTMLResponse("<!doctype html><title>gpuquote: internal error</title><h1>Internal error</h1>"
                                "<p>The server logged the details.</p>", status_code=500)
        return _json(500, {"error": "internal error; the server logged the details", "field": None,
                           "accepted": None})

    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(plan_page.router)
    app.include_router(rfq_watch.api)
    app.include_router(rfq_watch.pages)

    js = plotly_js()

    @app.get("/static/vendor/plotly.min.js", include_in_schema=False)
    def plotly_min_js(request: Request):
        if js is None:
            return Response("/* plotly is not installed: pip install plotly */",
                            media_type="text/javascript", status_code=404)
        if "gzip" in request.headers.get("accept-encoding", ""):
            return compress.gzip_file_response(js, "text/javascript")
        return FileResponse(js, media_type="text/javascript", headers={"cache-control": "public, max-age=86400"})

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    limit = max_body_bytes or int(os.environ.get("GPUQUOTE_WEB_MAX_BODY", DEFAULT_MAX_BODY))
    # The last added runs first: the body limit before anything buffers a body, then the cache (a hit
    # replays the headers SecurityHeaders added when it was stored), then the security headers.
    app.add_middleware(SecurityHeaders)
    app.add_middleware(ResponseCache, paths=("/api/offers", "/api/gpus", "/api/history", "/api/plan",
                                             "/api/estimate", "/api/examples"))
    app.add_middleware(BodyLimit, max_bytes=limit)
    # The cache keeps plain bodies, each answer is compressed for the client that asks for it.
    compress.add_gzip(app)
    app.add_middleware(RequestDeadline)  # the time limit covers reading the body too
    if fast_path:
        app.add_middleware(OffersFastPath)  # outermost: GET /api/offers in a third of the CPU (web/fastpath.py)
    columns.enable()  # offers, summaries and plans answered from the in-memory catalog (service/columns.py)
    return app


# What uvicorn and gunicorn serve: the fast path outside FastAPI itself (its error and telemetry layers cost
# another 15% of a small request); attributes (openapi, state, routes...) are the FastAPI app's.
app = OffersFastPath(create_app(fast_path=False))
