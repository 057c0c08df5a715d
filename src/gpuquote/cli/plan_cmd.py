"""`gpuquote plan JOB`: offers ranked by the total cost and time to finish the job."""

from __future__ import annotations

import typer

from gpuquote.cli.common import console, currency_note, fmt_num, print_csv, print_json, region_label
from gpuquote.i18n import t

CSV_COLUMNS = ["offer_id", "provider", "sku", "region", "gpu_id", "gpus", "nodes", "spot", "time_hours",
               "total_cost_usd", "usd_per_gpu_hour", "usd_per_billion_tokens", "usd_per_million_tokens", "bound",
               "pareto", "warnings", "section", "usd_per_million_output_tokens", "usd_per_1k_requests"]
SECTIONS = ("on_demand", "spot", "purchase")


def register(app: typer.Typer) -> None:
    @app.command("plan", help=t("help.plan"))
    def plan_cmd(
        job: str = typer.Argument(..., help=t("help.plan.opt.job")),
        quotes: list[str] = typer.Option(None, "--quotes", help=t("help.plan.opt.quotes")),
        no_catalog: bool = typer.Option(False, "--no-catalog", help=t("help.plan.opt.no_catalog")),
        gpu: str = typer.Option(None, "--gpu", help=t("help.plan.opt.gpu")),
        min_gpus: float = typer.Option(None, "--min-gpus", help=t("help.plan.opt.min_gpus")),
        interconnect: str = typer.Option(None, "--interconnect", help=t("help.plan.opt.interconnect")),
        region: str = typer.Option(None, "--region", help=t("help.plan.opt.region")),
        spot: bool = typer.Option(None, "--spot/--no-spot", help=t("help.plan.opt.spot")),
        provider: list[str] = typer.Option(None, "--provider", help=t("help.plan.opt.provider")),
        max_price_usd: float = typer.Option(None, "--max-price-usd", help=t("help.plan.opt.max_price_usd")),
        deadline_hours: float = typer.Option(None, "--deadline-hours", help=t("help.plan.opt.deadline_hours")),
        budget_usd: float = typer.Option(None, "--budget-usd", help=t("help.plan.opt.budget_usd")),
        objective: str = typer.Option("cost", "--objective", help=t("help.plan.opt.objective")),
        top: int = typer.Option(10, "--top", help=t("help.plan.opt.top")),
        interruption_rate: float = typer.Option(None, "--interruption-rate",
                                                help=t("help.plan.opt.interruption_rate")),
        serving_hours: float = typer.Option(None, "--serving-hours", help=t("help.plan.opt.serving_hours")),
        gpus: int = typer.Option(None, "--gpus", help=t("help.plan.opt.gpus")),
        nodes: int = typer.Option(None, "--nodes", help=t("help.plan.opt.nodes")),
        rate: list[str] = typer.Option(None, "--rate", help=t("help.plan.opt.rate")),
        currency: str = typer.Option(None, "--currency", help=t("money.opt.currency")),
        as_json: bool = typer.Option(False, "--json", help=t("help.plan.opt.json")),
        as_csv: bool = typer.Option(False, "--csv", help=t("help.plan.opt.csv")),
    ) -> None:
        """Rank offers by the total cost and time to finish JOB (lowest hourly price is not the cheapest)."""
        from gpuquote.offers.currency import parse_overrides
        from gpuquote.service.money import chosen, in_currency
        from gpuquote.service.plan import plan_job

        chosen(currency)
        data = plan_job(job, quotes=quotes, gpu=gpu, min_gpus=min_gpus, interconnect=interconnect, region=region,
                        spot=spot, provider=provider, max_price_usd=max_price_usd, deadline_hours=deadline_hours,
                        budget_usd=budget_usd, objective=objective, top=top, interruption_rate=interruption_rate,
                        serving_hours=serving_hours, include_catalog=not no_catalog, rate=rate, gpus=gpus,
                        nodes=nodes)
        from gpuquote.i18n import localize

        data = localize(in_currency(data, currency, parse_overrides(rate)))
        if as_json:
            print_json(data)
        elif as_csv:
            extra = [c.replace("usd", data["currency"]["code"].lower()) for c in CSV_COLUMNS
                     if "usd" in c] if data.get("currency") else []
            print_csv([{**r, "warnings": " | ".join(r["warnings"]), "section": s} for s in SECTIONS
                       for r in data["sections"][s]], CSV_COLUMNS + extra)
        else:
            render(data)
        raise typer.Exit(_quote_errors(data))


