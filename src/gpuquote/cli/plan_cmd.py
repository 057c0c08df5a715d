"""`gpuquote plan JOB`: offers ranked by the total cost and time to finish the job."""

from __future__ import annotations

import typer

from gpuquote.cli.common import console, fmt_num, print_csv, print_json

CSV_COLUMNS = ["offer_id", "provider", "sku", "region", "gpu_id", "gpus", "nodes", "spot", "time_hours",
               "total_cost_usd", "usd_per_gpu_hour", "usd_per_billion_tokens", "usd_per_million_tokens", "bound",
               "pareto", "warnings"]


def register(app: typer.Typer) -> None:
    @app.command("plan")
    def plan_cmd(
        job: str = typer.Argument(..., help="A job file (YAML/JSON, DESIGN.md section 3): examples/jobs/*.yaml"),
        quotes: list[str] = typer.Option(None, "--quotes", help="Quote file(s) to rank beside the catalog."),
        no_catalog: bool = typer.Option(False, "--no-catalog", help="Rank only the --quotes."),
        gpu: str = typer.Option(None, "--gpu", help="Only offers of this GPU or family."),
        min_gpus: float = typer.Option(None, "--min-gpus", help="Only offers with at least this many GPUs."),
        interconnect: str = typer.Option(None, "--interconnect", help="nvswitch | nvlink | pcie"),
        region: str = typer.Option(None, "--region", help="Region id or prefix."),
        spot: bool = typer.Option(None, "--spot/--no-spot", help="Only spot / only on-demand (default both)."),
        provider: list[str] = typer.Option(None, "--provider", help="Provider id(s)."),
        max_price_usd: float = typer.Option(None, "--max-price-usd", help="Max USD per GPU-hour."),
        deadline_hours: float = typer.Option(None, "--deadline-hours", help="Finish within this many hours."),
        budget_usd: float = typer.Option(None, "--budget-usd", help="Spend at most this much."),
        objective: str = typer.Option("cost", "--objective", help="cost | time | balanced"),
        top: int = typer.Option(10, "--top", help="Rows to show."),
        interruption_rate: float = typer.Option(None, "--interruption-rate",
                                                help="Spot interruptions per node-hour (default by provider kind)."),
        serving_hours: float = typer.Option(None, "--serving-hours", help="Online serving: hours priced (730)."),
        rate: list[str] = typer.Option(None, "--rate", help="Currency override for quotes, CUR=USD_PER_UNIT."),
        as_json: bool = typer.Option(False, "--json", help="JSON output (same body as POST /api/plan)."),
        as_csv: bool = typer.Option(False, "--csv", help="CSV output."),
    ) -> None:
        """Rank offers by the total cost and time to finish JOB (lowest hourly price is not the cheapest)."""
        from gpuquote.service.plan import plan_job

        data = plan_job(job, quotes=quotes, gpu=gpu, min_gpus=min_gpus, interconnect=interconnect, region=region,
                        spot=spot, provider=provider, max_price_usd=max_price_usd, deadline_hours=deadline_hours,
                        budget_usd=budget_usd, objective=objective, top=top, interruption_rate=interruption_rate,
                        serving_hours=serving_hours, include_catalog=not no_catalog, rate=rate)
        if as_json:
            print_json(data)
        elif as_csv:
            print_csv([{**r, "warnings": " | ".join(r["warnings"])} for r in data["rows"]], CSV_COLUMNS)
        else:
            render(data)
        raise typer.Exit(_quote_errors(data))


def _quote_errors(data: dict) -> int:
    """One stderr line per bad quote of --quotes (the good ones are ranked); exit 2 if any, as `quote check`."""
    from gpuquote.cli.quote_cmd import print_bad_quotes

    errs = data.get("quote_errors") or []
    print_bad_quotes([(f"{e['file']}: " if e.get("file") else "") + str(e.get("message")) for e in errs])
    return 2 if errs else 0


