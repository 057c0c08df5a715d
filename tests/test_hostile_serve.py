"""Hostile input against a real `gpuquote serve` on 127.0.0.1: an alias bomb must not hurt the server."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, SRC

pytest.importorskip("uvicorn")
BOMB = (FIXTURES / "bad" / "job-alias-bomb.yaml").read_text(encoding="utf-8")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@pytest.fixture
def server(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(SRC), GPUQUOTE_HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "gpuquote", "serve", "--port", "0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url, lines = None, []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and url is None:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"running on (http://[\d.]+:\d+)", line)
        url = m.group(1) if m else None
    assert url, "".join(lines)
    threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep the pipe drained
    yield proc, url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
@pytest.mark.parametrize("route", ["/api/estimate", "/api/plan"])
def test_alias_bomb_is_refused_fast_and_health_keeps_answering(server, route):
    import httpx

    proc, url = server
    httpx.get(url + "/api/health", timeout=10)  # warm
    health_times: list[float] = []
    stop = threading.Event()

    def poll_health():
        with httpx.Client(timeout=5) as c:
            while not stop.is_set():
                t0 = time.monotonic()
                assert c.get(url + "/api/health").status_code == 200
                health_times.append(time.monotonic() - t0)
                time.sleep(0.05)

    poller = threading.Thread(target=poll_health, daemon=True)
    poller.start()
    t0 = time.monotonic()
    r = httpx.post(url + route, json={"job_yaml": BOMB}, timeout=10)
    took = time.monotonic() - t0
    time.sleep(0.2)
    stop.set()
    poller.join(timeout=5)
    assert 400 <= r.status_code < 500, r.text
    assert took < 2.0
    body = r.json()
    assert body["field"] == "job_yaml" and "alias" in body["error"]
    assert health_times and max(health_times) < 1.0
    assert _rss_mb(proc.pid) < 500


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_sigterm_stops_the_server(server):
    proc, url = server
    proc.terminate()
    assert proc.wait(timeout=10) is not None


def test_deadline_answers_503_while_a_slow_route_runs_on():
    """The real middleware around an app whose thread outlives the limit: 503 at the limit, not later."""
    from gpuquote.web.deadline import RequestDeadline

    release = threading.Event()

    async def slow_app(scope, receive, send):
        await asyncio.to_thread(release.wait, 5)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"late"})

    mw = RequestDeadline(slow_app, timeout_s=0.3, max_overdue=1)
    sent: list[dict] = []

    async def send(m):
        sent.append(m)

    async def receive():
        return {"type": "http.request", "body": b""}

    async def run():
        scope = {"type": "http", "path": "/api/plan", "method": "POST"}
        t0 = time.monotonic()
        await mw(scope, receive, send)
        took = time.monotonic() - t0
        assert sent[0]["status"] == 503 and b"0.3 s" in sent[1]["body"] and took < 1.0
        sent.clear()
        await mw(scope, receive, send)  # the first is still running: refused as busy, at once
        assert sent[0]["status"] == 503 and b"busy" in sent[1]["body"]
        release.set()
        await asyncio.sleep(0.2)
        assert not mw.overdue
        sent.clear()
        await mw({"type": "http", "path": "/api/health"}, receive, send)  # exempt, answered in full
        assert sent[0]["status"] == 200

    asyncio.run(run())
