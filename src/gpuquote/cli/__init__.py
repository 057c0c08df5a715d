"""The `gpuquote` command: a thin shell over the service layer.

Each command lives in a small module of this package that registers itself on `app`; commands
only parse input and format output. Heavy imports stay inside the command functions so that a
cold `gpuquote offers` starts fast.
"""

from __future__ import annotations

import importlib
import os
import sys

from gpuquote.i18n import click_message, install_click_catalog, t

# One module per command (group); each defines register(app).
_COMMAND_MODULES = (
    "gpus_cmd",
    "offers_cmd",
    "import_cmd",
    "estimate_cmd",
    "probe_cmd",
    "refresh_cmd",
    "quote_cmd",
    "tco_cmd",
    "plan_cmd",
    "serve_cmd",
    "rfq_cmd",
    "watch_cmd",
)
_APP = None


def build_app():
    """The Typer app with every command registered (built on first use: `gpuquote offers` may not need it)."""
    global _APP
    if _APP is None:
        import typer

        app = typer.Typer(
            name="gpuquote",
            help=t("app.help"),
            no_args_is_help=True,
            add_completion=False,
            pretty_exceptions_enable=False,
            rich_markup_mode=None,
        )
        for _name in _COMMAND_MODULES:
            importlib.import_module(f"gpuquote.cli.{_name}").register(app)
        install_click_catalog()
        _APP = app
    return _APP


def __getattr__(name: str):
    if name == "app":
        return build_app()
    raise AttributeError(name)


_UNSAFE = {c: f"\\u{c:04x}" for c in (*range(0x20), 0x7f, 0x200e, 0x200f, 0x061c, *range(0x202a, 0x202f),
                                       *range(0x2066, 0x206a))}


def one_line(msg: str, limit: int = 2000) -> str:
    """An error message as one safe terminal line: control and bidi-override characters escaped (a hostile
    value must not reorder or clear the user's terminal), and cut at `limit` characters."""
    s = msg.translate(_UNSAFE)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def main(argv: list[str] | None = None) -> None:
    """Entry point: BadInput -> one line on stderr and exit 2; any other error -> exit 1."""
    from gpuquote.errors import GpuquoteError

    try:
        from gpuquote.cli.fast import try_offers

        args = list(sys.argv[1:] if argv is None else argv)
        if try_offers(args):
            sys.exit(0)
        rv = build_app()(args=args, standalone_mode=False, prog_name="gpuquote")
    except GpuquoteError as e:
        from gpuquote.i18n import localize

        print(f"{t('error.prefix')}: {one_line(str(localize(getattr(e, 'message', None) or str(e))))}",
              file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:
        # click's (or typer's vendored click's) exceptions, matched by name: Exit, Abort, usage errors.
        names = {c.__name__ for c in type(e).__mro__}
        if "Exit" in names:
            sys.exit(getattr(e, "exit_code", 0))
        if "Abort" in names:
            sys.exit(130)
        if "ClickException" in names:
            msg = click_message(" ".join(e.format_message().split()))
            print(f"{t('error.prefix')}: {msg}", file=sys.stderr)
            sys.exit(2)
        if os.environ.get("GPUQUOTE_DEBUG"):
            raise
        print(f"{t('error.prefix')}: internal error: {type(e).__name__}: {e} (set GPUQUOTE_DEBUG=1 for a traceback)",
              file=sys.stderr)
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)
