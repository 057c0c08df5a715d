"""web/fastpath.py answers GET /api/offers with the route's exact bytes and headers, and hands on the rest."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from gpuquote.service import columns

FAST = [
    "", "gpu=a100-80gb", "gpu=A100%2080GB%20SXM4&sort=price&limit=30", "gpu=h100&sort=provider&desc=true&limit=7",
    "sort=node_price&limit=50&offset=3200", "spot=false&region=us-east", "spot=true&limit=5",
    "provider=aws&provider=gcp&min_gpus=8&max_price_usd=3", "provider=aws,gcp&limit=3",
    "memory_gib=80&form_factor=sxm&interconnect=nvswitch", "sort=vcpus&desc=1&limit=100", "gpu=&limit=4",
    "limit=2&limit=9", "form=purchase", "sort=fetched&desc=true&limit=40&offset=40", "unknown=1&limit=3",
]
# handed on to the route, which gives its own answers (422, 400, CSV, currency twins)
ROUTE = [
    "limit=0", "limit=abc", "sort=cheapest", "gpu=not-a-gpu-xyz", "offset=-1", "format=csv&limit=3",
    "currency=CNY&limit=2", "interconnect=infiniband", "max_price_usd=nan", "limit=", "spot=maybe",
    "gpu=" + "x" * 101,
]


@pytest.fixture(scope="module")
def clients():
    from gpuquote.web.app import create_app

    fast, slow = create_app(), create_app()
    with TestClient(fast) as f, TestClient(slow) as s:
        # the second app's fast path off: every request goes through FastAPI's route
        s.get("/api/health")
        _fastpath(slow).enabled = False
        yield f, s, _fastpath(fast)
    columns.enable(False)


def _fastpath(app):
    from gpuquote.web.fastpath import OffersFastPath

    layer = app.middleware_stack
    while layer is not None and not isinstance(layer, OffersFastPath):
        layer = getattr(layer, "app", None)
    assert layer is not None, "OffersFastPath is in the middleware stack"
    return layer


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("qs", FAST + ROUTE)
def test_fast_path_equals_the_route(clients, qs, gz):
    fast, slow, layer = clients
    headers = {"accept-encoding": "gzip" if gz else "identity"}
    fast.get("/api/offers?limit=1")  # this test's store (conftest) loaded into the in-memory catalog
    before = layer.hits
    a = fast.get("/api/offers?" + qs, headers=headers)
    assert layer.hits == before + (qs in FAST), "answered by the layer that should answer it"
    b = slow.get("/api/offers?" + qs, headers=headers)
    assert a.status_code == b.status_code
    assert a.content == b.content
    keep = ("content-type", "content-encoding", "vary", "x-content-type-options", "x-frame-options",
            "referrer-policy", "content-security-policy")
    assert {k: a.headers.get(k) for k in keep} == {k: b.headers.get(k) for k in keep}


def test_fast_path_answers_the_plain_queries_itself(clients):
    fast, _, layer = clients
    fast.get("/api/offers?limit=1")
    before = layer.hits
    r = fast.get("/api/offers?gpu=a100-80gb&limit=5", headers={"accept-encoding": "gzip"})
    assert r.status_code == 200 and len(r.json()["offers"]) == 5
    assert layer.hits == before + 1
    fast.get("/api/offers?format=csv&limit=3")
    fast.get("/api/offers?limit=0")
    assert layer.hits == before + 1, "CSV and refused values go to the route"


def test_fast_path_gzip_is_real_gzip(clients):
    from gpuquote.web import fastpath

    raw = clients[0].get("/api/offers?gpu=a100&limit=40", headers={"accept-encoding": "gzip"})
    body = fastpath.answer(b"gpu=a100&limit=40")
    assert body is not None and len(body) > fastpath.GZIP_MIN
    assert raw.headers["content-encoding"] == "gzip"
    assert int(raw.headers["content-length"]) < len(body) / 3, "compressed on the wire"
    assert raw.content == body and raw.json()["count"] > 40  # decoded by the client: the service's bytes


def test_the_served_app_has_the_fast_path_outside_fastapi(clients):
    """What uvicorn serves (`gpuquote.web.app:app`): the fast path wraps the FastAPI app itself, forwards its
    attributes, and answers like the route; everything else goes through FastAPI as before."""
    from fastapi import FastAPI

    from gpuquote.web.app import app
    from gpuquote.web.fastpath import OffersFastPath

    assert isinstance(app, OffersFastPath) and isinstance(app.app, FastAPI)
    assert app.title == "gpuquote" and "/api/offers" in app.openapi()["paths"]
    _, slow, _ = clients
    with TestClient(app) as c:
        c.get("/api/offers?limit=1")
        before = app.hits
        a = c.get("/api/offers?gpu=h100&limit=12&sort=provider")
        assert app.hits == before + 1
        assert a.content == slow.get("/api/offers?gpu=h100&limit=12&sort=provider").content
        assert c.get("/api/offers?limit=0").status_code == 422 and app.hits == before + 1
        assert c.get("/api/health").json()["status"] == "ok"


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_concurrent_clients_on_a_real_server_are_served_in_turn(clients):
    """uvicorn on loopback, 25 keep-alive connections at once: every answer is the route's, and the requests
    queued for their turn (web/turns.py) instead of being run in the kernel's ready-list order."""
    import asyncio
    import socket
    import threading
    import time

    import uvicorn

    from gpuquote.web import turns
    from gpuquote.web.app import create_app
    from gpuquote.web.fastpath import OffersFastPath

    _, slow, _ = clients
    app = OffersFastPath(create_app(fast_path=False))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    queries = [f"gpu={g}&sort={s}&limit={5 + i}&offset={i}" for i, (g, s) in enumerate(
        (g, s) for g in ("a100", "h100", "l4", "a10", "v100") for s in ("price", "provider", "gpu", "vcpus", "memory"))]

    async def one_client(qs: list[str]) -> list[tuple[str, int, bytes]]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        out = []
        try:
            for q in qs:
                writer.write(f"GET /api/offers?{q} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
                await writer.drain()
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                n = next(int(v) for k, _, v in (h.partition(":") for h in head[1:]) if k.lower() == "content-length")
                out.append((q, int(head[0].split()[1]), await reader.readexactly(n)))
        finally:
            writer.close()
        return out

    async def main():
        per = [[queries[(c * 7 + k) % len(queries)] for k in range(8)] for c in range(25)]
        return [x for got in await asyncio.gather(*(one_client(p) for p in per)) for x in got]

    try:
        got = asyncio.run(main())
        served = [(t.served, t.waited, len(t.waiting)) for t in list(turns._TURNS.values()) if t.served >= 200]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
    assert len(got) == 200 and app.hits >= 200
    expected = {q: slow.get("/api/offers?" + q).content for q in queries}
    assert all(st == 200 and body == expected[q] for q, st, body in got)
    assert len(served) == 1 and served[0][1] > 0 and served[0][2] == 0, "requests queued, and all were served"
