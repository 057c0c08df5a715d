"""`gpuquote gpus [--json]` and `gpuquote gpus show ID`: the GPU catalog with sources."""

from __future__ import annotations

import typer

from gpuquote.cli.common import console, fmt_num, print_json
from gpuquote.i18n import t


def register(app: typer.Typer) -> None:
    gpus = typer.Typer(help=t("gpus.help"),
                       invoke_without_command=True, no_args_is_help=False)
    app.add_typer(gpus, name="gpus")

    @gpus.callback()
    def gpus_list(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help=t("opt.json"))) -> None:
        """List the GPU catalog."""  # the help shown is t("gpus.help") on the group
        if ctx.invoked_subcommand:
            return
        from gpuquote.service.catalog import list_gpus

        data = list_gpus()
        if as_json:
            print_json(data)
            return
        from rich.table import Table

        tbl = Table(title=t("gpus.title"))
        for col in ("id", "form", "GiB", "GB/s", "BF16", "FP8", "NVLink GB/s", "TDP W", "MIG"):
            tbl.add_column(col, justify="left" if col in ("id", "form") else "right")
        for g in data["gpus"]:
            tbl.add_row(g["id"], g["form_factor"], fmt_num(g["memory_gib"], 0), fmt_num(g["memory_bandwidth_gbs"], 0),
                        fmt_num(g["bf16_tflops"], 0, "-"), fmt_num(g["fp8_tflops"], 0, "-"),
                        fmt_num(g["nvlink_bandwidth_gbs"], 0, "-"), fmt_num(g["tdp_w"], 0), fmt_num(g["mig_max"], 0))
        console().print(tbl)

    @gpus.command("show", help=t("gpus.show.help"))
    def gpus_show(name: str = typer.Argument(..., help=t("gpus.show.arg")),
                  as_json: bool = typer.Option(False, "--json", help=t("opt.json"))) -> None:
        """Show one GPU (or the members of a family) with its source."""
        from gpuquote.service.catalog import show_gpu

        data = show_gpu(name)
        if as_json:
            print_json(data)
            return
        c = console()
        res = data["resolved"]
        if res["kind"] == "family":
            c.print(t("gpus.family", id=f"[bold]{res['id']}[/]", members=", ".join(res["members"]),
                      unknown=", ".join(res["unknown"])))
        for g in data["gpus"]:
            c.print(f"[bold]{g['id']}[/]  ({g['vendor']} {g['architecture']}, {g['form_factor_detail']})")
            for k, v in g.items():
                if k not in ("id", "notes", "source") and v not in (None, ""):
                    c.print(f"  {k:22s} {_free_text(k, v)}", soft_wrap=True, markup=False)
            c.print(f"  {t('gpus.show.source'):22s} {g['source']}", soft_wrap=True, markup=False)
            c.print(f"  {t('gpus.show.notes'):22s} {_free_text('notes', g['notes'])}", soft_wrap=True, markup=False)


def _free_text(key: str, value: object) -> str:
    """A source's own words (notes, provenance) are English in the data files: other languages show their
    links and point to --json for the text, so that no half-English line is shown as a translation."""
    import re

    from gpuquote.i18n import current_lang

    if current_lang() == "en" or not (key == "notes" or key.endswith("_source")) or not isinstance(value, str):
        return str(value)
    links = re.findall(r"https?://\S+", value)
    return " ".join([*links, t("gpus.show.text_in_json")])
