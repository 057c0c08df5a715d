"""`gpuquote serve` as a user runs it: a real process, bound to 127.0.0.1 by default."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from conftest import SRC

pytest.importorskip("uvicorn")


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_serve_binds_loopback_by_default_and_answers(tmp_path):
    import httpx

    env = dict(os.environ, PYTHONPATH=str(SRC), GPUQUOTE_HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "gpuquote", "serve", "--port", "0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = None
        deadline = time.monotonic() + 30
        lines = []
        while time.monotonic() < deadline and url is None:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"running on (http://[\d.]+:\d+)", line)
            url = m.group(1) if m else None
        assert url, "".join(lines)
        assert url.startswith("http://127.0.0.1:")
        r = httpx.get(url + "/api/health", timeout=10)
        assert r.status_code == 200 and r.json()["status"] == "ok"
        assert "server" not in {k.lower() for k in r.headers}
        assert httpx.get(url + "/offers?gpu=a100", timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_serve_bad_flags_are_one_line_exit_2(cli):
    res = cli("serve", "--workers", "0")
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "--workers" in res.stderr
    res = cli("serve", "--log-level", "loud")
    assert res.returncode == 2 and "critical, error, warning, info, debug" in res.stderr
