"""`gpuquote offers`: current offers with normalised $/GPU-hour (DESIGN.md section 4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuquote.cli.common import currency_note, fmt_num, print_csv, print_json
from gpuquote.i18n import t

CSV_COLUMNS = ["offer_id", "provider", "region", "sku", "gpu_id", "gpu_count", "gpu_memory_gib", "gpu_exclusive",
               "form_factor", "intra_node", "vcpus", "ram_gib", "nvme_gib", "inter_node_kind", "inter_node_gbps",
               "price_amount", "price_currency", "price_per", "spot", "usd_per_gpu_hour", "usd_per_node_hour",
               "billing_granularity_s", "source", "fetched_at", "freshness", "form", "nvme_write_gbs"]


def flat(row: dict) -> dict:
    d = dict(row)
    d["inter_node_kind"] = row["inter_node"]["kind"]
    d["inter_node_gbps"] = row["inter_node"]["gbps_per_node"]
    d["price_amount"] = row["price"]["amount"]
    d["price_currency"] = row["price"]["currency"]
    d["price_per"] = row["price"]["per"]
    return d


if TYPE_CHECKING:
    import typer


def register(app: typer.Typer) -> None:
    import typer

    @app.command("offers", help=t("help.offers"))
    def offers(
        gpu: str = typer.Option(None, "--gpu", help=t("help.offers.opt.gpu")),
        min_gpus: float = typer.Option(None, "--min-gpus", help=t("help.offers.opt.min_gpus")),
        interconnect: str = typer.Option(None, "--interconnect", help=t("help.offers.opt.interconnect")),
        memory: float = typer.Option(None, "--memory", help=t("help.offers.opt.memory")),
        form_factor: str = typer.Option(None, "--form-factor", help=t("help.offers.opt.form_factor")),
        form: str = typer.Option(None, "--form", help=t("help.offers.opt.form")),
        region: str = typer.Option(None, "--region", help=t("help.offers.opt.region")),
        spot: bool = typer.Option(None, "--spot/--no-spot", help=t("help.offers.opt.spot")),
        provider: list[str] = typer.Option(None, "--provider", help=t("help.offers.opt.provider")),
        max_price_usd: float = typer.Option(None, "--max-price-usd", help=t("help.offers.opt.max_price_usd")),
        sort: str = typer.Option("price", "--sort", help=t("help.offers.opt.sort")),
        desc: bool = typer.Option(False, "--desc", help=t("help.offers.opt.desc")),
        limit: int = typer.Option(None, "--limit", help=t("help.offers.opt.limit")),
        offset: int = typer.Option(0, "--offset", help=t("help.offers.opt.offset")),
        summary: bool = typer.Option(False, "--summary", help=t("help.offers.opt.summary")),
        as_json: bool = typer.Option(False, "--json", help=t("help.offers.opt.as_json")),
        as_csv: bool = typer.Option(False, "--csv", help=t("help.offers.opt.as_csv")),
        currency: str = typer.Option(None, "--currency", help=t("money.opt.currency")),
    ) -> None:
        """List offers with normalised USD per GPU-hour, cheapest first."""
        run(gpu=gpu, min_gpus=min_gpus, interconnect=interconnect, memory=memory, form_factor=form_factor,
            region=region, spot=spot, provider=provider, max_price_usd=max_price_usd, sort=sort, desc=desc,
            limit=limit, offset=offset, summary=summary, as_json=as_json, as_csv=as_csv, form=form,
            currency=currency)


# The options of `gpuquote offers`: the typer command above and the typer-free fast path (cli/fast.py) take
# exactly these (tests/test_offers_summary.py checks the two agree).
OPTIONS = {"--gpu": ("gpu", str), "--min-gpus": ("min_gpus", float), "--interconnect": ("interconnect", str),
           "--memory": ("memory", float), "--form-factor": ("form_factor", str), "--region": ("region", str),
           "--provider": ("provider", list), "--max-price-usd": ("max_price_usd", float), "--sort": ("sort", str),
           "--limit": ("limit", int), "--offset": ("offset", int), "--form": ("form", str),
           "--currency": ("currency", str)}
FLAGS = {"--spot": ("spot", True), "--no-spot": ("spot", False), "--desc": ("desc", True),
         "--summary": ("summary", True), "--json": ("as_json", True), "--csv": ("as_csv", True)}


def run(gpu: str | None = None, min_gpus: float | None = None, interconnect: str | None = None,
        memory: float | None = None, form_factor: str | None = None, region: str | None = None,
        spot: bool | None = None, provider: list[str] | None = None, max_price_usd: float | None = None,
        sort: str = "price", desc: bool = False, limit: int | None = None, offset: int = 0, summary: bool = False,
        as_json: bool = False, as_csv: bool = False, form: str | None = None, currency: str | None = None) -> None:
    """`gpuquote offers` itself, whichever parser read the arguments."""
    from gpuquote.service.money import chosen, in_currency
    from gpuquote.service.offers import list_offers

    chosen(currency)  # a bad code fails before the query
    table = not (as_json or as_csv)
    if summary:
        from gpuquote.service.offers import SUMMARY_COLUMNS, summarize_offers

        sdata = summarize_offers(gpu=gpu, min_gpus=min_gpus, interconnect=interconnect, region=region,
                                 spot=spot, provider=provider, max_price_usd=max_price_usd, memory_gib=memory,
                                 form_factor=form_factor)
        if as_json:
            print_json(sdata)
        elif as_csv:
            print_csv(sdata["gpus"], SUMMARY_COLUMNS)
        else:
            render_summary(sdata)
        return
    data = list_offers(gpu=gpu, min_gpus=min_gpus, interconnect=interconnect, region=region, spot=spot,
                       provider=provider, max_price_usd=max_price_usd, sort=sort, descending=desc,
                       limit=limit or (50 if table else None), memory_gib=memory, form_factor=form_factor,
                       offset=offset, form=form)
    data = in_currency(data, currency)
    if as_json:
        print_json(data)
        return
    if as_csv:
        extra = [c.replace("usd", data["currency"]["code"].lower()) for c in CSV_COLUMNS
                 if "usd" in c] if data.get("currency") else []
        print_csv([flat(r) for r in data["offers"]], CSV_COLUMNS + extra)
        return
    render(data)


def render(data: dict) -> None:
    from gpuquote.cli.plain_table import Column
    from gpuquote.service.money import Display

    m = Display(data)
    rows = data["offers"]
    if not rows:
        print(t("offers.none"))
        return
    heads = {"col.usd_per_gpu_hour": t("money.col.per_gpu_hour", code=m.code),
             "col.usd_per_node_hour": t("money.col.per_node_hour", code=m.code)} if m.code != "USD" else {}
    # (key, justify, max_width, rank): a narrow terminal drops the highest rank first; numbers never cut
    spec = (("col.gpu", "left", 22, 0), ("col.count", "right", None, 0), ("col.usd_per_gpu_hour", "right", None, 0),
            ("col.usd_per_node_hour", "right", None, 0), ("col.provider", "left", 14, 0),
            ("col.region", "left", 16, 2), ("col.sku", "left", 22, 3), ("col.interconnect", "left", None, 4),
            ("col.network", "left", 12, 5), ("col.spot", "left", None, 0), ("col.freshness", "left", None, 6),
            ("pdata.col.form", "left", None, 7))
    cols = [Column(heads.get(k) or t(k), just, width, rank) for k, just, width, rank in spec]
    cells = []
    for r in rows:
        net = r["inter_node"]
        net_s = net["kind"] + (f" {net['gbps_per_node']:g}G" if net["gbps_per_node"] else "")
        cells.append([r["gpu_id"], fmt_num(r["gpu_count"]), fmt_num(m.amount(r["usd_per_gpu_hour"]), 3),
                      fmt_num(m.amount(r["usd_per_node_hour"]), 2), r["provider"], r["region"] or "", r["sku"] or "",
                      r["intra_node"], net_s, "spot" if r["spot"] else "",
                      f"{r['freshness']} {_day(r['fetched_at'])}",
                      "" if r.get("form", "rental") == "rental" else t(f"pdata.form.{r['form']}")])
    _print_table(t("offers.title") + (f" — {data['filters']['gpu']}" if data["filters"]["gpu"] else ""), cols, cells)
    if currency_note(data):
        print(currency_note(data))
    print(t("offers.count", n=data["count"], providers=len(data["providers"]), shown=len(rows))
          + f"  ({data['store']})")


def _print_table(title: str, cols: list, cells: list[list[str]]) -> None:
    from gpuquote.cli.plain_table import render as render_table

    text, hidden = render_table(title, cols, cells)
    print(text)
    if hidden:
        print(t("table.hidden", columns=", ".join(hidden)))


def _day(fetched_at: str | None) -> str:
    """The fetch day, or "date unknown" for an import whose data did not say (stored as 1970-01-01)."""
    from gpuquote.i18n import t

    if not fetched_at or fetched_at.startswith("1970-01-01"):
        return t("hostile.date_unknown")
    return fetched_at[:10]


def render_summary(data: dict) -> None:
    from gpuquote.cli.plain_table import Column

    rows = data["gpus"]
    if not rows:
        print(t("offers.none"))
        return
    spec = (("col.gpu", "left", 0), ("daily.summary.col.memory", "right", 1), ("daily.summary.col.form", "left", 3),
            ("daily.summary.col.offers", "right", 2), ("daily.summary.col.providers", "right", 4),
            ("daily.summary.col.od_min", "right", 0), ("daily.summary.col.od_median", "right", 5),
            ("daily.summary.col.spot_min", "right", 1), ("daily.summary.col.spot_median", "right", 6),
            ("daily.summary.col.freshest", "left", 7))
    cols = [Column(t(k), just, None, rank) for k, just, rank in spec]
    cells = [[r["gpu_id"], fmt_num(r["memory_gib"], 0), r["form_factor"] or "?", fmt_num(r["offers"]),
              fmt_num(r["providers"]), fmt_num(r["cheapest_on_demand_usd"], 3), fmt_num(r["median_on_demand_usd"], 3),
              fmt_num(r["cheapest_spot_usd"], 3), fmt_num(r["median_spot_usd"], 3), r["freshest_fetched_at"][:10]]
             for r in rows]
    _print_table(t("daily.summary.title"), cols, cells)
    print(t("daily.summary.count", gpus=len(rows), n=data["count"], providers=len(data["providers"]))
          + f"  ({data['store']})")
