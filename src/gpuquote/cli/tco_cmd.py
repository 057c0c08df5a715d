"""`gpuquote tco FILE [--buy ID] [--rent ID] [--utilisation U] [--rate CUR=X] [--json]`: buy versus rent."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuquote.cli.common import console, fmt_num, print_json
from gpuquote.i18n import t


def register(app: typer.Typer) -> None:
    @app.command("tco", help=t("tco.help"))
    def tco_cmd(
        file: Path = typer.Argument(..., help=t("help.tco.opt.file")),
        buy: list[str] = typer.Option(None, "--buy", help=t("help.tco.opt.buy")),
        rent: list[str] = typer.Option(None, "--rent", help=t("help.tco.opt.rent")),
        utilisation: float = typer.Option(1.0, "--utilisation", "-u", help=t("help.tco.opt.utilisation")),
        rate: list[str] = typer.Option(None, "--rate", help=t("help.tco.opt.rate")),
        as_json: bool = typer.Option(False, "--json", help=t("help.tco.opt.json")),
        currency: str = typer.Option(None, "--currency", help=t("money.opt.currency")),
    ) -> None:
        from gpuquote.cli.common import currency_note
        from gpuquote.cli.quote_cmd import rates_text, report_errors
        from gpuquote.i18n import localize
        from gpuquote.offers.currency import parse_overrides
        from gpuquote.service.money import chosen, in_currency
        from gpuquote.service.quotes import tco

        chosen(currency)
        data = localize(in_currency(tco(file, buy or None, rent or None, utilisation, rate or []), currency,
                                    parse_overrides(rate)))
        if as_json:
            print_json(data)
        else:
            c = console()
            c.print(t("quote.rates", rates=rates_text(data["rates"])))
            if currency_note(data):
                c.print(currency_note(data), markup=False)
            for b in data["purchases"]:
                _render_buy(c, b, data["utilisation"], data)
        raise typer.Exit(report_errors(data))


def _render_buy(c, b: dict, u: float, data: dict | None = None) -> None:
    from rich.table import Table

    from gpuquote.service.money import Display

    m = Display(data or {})
    gpu_h = t("money.col.per_gpu_hour", code=m.code) if m.code != "USD" else t("col.usd_per_gpu_hour")
    node_h = t("money.col.per_node_hour", code=m.code) if m.code != "USD" else t("col.usd_per_node_hour")
    tc = b["tco"]
    title = t("tco.title", id=b["id"], price=b["price_text"], gpus=fmt_num(b["gpu_count"], 0),
              years=f"{tc['years']:g}", u=f"{u:g}")
    c.print(f"[bold]{title}[/]", highlight=False)
    tbl = Table()
    tbl.add_column(t("tco.component"))
    tbl.add_column(m.code, justify="right")
    for k in ("price_usd", "residual_usd", "power_usd", "hosting_usd", "maintenance_usd", "capital_usd", "total_usd"):
        v = -tc[k] if k == "residual_usd" else tc[k]
        tbl.add_row(t("tco.c." + k.removesuffix("_usd")), fmt_num(m.amount(v), 0))
    tbl.add_row(t("tco.c.hours_used"), fmt_num(tc["hours_used"], 0))
    tbl.add_row(node_h, fmt_num(m.amount(tc["usd_per_node_hour"]), 3))
    tbl.add_row(gpu_h, fmt_num(m.amount(tc["usd_per_gpu_hour"]), 3))
    c.print(tbl)
    for a in tc["assumptions"]:
        c.print(f"  [yellow]{a}[/]", highlight=False)
    c.print(f"  [dim]{tc['formula']}[/]", soft_wrap=True, highlight=False)

    sw = Table(title=t("tco.sweep"))
    sw.add_column(t("col.utilisation"), justify="right")
    sw.add_column(gpu_h, justify="right")
    sw.add_column(t("money.col.total", code=m.code) if m.code != "USD" else t("col.total_usd"), justify="right")
    for s in b["sweep"]:
        sw.add_row(f"{s['utilisation']:g}", fmt_num(m.amount(s["usd_per_gpu_hour"]), 3),
                   fmt_num(m.amount(s["total_usd"]), 0))
    c.print(sw)

    if not b["vs"]:
        return
    vs = Table(title=t("tco.vs", id=b["id"]))
    for col in (t("col.rent"), t("col.price"), gpu_h, t("col.cheaper"), t("col.break_even_u"),
                t("col.break_even_months")):
        vs.add_column(col, justify="left" if col == t("col.rent") else "right", no_wrap=col == t("col.rent"))
    for r in b["vs"]:
        verdict = r.get("buy_cheaper")
        u_be = r.get("break_even_utilisation")
        vtxt = t(f"tco.verdict.{verdict}", u=f"{u_be:.2f}" if u_be is not None else "") if verdict else "-"
        vs.add_row(r["rent_id"], r["rent_price_text"], fmt_num(m.amount(r["rent_usd_per_gpu_hour"]), 3), vtxt,
                   fmt_num(u_be, 2, "-"), fmt_num(r.get("break_even_months"), 1, "-"))
    c.print(vs)
    for r in b["vs"]:
        for msg in filter(None, (r.get("warning"), r.get("reason"))):
            c.print(f"  [yellow]{r['rent_id']}: {msg}[/]", soft_wrap=True, highlight=False)
