"""`gpuquote refresh`, `history`, `reparse`, `snapshots`, `sources`: live prices and their history."""

from __future__ import annotations

import sys

import typer

from gpuquote.cli.common import console, fmt_num, print_json
from gpuquote.i18n import t

MAX_REASON_LINES = 5


def _problems(results: list[dict], verbose: bool = False) -> int:
    """One stderr line per failed or refused source, then why rows were skipped (a few lines; all with
    verbose); exit code 2 if any, else 0."""
    bad = 0
    for r in results:
        if r.get("status") == "error":
            print(f"{t('error.prefix')}: {r['error']}", file=sys.stderr)
            bad += 1
        elif r.get("status") in ("refused", "partial"):
            print(t("refresh.refused", source=r["source"], reasons="; ".join(r.get("reasons") or [])),
                  file=sys.stderr)
            _skip_lines(r, verbose)
            bad += 1
    return 2 if bad else 0


def _skip_lines(r: dict, verbose: bool) -> None:
    """'  4 rows: negative retailPrice, e.g. retailPrice -5 (Standard_NC24ads_A100_v4, eastus)'."""
    reasons = sorted((r.get("skip_reasons") or {}).items(), key=lambda kv: -kv[1])
    examples = r.get("skip_examples") or {}
    shown = reasons if verbose else reasons[:MAX_REASON_LINES]
    for reason, n in shown:
        line = t("hostile.skip_line", n=n, reason=reason)
        if examples.get(reason):
            line += ", " + t("hostile.skip_example", example=examples[reason])
        print(line, file=sys.stderr)
    if len(reasons) > len(shown):
        print(t("hostile.more", n=len(reasons) - len(shown), hint=t("hostile.more_hint")), file=sys.stderr)


def print_results(results: list[dict]) -> None:
    from rich.table import Table

    tbl = Table(title=t("refresh.title"))
    for col in ("source", "status", "snapshot", "imported", "repaired", "skipped", "why"):
        tbl.add_column(t(f"refresh.col.{col}"), justify="right" if col in ("snapshot", "imported", "repaired",
                                                                           "skipped") else "left", overflow="fold")
    for r in results:
        why = r.get("error") or "; ".join(r.get("reasons") or [])
        if not why and r.get("skip_reasons"):
            top = list(r["skip_reasons"].items())[:3]
            why = ", ".join(f"{k} ({v})" for k, v in top)
        tbl.add_row(r["source"], r["status"], fmt_num(r.get("snapshot_id"), 0, "-"), fmt_num(r.get("imported"), 0, "-"),
                    fmt_num(r.get("repaired"), 0, "-"), fmt_num(r.get("skipped"), 0, "-"), why)
    console().print(tbl)


