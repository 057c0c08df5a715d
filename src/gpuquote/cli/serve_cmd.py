"""`gpuquote serve`: the web pages and the JSON API (uvicorn), on 127.0.0.1 unless told otherwise."""

from __future__ import annotations

import typer

from gpuquote.i18n import t


def register(app: typer.Typer) -> None:
    @app.command("serve", help=t("help.serve"))
    def serve(
        host: str = typer.Option("127.0.0.1", "--host", help=t("help.serve.opt.host")),
        port: int = typer.Option(8000, "--port", help=t("help.serve.opt.port")),
        workers: int = typer.Option(1, "--workers", help=t("help.serve.opt.workers")),
        log_level: str = typer.Option("info", "--log-level", help=t("help.serve.opt.log_level")),
    ) -> None:
        """Serve the web page and the JSON API (/api/..., OpenAPI at /openapi.json)."""
        from gpuquote.errors import BadInput

        if not 0 <= port <= 65535:
            raise BadInput(f"--port: must be 0..65535, got {port}", field="port")
        if workers < 1 or workers > 64:
            raise BadInput(f"--workers: must be 1..64, got {workers}", field="workers")
        levels = ("critical", "error", "warning", "info", "debug")
        if log_level not in levels:
            raise BadInput(t("err.not_one_of", field="--log-level",
                             value=log_level, accepted=", ".join(levels)), field="log_level",
                           accepted=list(levels))
        try:
            import uvicorn
        except ImportError:
            raise BadInput("serve: the web extra is not installed; pip install 'gpuquote[web]'",
                           field="serve") from None
        # An import string so that --workers N can start N processes.
        uvicorn.run("gpuquote.web.app:app", host=host, port=port, workers=workers, log_level=log_level,
                    proxy_headers=True, forwarded_allow_ips="127.0.0.1", server_header=False,
                    timeout_graceful_shutdown=5)
        # SIGTERM ends uvicorn within 5 s; a request thread past its deadline (web.deadline) must not keep
        # the process alive after that, so exit without joining worker threads.
        import os
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
