"""`gpuquote watch add|list|remove|run|history`: rules on offers or a job's best plan, notified on a crossing."""

from __future__ import annotations

import sys

import typer

from gpuquote.cli.common import console, fmt_num, print_json
from gpuquote.i18n import t


def register(app: typer.Typer) -> None:
    watch = typer.Typer(help=t("watch.help"), no_args_is_help=True)
    app.add_typer(watch, name="watch")

    @watch.command("add", help=t("watch.add.help"))
    def add(
        name: str = typer.Argument(..., help=t("help.watch.add.opt.name")),
        offers: bool = typer.Option(False, "--offers", help=t("help.watch.add.opt.offers")),
        plan: str = typer.Option(None, "--plan", help=t("help.watch.add.opt.plan")),
        gpu: str = typer.Option(None, "--gpu", help=t("help.watch.add.opt.gpu")),
        min_gpus: float = typer.Option(None, "--min-gpus", help=t("help.watch.add.opt.min_gpus")),
        interconnect: str = typer.Option(None, "--interconnect", help=t("help.watch.add.opt.interconnect")),
        region: str = typer.Option(None, "--region", help=t("help.watch.add.opt.region")),
        spot: bool = typer.Option(None, "--spot/--no-spot", help=t("help.watch.add.opt.spot")),
        provider: list[str] = typer.Option(None, "--provider", help=t("help.watch.add.opt.provider")),
        below: float = typer.Option(None, "--below", help=t("help.watch.add.opt.below")),
        currency: str = typer.Option("USD", "--currency", help=t("help.watch.add.opt.currency")),
        notify: str = typer.Option("stdout", "--notify", help=t("help.watch.add.opt.notify")),
        available: bool = typer.Option(False, "--available", help=t("help.watch.add.opt.available")),
        as_json: bool = typer.Option(False, "--json", help=t("help.watch.add.opt.json")),
    ) -> None:
        from gpuquote.service.watch import add_watch

        filters = {"gpu": gpu, "min_gpus": min_gpus, "interconnect": interconnect, "region": region, "spot": spot,
                   "provider": provider or None}
        data = add_watch(name, offers={} if offers else None, plan=plan, filters=filters, below=below,
                         currency=currency, notify=notify, available=available)
        if as_json:
            print_json(data)
            return
        w, b = data["watch"], data["baseline"]
        console().print(t("watch.added", name=w["name"], kind=w["kind"], notify=w["notify"]), markup=False)
        if w["kind"] == "plan":
            line = t("watch.baseline_plan", value=fmt_num(b["value"], 2), currency=w["currency"],
                     state=t("watch.state.below" if b["below"] else "watch.state.above"))
        else:
            line = t("watch.baseline", value=fmt_num(b["value"], 4), currency=w["currency"], n=b["count"])
        console().print(line, markup=False)

    @watch.command("list", help=t("watch.list.help"))
    def list_(as_json: bool = typer.Option(False, "--json", help=t("help.watch.list.opt.json"))):
        from gpuquote.service.watch import list_watches

        data = list_watches()
        if as_json:
            print_json(data)
            return
        if not data["watches"]:
            console().print(t("watch.none"))
            return
        from rich.table import Table

        tbl = Table(title=t("watch.title"))
        for col in ("name", "kind", "what", "below", "now", "notify", "last_run", "last_notified"):
            tbl.add_column(t(f"watch.col.{col}"), overflow="fold")
        for w in data["watches"]:
            what = w["job"] or ", ".join(f"{k}={v}" for k, v in w["filters"].items()) or "-"
            if w["available"]:
                what += " (available)"
            tbl.add_row(w["name"], w["kind"], what, f"{fmt_num(w['below'], 4)} {w['currency']}",
                        fmt_num(w["last_value"], 4), w["notify"], (w["last_run_at"] or "-")[:19],
                        (w["last_notified_at"] or "-")[:19])
        console().print(tbl)

    @watch.command("remove", help=t("watch.remove.help"))
    def remove(name: str = typer.Argument(..., help=t("help.watch.remove.opt.name")),
               as_json: bool = typer.Option(False, "--json", help=t("help.watch.remove.opt.json"))) -> None:
        from gpuquote.service.watch import remove_watch

        data = remove_watch(name)
        if as_json:
            print_json(data)
            return
        console().print(t("watch.removed", name=name), markup=False)

    @watch.command("run", help=t("watch.run.help"))
    def run(names: list[str] = typer.Argument(None, help=t("help.watch.run.opt.names")),
            as_json: bool = typer.Option(False, "--json", help=t("help.watch.run.opt.json"))) -> None:
        from gpuquote.service.watch import run_watches

        data = run_watches(names or None)
        if as_json:
            print_json(data)
        else:
            print_run(data)
        raise typer.Exit(1 if data["failed"] else 0)

    @watch.command("history", help=t("watch.history.help"))
    def history(name: str = typer.Argument(..., help=t("help.watch.history.opt.name")),
                limit: int = typer.Option(20, "--limit", min=1, help=t("help.watch.history.opt.limit")),
                as_json: bool = typer.Option(False, "--json", help=t("help.watch.history.opt.json"))) -> None:
        from gpuquote.service.watch import history as do_history

        data = do_history(name, limit)
        if as_json:
            print_json(data)
            return
        for e in data["events"]:
            msg = (e.get("payload") or {}).get("message") or e.get("error") or ""
            console().print(f"{e['at'][:19]}  {e['event']:<9} {', '.join(e['offer_ids'][:3])}  {msg}",
                            markup=False, soft_wrap=True)


def print_run(data: dict) -> None:
    """One line per rule; a stdout rule's notification is printed in full (that is its delivery)."""
    c = console()
    for r in data["results"]:
        if r["status"] == "error" or r["status"] == "failed":
            print(f"{t('error.prefix')}: {t('watch.run.failed', name=r['name'], error=r['error'])}", file=sys.stderr)
            continue
        if r["sent"]:
            c.print(r["notification"]["message"], markup=False, soft_wrap=True)
            if r.get("via") == "stdout":
                for o in r["notification"]["offers"][:10]:
                    c.print(f"  {o['offer_id']}", markup=False, soft_wrap=True)
        elif r["status"] == "skipped":
            c.print(t("watch.run.skipped", name=r["name"]), markup=False)
        else:
            c.print(t("watch.run.unchanged", name=r["name"], value=fmt_num(r["value"], 4), currency=r["currency"]),
                    markup=False)
    c.print(t("watch.run.summary", rules=data["rules"], notified=data["notified"], failed=data["failed"]),
            markup=False)