def _quote_errors(data: dict) -> int:
    """One stderr line per bad quote of --quotes (the good ones are ranked); exit 2 if any, as `quote check`.

    A quote that contradicts the GPU catalog is no input error: it is left out and said in the table."""
    from gpuquote.cli.quote_cmd import print_bad_quotes

    errs = [e for e in data.get("quote_errors") or [] if not e.get("contradicts")]
    print_bad_quotes([(f"{e['file']}: " if e.get("file") else "") + str(e.get("message")) for e in errs])
    return 2 if errs else 0


def fmt_usd(v: float | None) -> str:
    """Money a person reads: cents below 100 USD ('0.40'), whole dollars above ('1,168')."""
    if v is None:
        return "?"
    return f"{v:,.2f}" if abs(v) < 100 else f"{v:,.0f}"


def fmt_h(v: float | None) -> str:
    """Hours in the table: one decimal, two significant digits below 0.1 h (never '0.0')."""
    if v is None:
        return "?"
    return f"{v:.2g}" if v < 0.1 else fmt_num(float(v), 1)


def fmt_unit(v: float | None) -> str:
    """A unit cost (per token, per request): three decimals below 1 USD, else as money."""
    if v is None:
        return "?"
    return f"{v:.3f}" if abs(v) < 1 else fmt_usd(v)


def _unit_columns(kind: str) -> list[tuple[str, str]]:
    from gpuquote.i18n import t

    if kind == "train":
        return [("usd_per_billion_tokens", t("planp.col.per_b_tok"))]
    if kind == "compute":
        return [("usd_per_exaflop", t("planp.col.per_eflop"))]
    return [("usd_per_million_tokens", t("planp.col.per_m_tok")),
            ("usd_per_million_output_tokens", t("planp.col.per_m_out")),
            ("usd_per_1k_requests", t("planp.col.per_1k_req"))]


def _section_table(c, rows: list[dict], units: list[tuple[str, str]], m):
    from rich.table import Table

    from gpuquote.i18n import t

    tbl = Table(show_lines=False)
    wide = c.width >= 150
    cols = [("#", "right", 2), (t("col.gpu"), "left", 12), (t("col.count"), "right", 4),
            (t("col.provider"), "left", 8), (t("col.region"), "left", 8)]
    cols += [(t("col.sku"), "left", 10)] if wide else []
    cost_h = t("money.col.total", code=m.code) if m.code != "USD" else t("plan.col.cost")
    gpu_h = t("money.col.per_gpu_hour", code=m.code) if m.code != "USD" else t("col.usd_per_gpu_hour")
    cols += [(t("plan.col.time"), "right", 6), (cost_h, "right", max(7, len(cost_h)))]
    cols += [(label if m.code == "USD" else label.replace("$", m.symbol.strip()), "right", 7) for _, label in units]
    cols += [(gpu_h, "right", 6), ("P", "left", 1)]
    for col, just, minw in cols:
        tbl.add_column(col, justify=just, no_wrap=True, overflow="ellipsis", min_width=minw,
                       max_width=26 if col == t("col.sku") else 14 if col == t("col.region") else None)
    for i, r in enumerate(rows, 1):
        cells = [str(i), r["gpu_id"], f"{r['gpus']}" + (f"/{r['nodes']}n" if r["nodes"] > 1 else ""),
                 r["provider"], region_label(r.get("region"))]
        cells += [r["sku"]] if wide else []
        cells += [fmt_h(r["time_hours"]), fmt_usd(m.amount(r["total_cost_usd"]))]
        cells += [fmt_unit(m.amount(r.get(key))) for key, _ in units]
        cells += [fmt_num(m.amount(r["usd_per_gpu_hour"]), 3), "*" if r["pareto"] else ""]
        tbl.add_row(*cells)
    return tbl


def _excluded_line(data: dict) -> str:
    groups = data.get("excluded_groups")
    if not groups:
        return "; ".join(f"{k} ({v})" for k, v in list(data["excluded"].items())[:5])
    parts = []
    for g in groups[:6]:
        names = g["gpus"][:4]
        more = f" +{len(g['gpus']) - 4}" if len(g["gpus"]) > 4 else ""
        parts.append(g["reason"].replace("{gpus}", ", ".join(names) + more) + f" ({g['count']})")
    return "; ".join(parts)


