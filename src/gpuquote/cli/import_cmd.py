"""`gpuquote import SOURCE PATH`: load a downloaded catalog or raw API response into the store."""

from __future__ import annotations

import importlib

import typer

from gpuquote.cli.common import console, print_json

# source -> "module:function" taking (source, path) or (path); imported lazily.
IMPORTERS = {
    "skypilot": "gpuquote.service.catalog_import:import_skypilot",
}


def _importer(source: str):
    from gpuquote.errors import BadInput

    target = IMPORTERS.get(source)
    if target is None:
        try:  # provider adapters register themselves in the refresh service
            from gpuquote.service import refresh
        except ImportError:
            refresh = None
        if refresh is not None and source in refresh.source_names():
            return lambda path: refresh.import_source(source, path)
        accepted = sorted(IMPORTERS) + (sorted(refresh.source_names()) if refresh else [])
        raise BadInput(f"SOURCE: unknown source '{source}'; accepted: {', '.join(accepted)}", field="source",
                       accepted=accepted)
    mod, fn = target.split(":")
    return getattr(importlib.import_module(mod), fn)


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_(
        source: str = typer.Argument(..., help="skypilot | quotes | azure | aws | gcp | vast | runpod | lambda ..."),
        path: str = typer.Argument(..., help="A downloaded catalog folder/file or a raw API response."),
        as_json: bool = typer.Option(False, "--json", help="JSON output."),
    ) -> None:
        """Import a downloaded catalog into the store, exactly as `refresh` would after fetching it."""
        from gpuquote.i18n import t

        data = _importer(source)(path)
        if as_json:
            print_json(data)
            return
        c = console()
        for r in data.get("results", [data]):
            line = t("import.done", source=r["source"], imported=r["imported"], repaired=r.get("repaired", 0),
                     skipped=r.get("skipped", 0))
            reasons = r.get("skip_reasons") or {}
            if reasons:
                line += " (" + "; ".join(f"{k}: {v}" for k, v in list(reasons.items())[:4]) + ")"
            if r.get("status") == "refused":
                line += f" — REFUSED: {'; '.join(r.get('reasons', []))}"
            c.print(line, soft_wrap=True)
