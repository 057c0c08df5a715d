"""`gpuquote quote check FILE [--json] [--utilisation U] [--rate CUR=X]`: are these quotes comparable?

Bad quotes are reported one line each on stderr (quote id, field, accepted values) while the good ones
are still checked; the exit code is then 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from gpuquote.cli.common import console, fmt_num, print_json
from gpuquote.i18n import t

STATUS_STYLE = {"ok": "green", "missing": "yellow", "mismatch": "bold red"}


MAX_ERROR_LINES = 10


def print_bad_quotes(lines: list[str], verbose: bool = False) -> None:
    """One stderr line per bad quote, at most MAX_ERROR_LINES unless verbose (a 5 MB file of bad rows
    must not print 27,000 lines); the rest is counted, and --json always holds the full list."""
    shown = lines if verbose else lines[:MAX_ERROR_LINES]
    for line in shown:
        print(f"{t('error.prefix')}: {line}", file=sys.stderr)
    if len(lines) > len(shown):
        print(f"{t('error.prefix')}: " + t("hostile.more_quotes", n=len(lines) - len(shown),
                                            hint=t("hostile.more_hint")), file=sys.stderr)


def report_errors(data: dict, verbose: bool = False) -> int:
    """Print one line per bad quote on stderr (bounded); return the exit code (2 if any)."""
    print_bad_quotes([f"{data.get('file', '')}: {e['message']}" for e in data.get("errors", [])], verbose)
    return 2 if data.get("errors") else 0


def rates_text(rates: dict) -> str:
    parts = []
    for cur, r in sorted(rates.items()):
        if cur == "USD":
            continue
        parts.append(f"1 {cur} = {r['usd_per_unit']:.6g} USD ({r['date']})")
    return ", ".join(parts) or t("quote.usd_only")


def register(app: typer.Typer) -> None:
    quote = typer.Typer(help=t("quote.help"), no_args_is_help=True)
    app.add_typer(quote, name="quote")

    @quote.command("check", help=t("quote.check.help"))
    def quote_check(
        file: Path = typer.Argument(..., help=t("help.quote.check.opt.file")),
        as_json: bool = typer.Option(False, "--json", help=t("help.quote.check.opt.json")),
        utilisation: float = typer.Option(1.0, "--utilisation", "-u",
                                          help=t("help.quote.check.opt.utilisation")),
        rate: list[str] = typer.Option(None, "--rate", help=t("help.quote.check.opt.rate")),
        currency: str = typer.Option(None, "--currency", help=t("money.opt.currency")),
        verbose: bool = typer.Option(False, "--verbose", "-v", help=t("help.quote.check.opt.verbose")),
    ) -> None:
        from gpuquote.i18n import localize
        from gpuquote.offers.currency import parse_overrides
        from gpuquote.service.money import chosen, in_currency
        from gpuquote.service.quotes import check_quotes

        chosen(currency)
        data = localize(in_currency(check_quotes(file, utilisation, rate or []), currency, parse_overrides(rate)))
        if as_json:
            print_json(data)
        else:
            render(data)
        raise typer.Exit(report_errors(data, verbose))


STATUS_MARK = {"ok": "ok", "missing": "?", "mismatch": "X"}


def _short_price(q: dict) -> str:
    p = q["price"]
    amt = f"{p['amount']:,.2f}".rstrip("0").rstrip(".")
    s = f"{amt} {p['currency']}/{p['per']}"
    if p.get("term_months"):
        s += f" {p['term_months']:g}mo term"
    if q["form"] == "gpu_hour":
        s += " /GPU"
    return s


def _who(ids: list[str], all_ids: list[str]) -> str:
    if len(ids) == len(all_ids):
        return t("quote.all_quotes")
    rest = [i for i in all_ids if i not in ids]
    return t("quote.all_but", ids=', '.join(rest)) if len(rest) < len(ids) else ', '.join(ids)


def render(data: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    from gpuquote.service.money import Display

    c = console()
    m = Display(data)
    quotes = data["quotes"]
    c.print(t("quote.rates", rates=rates_text(data["rates"])), highlight=False)
    from gpuquote.cli.common import currency_note

    if currency_note(data):
        c.print(currency_note(data), markup=False)
    if quotes:
        tbl = Table(title=t("quote.title", u=f"{data['utilisation']:g}"))
        tbl.add_column(t("col.quote"), max_width=22, overflow="fold")
        tbl.add_column(t("col.gpu"))
        tbl.add_column(t("col.count"), justify="right")
        tbl.add_column(t("col.form"))
        tbl.add_column(t("col.price"), justify="right")
        tbl.add_column(t("money.col.per_gpu_hour", code=m.code) if m.code != "USD" else t("col.usd_per_gpu_hour"),
                       justify="right")
        tbl.add_column(t("money.col.per_node_hour", code=m.code) if m.code != "USD" else t("col.usd_per_node_hour"),
                       justify="right")
        for q in quotes:
            gpu_h = fmt_num(m.amount(q["usd_per_gpu_hour"]), 3) + (" /slice" if q["unit"] == "mig_slice" else "")
            tbl.add_row(escape(q["id"]), q["gpu_id"] or "?", fmt_num(q["gpu_count"], 0), q["form"],
                        escape(_short_price(q)), gpu_h, fmt_num(m.amount(q["usd_per_node_hour"]), 2))
        c.print(tbl)

        mx = Table(title=t("quote.checklist_title"))
        mx.add_column(t("col.quote"), max_width=22, overflow="fold")
        for i in range(1, 11):
            mx.add_column(str(i), justify="center")
        for q in quotes:
            mx.add_row(escape(q["id"]), *(f"[{STATUS_STYLE[it['status']]}]{STATUS_MARK[it['status']]}[/]"
                                          for it in q["checklist"]))
        c.print(mx)
        c.print("  " + "; ".join(f"{i}. {t(f'checklist.item.{i}')}" for i in range(1, 11))
                + f"; ok = {t('status.ok')}, ? = {t('status.missing')}, X = {t('status.mismatch')}",
                soft_wrap=True, highlight=False)

        c.print(f"[bold]{t('quote.findings')}[/]")
        for q in quotes:
            for it in q["checklist"]:
                if it["status"] == "ok":
                    continue
                c.print(f"  {escape(q['id'])}  [{STATUS_STYLE[it['status']]}]({it['item']}) {it['name']} "
                        f"{t('status.' + it['status'])}[/]: {escape(it['message'])}", soft_wrap=True, highlight=False)
            for w in q["warnings"] + q["assumptions"]:
                c.print(f"  {escape(q['id'])}  [dim]{escape(w)}[/]", soft_wrap=True, highlight=False)

        c.print(f"[bold]{t('quote.groups')}[/]")
        multi = [g for g in data["groups"] if len(g["ranking"]) > 1]
        if not multi:
            c.print("  " + t("quote.no_group"))
        for g in multi:
            cfg = ", ".join(fmt_num(v, 0) if isinstance(v, float) else str(v) for v in g["config"].values())
            ranks = " < ".join(f"{r['id']} {m.symbol}{fmt_num(m.amount(r['usd_per_gpu_hour']), 3)}"
                               for r in g["ranking"])
            c.print(f"  {escape('[' + cfg + ']')} {escape(ranks)}", soft_wrap=True, highlight=False)
        if data["unranked"]:
            c.print("  " + escape(t("quote.unranked", ids=", ".join(data["unranked"]))), soft_wrap=True,
                    highlight=False)

        adv: dict[str, list[str]] = {}
        for q in quotes:
            for a in q["advisories"]:
                adv.setdefault(a, []).append(q["id"])
        if adv:
            c.print(f"[bold]{t('quote.advisories')}[/]")
            all_ids = [q["id"] for q in quotes]
            for a, ids in adv.items():
                c.print(f"  [dim]{escape(a)} ({escape(_who(ids, all_ids))})[/]", soft_wrap=True, highlight=False)
    if data["errors"]:
        c.print(f"[bold red]{t('quote.rejected', n=len(data['errors']))}[/]")
