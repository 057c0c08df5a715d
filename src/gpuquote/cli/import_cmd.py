"""`gpuquote import SOURCE PATH`: store a downloaded catalog or raw API response, exactly as refresh would."""

from __future__ import annotations

import typer

from gpuquote.cli.common import print_json


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_(source: str = typer.Argument(..., help="azure | aws | gcp | vast | runpod | lambda | skypilot | "
                                             "shadeform"),
                path: str = typer.Argument(..., help="A response file, or a folder of pages (.json/.csv, .gz ok)."),
                force: bool = typer.Option(False, "--force", help="Publish even if the integrity checks refuse it."),
                as_json: bool = typer.Option(False, "--json", help="JSON output.")) -> None:
        """Parse a downloaded response into a new snapshot (checked, archived, current if good)."""
        from gpuquote.cli.refresh_cmd import _problems, print_results
        from gpuquote.service.refresh import import_source

        res = import_source(source, path, force=force)
        if as_json:
            print_json(res)
        else:
            print_results(res["results"])
        raise typer.Exit(_problems(res["results"]))
