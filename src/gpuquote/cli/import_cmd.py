"""`gpuquote import SOURCE PATH`: store a downloaded catalog or raw API response, exactly as refresh would."""

from __future__ import annotations

import typer

from gpuquote.cli.common import print_json
from gpuquote.i18n import t


def register(app: typer.Typer) -> None:
    @app.command("import", help=t("help.import"))
    def import_(source: str = typer.Argument(..., help=t("help.import.opt.source")),
                path: str = typer.Argument(..., help=t("help.import.opt.path")),
                force: bool = typer.Option(False, "--force", help=t("help.import.opt.force")),
                rate: list[str] = typer.Option(None, "--rate", help=t("help.import.opt.rate")),
                as_json: bool = typer.Option(False, "--json", help=t("help.import.opt.json")),
                verbose: bool = typer.Option(False, "--verbose", "-v", help=t("help.import.opt.verbose")),
                fetched_at: str = typer.Option(None, "--fetched-at", help=t("help.import.opt.fetched_at"))) \
            -> None:
        """Parse a downloaded response (or a quote file) into a new snapshot (checked, archived, current if good)."""
        if source.strip().lower() == "quotes":
            _import_quotes(path, rate, as_json, verbose)
            return
        from gpuquote.cli.refresh_cmd import _problems, print_results
        from gpuquote.service.refresh import import_source, parse_fetched_at

        res = import_source(source, path, force=force, fetched_at=parse_fetched_at(fetched_at))
        if as_json:
            print_json(res)
        else:
            print_results(res["results"])
        raise typer.Exit(_problems(res["results"], verbose))


def _import_quotes(path: str, rate: list[str] | None, as_json: bool, verbose: bool = False) -> None:
    """`gpuquote import quotes FILE`: quotes stored as offers with source quote:<file>; bad quotes named."""

    from gpuquote.cli.common import console
    from gpuquote.i18n import t
    from gpuquote.service.quotes import import_quotes

    res = import_quotes(path, rate)
    if as_json:
        print_json(res)
    else:
        console().print(t("import.done", source=res["source"], imported=res["imported"],
                          repaired=res.get("repaired", 0), skipped=res.get("skipped", 0)), markup=False)
    from gpuquote.cli.quote_cmd import print_bad_quotes

    print_bad_quotes([f"{e.get('line_text') or e.get('message') or e}" for e in res.get("errors") or []], verbose)
    raise typer.Exit(2 if res.get("errors") else 0)