def render(data: dict) -> None:
    from rich.table import Table

    from gpuquote.i18n import t

    c = console()
    j = data["job"]
    unit, unit_label = {"train": ("usd_per_billion_tokens", "$/B tok"),
                        "compute": ("usd_per_exaflop", "$/EFLOP")}.get(j["kind"], ("usd_per_million_tokens", "$/M tok"))
    what = j["model"] or (f"{j['flops']:.3g} FLOP" if j.get("flops") else "")
    c.print(f"[bold]{t('plan.title')}[/]: {j['kind']} {what} {j.get('method') or ''} {j['precision']} — "
            + t("plan.summary", feasible=data["feasible"], candidates=data["candidates"],
                configurations=data["configurations"], objective=data["objective"]), soft_wrap=True)
    if data["nothing_fits"]:
        c.print(f"[yellow]{t('plan.nothing_fits')}[/]: {data['nothing_fits']['message']}", soft_wrap=True)
    if data["rows"]:
        tbl = Table(show_lines=False)
        wide = c.width >= 140
        cols = [("#", "right", 2), (t("col.gpu"), "left", 14), (t("col.count"), "right", 4),
                (t("col.provider"), "left", 8)]
        cols += [(t("col.sku"), "left", 10)] if wide else []
        cols += [(t("plan.col.time"), "right", 6), (t("plan.col.cost"), "right", 7), (unit_label, "right", 7),
                 (t("col.usd_per_gpu_hour"), "right", 6), ("P", "left", 1)]
        for col, just, minw in cols:
            tbl.add_column(col, justify=just, no_wrap=True, overflow="ellipsis", min_width=minw,
                           max_width=26 if col == t("col.sku") else None)
        for i, r in enumerate(data["rows"], 1):
            cells = [str(i), r["gpu_id"] + (" spot" if r["spot"] else ""),
                     f"{r['gpus']}" + (f"/{r['nodes']}n" if r["nodes"] > 1 else ""), r["provider"]]
            cells += [r["sku"]] if wide else []
            cells += [fmt_num(r["time_hours"], 1), fmt_num(r["total_cost_usd"], 0), fmt_num(r.get(unit), 2),
                      fmt_num(r["usd_per_gpu_hour"], 3), "*" if r["pareto"] else ""]
            tbl.add_row(*cells)
        c.print(tbl)
        c.print(t("plan.pareto_note"))
        top = data["rows"][0]
        c.print(f"#1 {top['offer_id']} ({top['sku']}, {top['region']}, {top['bound']}-bound): "
                + ", ".join(f"{t('plan.cost.' + k)} {v:,.2f}" for k, v in top["breakdown"].items() if v),
                soft_wrap=True, markup=False)
        for w in top["warnings"][:8]:
            c.print(f"  ! {w}", soft_wrap=True, markup=False)
    for a in data["upgrade_advice"]:
        c.print(f"[cyan]{t('plan.upgrade')}[/]: {a['advice']} — {a['gpu']} x{a['gpus']} at {a['provider']}: "
                f"{a['time_hours']:,.1f} h, {a['total_cost_usd']:,.0f} USD", soft_wrap=True)
    hs = data.get("host_sizing")
    if hs:
        c.print(f"{t('plan.host')}: {hs['cpu_cores_per_node']} CPU cores, {hs['ram_gib_per_node']} GiB RAM, "
                f"{hs['nvme_gb_per_node']:,} GB NVMe"
                + (f" writing >= {hs['nvme_write_gbs_per_node']} GB/s" if hs.get("nvme_write_gbs_per_node") else "")
                + f" per node ({hs['gpus_per_node']}x {hs['gpu']})", soft_wrap=True)
    if data["excluded"]:
        c.print(t("plan.excluded") + ": " + "; ".join(f"{k} ({v})" for k, v in list(data["excluded"].items())[:5]),
                soft_wrap=True, markup=False)