def register(app: typer.Typer) -> None:
    @app.command("refresh", help=t("help.refresh"))
    def refresh(
        source: list[str] = typer.Option(None, "--source", "-s", help=t("help.refresh.opt.source")),
        from_archive: bool = typer.Option(False, "--from-archive", help=t("help.refresh.opt.from_archive")),
        force: bool = typer.Option(False, "--force", help=t("help.refresh.opt.force")),
        watch: bool = typer.Option(True, "--watch/--no-watch", help=t("help.refresh.opt.watch")),
        as_json: bool = typer.Option(False, "--json", help=t("help.refresh.opt.json")),
    ) -> None:
        """Pull live offers: one transaction per source, every snapshot kept, raw responses archived."""
        from gpuquote.service.refresh import refresh as do_refresh

        if as_json or not sys.stderr.isatty():
            results = do_refresh(source or None, from_archive=from_archive, force=force)
        else:
            results = _with_progress(source or None, from_archive, force)
        watched = None
        if watch:
            from gpuquote.service.watch import after_refresh

            watched = after_refresh(results)
        if as_json:
            print_json({"results": results, **({"watch": watched} if watched is not None else {})})
        else:
            print_results(results)
            if watched is not None:
                from gpuquote.cli.watch_cmd import print_run

                print_run(watched)
        code = _problems(results)
        raise typer.Exit(code or (1 if watched and watched["failed"] else 0))

    @app.command("reparse", help=t("help.refresh.reparse"))
    def reparse(snapshot_id: int = typer.Argument(..., help=t("help.refresh.reparse.opt.snapshot_id")),
                force: bool = typer.Option(False, "--force", help=t("help.refresh.reparse.opt.force")),
                as_json: bool = typer.Option(False, "--json", help=t("help.refresh.reparse.opt.json"))) -> None:
        """Re-run the parser on a snapshot's archived raw responses; stores a new snapshot."""
        from gpuquote.service.refresh import reparse as do_reparse

        res = do_reparse(snapshot_id, force=force)
        if as_json:
            print_json(res)
        else:
            print_results(res["results"])
        raise typer.Exit(_problems(res["results"]))

    @app.command("history", help=t("help.refresh.history"))
    def history(gpu: str = typer.Option(..., "--gpu", help=t("help.refresh.history.opt.gpu")),
                provider: list[str] = typer.Option(None, "--provider", "-p",
                                                    help=t("help.refresh.history.opt.provider")),
                since: str = typer.Option(None, "--since", help=t("help.refresh.history.opt.since")),
                spot: bool = typer.Option(False, "--spot", help=t("help.refresh.history.opt.spot")),
                as_json: bool = typer.Option(False, "--json", help=t("help.refresh.history.opt.json"))) -> None:
        """Price over time: min / median / max USD per GPU-hour per day and provider."""
        from gpuquote.service.refresh import history as do_history

        data = do_history(gpu, provider or None, since, spot)
        if as_json:
            print_json(data)
            return
        from rich.table import Table

        if not data["series"]:
            from gpuquote.i18n import localize
            from gpuquote.service.refresh import empty_message

            console().print(localize(empty_message(data)), markup=False)
            return
        tbl = Table(title=t("history.title", gpu=data["gpu"]["id"], kind=t("history.spot" if spot else
                                                                           "history.ondemand")))
        for col in ("day", "provider", "min", "median", "max", "offers", "snapshots"):
            tbl.add_column(t(f"history.col.{col}"), justify="left" if col in ("day", "provider") else "right")
        for r in data["series"]:
            tbl.add_row(r["day"], r["provider"], fmt_num(r["min_usd_per_gpu_hour"], 3),
                        fmt_num(r["median_usd_per_gpu_hour"], 3), fmt_num(r["max_usd_per_gpu_hour"], 3),
                        str(r["offers"]), str(r["snapshots"]))
        console().print(tbl)

    @app.command("snapshots", help=t("help.refresh.snapshots"))
    def snapshots(source: str = typer.Option(None, "--source", "-s", help=t("help.refresh.snapshots.opt.source")),
                  limit: int = typer.Option(50, "--limit", min=1, help=t("help.refresh.snapshots.opt.limit")),
                  as_json: bool = typer.Option(False, "--json", help=t("help.refresh.snapshots.opt.json"))) -> None:
        """Stored snapshots (newest first): status, refusal reason, whether current, freshness."""
        from gpuquote.service.refresh import snapshots as do_snapshots

        data = do_snapshots(source, limit)
        if as_json:
            print_json(data)
            return
        from rich.table import Table

        tbl = Table(title=t("snapshots.title"))
        for col in ("id", "source", "status", "current", "fetched", "freshness", "offers", "reason"):
            tbl.add_column(t(f"snapshots.col.{col}"), overflow="fold")
        for s in data["snapshots"]:
            tbl.add_row(str(s["id"]), s["source"], s["status"], "*" if s["current"] else "", s["fetched_at"][:19],
                        s["freshness"], str(s["offers"]), s["reason"] or "")
        console().print(tbl)

    @app.command("sources", help=t("help.refresh.sources"))
    def sources(as_json: bool = typer.Option(False, "--json", help=t("help.refresh.sources.opt.json"))) -> None:
        """Registered live sources: endpoint, API key variable (set or not), current snapshot and its age."""
        from gpuquote.service.refresh import sources_status

        data = sources_status()
        if as_json:
            print_json(data)
            return
        from rich.table import Table

        tbl = Table(title=t("sources.title"))
        for col in ("name", "key", "current", "freshness", "endpoint"):
            tbl.add_column(t(f"sources.col.{col}"), overflow="fold")
        for s in data["sources"]:
            key = "-" if not s["auth_env"] else t("sources.key_set") if s["key_present"] else (
                t("sources.key_missing" if s["auth_required"] else "sources.key_optional", env=s["auth_env"][0]))
            cur = s["current"]
            tbl.add_row(s["name"], key, ", ".join(f"{c['source']}#{c['snapshot_id']}" for c in cur) or "-",
                        ", ".join(sorted({c["freshness"] for c in cur})) or "-", s["endpoint"])
        console().print(tbl)


def _with_progress(sources, from_archive: bool, force: bool) -> list[dict]:
    """Run the refresh with one Rich progress line per source (requests counted as they arrive)."""
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from gpuquote.service.refresh import refresh as do_refresh

    tasks: dict[str, int] = {}
    counts: dict[str, int] = {}
    with Progress(SpinnerColumn(), TextColumn("[bold]{task.fields[source]:<10}"), BarColumn(),
                  TextColumn("{task.description}"), TimeElapsedColumn(), console=console(), transient=False) as prog:
        def tick(source: str, event: str, detail: str) -> None:
            if source not in tasks:
                tasks[source] = prog.add_task(detail, total=None, source=source)
                counts[source] = 0
            tid = tasks[source]
            if event == "request":
                counts[source] += 1
                prog.update(tid, description=t("refresh.progress.requests", n=counts[source]))
            elif event == "done":
                prog.update(tid, total=1, completed=1, description=detail)
            else:
                prog.update(tid, description=f"{event}: {detail}")

        return do_refresh(sources, progress=tick, from_archive=from_archive, force=force)