def render(data: dict) -> None:
    from gpuquote.i18n import t
    from gpuquote.service.money import Display

    c = console()
    m = Display(data)
    j = data["job"]
    units = _unit_columns(j["kind"])
    what = j["model"] or (f"{j['flops']:.3g} FLOP" if j.get("flops") else "")
    c.print(f"[bold]{t('plan.title')}[/]: {j['kind']} {what} {j.get('method') or ''} {j['precision']} — "
            + t("plan.summary", feasible=data["feasible"], candidates=data["candidates"],
                configurations=data["configurations"], objective=t("planp.objective." + data["objective"])),
            soft_wrap=True)
    if data["nothing_fits"]:
        c.print(f"[yellow]{t('plan.nothing_fits')}[/]: {data['nothing_fits']['message']}", soft_wrap=True)
    sections = data.get("sections") or {"on_demand": [r for r in data["rows"] if not r["spot"]],
                                        "spot": [r for r in data["rows"] if r["spot"]], "purchase": []}
    for name in SECTIONS:
        rows = sections.get(name) or []
        if not rows:
            continue
        if name == "spot":
            head = t("planp.section.spot", gpus=rows[0]["gpus"], hours=fmt_h(rows[0]["time_hours"]))
        else:
            head = t(f"planp.section.{name}")
        c.print(f"[bold]{head}[/]", soft_wrap=True)
        c.print(_section_table(c, rows, units, m))
        if name == "purchase":
            for r in rows:
                b = r.get("purchase_basis") or {}
                c.print("  " + t("planp.purchase_basis", offer=r["offer_id"],
                                 utilisation=f"{b.get('utilisation', 1):.0%}", years=fmt_num(b.get("years"), 0),
                                 tco=fmt_usd(m.amount(b.get("tco_usd"))),
                                 share=fmt_usd(m.amount(r["total_cost_usd"]))),
                        soft_wrap=True, markup=False)
    if data["rows"]:
        if currency_note(data):
            c.print(currency_note(data), markup=False, soft_wrap=True)
        c.print(t("plan.pareto_note"))
        first = next((s for s in SECTIONS if sections.get(s)), None)
        top = sections[first][0] if first else data["rows"][0]
        label = t("planp.label." + first) if first else ""
        c.print(f"{label} #1 {top['offer_id']} ({top['sku']}, {region_label(top['region'])}, "
                f"{t('planp.bound.' + str(top['bound']))}): "
                + ", ".join(f"{t('plan.cost.' + k).replace('$', m.symbol.strip())} {fmt_usd(m.amount(v))}"
                            for k, v in top["breakdown"].items() if v and k.endswith("_usd")),
                soft_wrap=True, markup=False)
        for w in top["warnings"][:8]:
            c.print(f"  ! {w}", soft_wrap=True, markup=False)
    for a in data["upgrade_advice"]:
        c.print(f"[cyan]{t('plan.upgrade')}[/]: {a['advice']} — "
                + t("planp.upgrade_line", gpu=a["gpu"], gpus=a["gpus"], provider=a["provider"],
                    hours=f"{a['time_hours']:,.1f}", cost=fmt_usd(m.amount(a["total_cost_usd"])), code=m.code),
                soft_wrap=True)
    hs = data.get("host_sizing")
    if hs:
        write = t("planp.host_write", gbs=hs["nvme_write_gbs_per_node"]) if hs.get("nvme_write_gbs_per_node") else ""
        c.print(f"{t('plan.host')}: " + t("planp.host_line", cores=hs["cpu_cores_per_node"], ram=hs["ram_gib_per_node"],
                                         nvme=f"{hs['nvme_gb_per_node']:,}", write=write, gpn=hs["gpus_per_node"],
                                         gpu=hs["gpu"]), soft_wrap=True)
    if data["excluded"]:
        c.print(t("plan.excluded") + ": " + _excluded_line(data), soft_wrap=True, markup=False)
    for e in [e for e in data.get("quote_errors") or [] if e.get("contradicts")]:  # left out: contradicts the catalog
        c.print(f"{t('pdata.plan.quote_left_out')}: {e.get('message')}", soft_wrap=True, markup=False)
