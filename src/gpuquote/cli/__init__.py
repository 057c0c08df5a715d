"""The `gpuquote` command: a thin shell over the service layer.

Each command lives in a small module of this package that registers itself on `app`; commands
only parse input and format output. Heavy imports stay inside the command functions so that a
cold `gpuquote offers` starts fast.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from gpuquote.i18n import t

app = typer.Typer(
    name="gpuquote",
    help=t("app.help"),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# One module per command (group); each defines register(app).
_COMMAND_MODULES = (
    "gpus_cmd",
)

for _name in _COMMAND_MODULES:
    importlib.import_module(f"gpuquote.cli.{_name}").register(app)


def main(argv: list[str] | None = None) -> None:
    """Entry point: BadInput -> one line on stderr and exit 2; any other error -> exit 1."""
    try:  # typer >= 0.17 vendors click as typer._click
        from typer import _click as click
    except ImportError:  # pragma: no cover
        import click

    from gpuquote.errors import GpuquoteError

    try:
        rv = app(args=argv, standalone_mode=False, prog_name="gpuquote")
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.exceptions.ClickException as e:
        msg = " ".join(e.format_message().split())
        print(f"{t('error.prefix')}: {msg}", file=sys.stderr)
        sys.exit(2)
    except GpuquoteError as e:
        print(f"{t('error.prefix')}: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # internal error: one line, traceback on demand
        if os.environ.get("GPUQUOTE_DEBUG"):
            raise
        print(f"{t('error.prefix')}: internal error: {type(e).__name__}: {e} (set GPUQUOTE_DEBUG=1 for a traceback)",
              file=sys.stderr)
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)
