"""Run the app on 127.0.0.1 in a background thread: for the browser tests, screenshots and the benchmark."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def serve_in_thread(host: str = "127.0.0.1", port: int = 0, timeout_s: float = 20.0,
                    log_level: str = "warning") -> Iterator[str]:
    """Yields the base URL (http://127.0.0.1:PORT) of a real uvicorn server; stops it on exit."""
    import uvicorn

    from gpuquote.web.app import create_app

    config = uvicorn.Config(create_app(), host=host, port=port, log_level=log_level, lifespan="off",
                            server_header=False)
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # not the main thread
    th = threading.Thread(target=server.run, name="gpuquote-web", daemon=True)
    th.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not th.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the web server did not start")
        time.sleep(0.02)
    sock = server.servers[0].sockets[0]
    bound_port = sock.getsockname()[1]
    try:
        yield f"http://{host}:{bound_port}"
    finally:
        server.should_exit = True
        th.join(timeout=10)
