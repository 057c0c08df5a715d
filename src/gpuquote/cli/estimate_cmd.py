"""`gpuquote estimate JOB [--gpu ID] [--gpus N] [--json]`: memory, fit, GPU count, throughput, time."""

from __future__ import annotations

import typer

from gpuquote.cli.common import console, fmt_num, print_json
from gpuquote.i18n import t


def register(app: typer.Typer) -> None:
    @app.command("estimate", help=t("help.estimate"))
    def estimate_cmd(
        job: str = typer.Argument(..., help=t("help.estimate.opt.job")),
        gpu: str = typer.Option(None, "--gpu", help=t("help.estimate.opt.gpu")),
        gpus: int = typer.Option(None, "--gpus", help=t("help.estimate.opt.gpus")),
        as_json: bool = typer.Option(False, "--json", help=t("help.estimate.opt.json")),
    ) -> None:
        """Size a job: memory per GPU, whether it fits, minimum GPUs, throughput and time."""
        from gpuquote.errors import BadInput
        from gpuquote.service.estimate import estimate_job

        if gpus is not None and gpus < 1:
            raise BadInput(t("err.gpus_min", got=gpus), field="gpus")
        from gpuquote.i18n import localize

        data = localize(estimate_job(job, gpu=gpu, gpus=gpus))
        if as_json:
            print_json(data)
            return
        _render(data)


def _layout_text(layout: dict | str | None) -> str:
    """`layout` is a dict (tp, pp, ... and `describe`); older outputs held the string alone."""
    return str(layout.get("describe", "")) if isinstance(layout, dict) else str(layout or "")


def _render(d: dict) -> None:
    from rich.table import Table

    from gpuquote.i18n import t

    c = console()
    c.print(
        f"[bold]{d['kind']}[/] " + t("est.cli.on", gpus=d["gpus"], gpu=d["gpu"])
        + (f"  {t('est.cli.layout')}: {_layout_text(d.get('layout'))}" if d.get("layout") else ""),
        soft_wrap=True,
    )
    mem = Table(show_header=True)
    mem.add_column(t("est.cli.memory_per_gpu"))
    mem.add_column("GiB", justify="right")
    for k in (
        "weights_gib",
        "gradients_gib",
        "optimizer_gib",
        "activations_gib",
        "kv_cache_gib",
        "overhead_gib",
    ):
        v = d["memory"][k]
        if v:
            mem.add_row(t("est.cli.mem." + k.removesuffix("_gib")), fmt_num(v))
    mem.add_row(f"[bold]{t('est.cli.mem.total')}[/]", f"[bold]{fmt_num(d['memory']['total_per_gpu_gib'])}[/]")
    c.print(mem)
    fits = f"[green]{t('est.cli.fits')}[/]" if d["fits"] else f"[red]{t('est.cli.no_fit')}[/]"
    c.print(f"{fits}; " + t("est.cli.min_gpus", n=d["min_gpus"] if d["min_gpus"] is not None
                              else t("est.cli.none_up_to")))
    tp = d["throughput"]
    c.print(t("est.cli.throughput", tps=fmt_num(tp["tokens_per_s"], 1), per_gpu=fmt_num(tp["tokens_per_s_per_gpu"], 1),
              mfu=f"{tp['mfu'] * 100:.1f}", bound=f"[bold]{t('est.cli.bound.' + str(tp['bound']))}[/]"))
    if d.get("latency"):
        lat, cap = d["latency"], d["capacity"]
        c.print(t("est.cli.latency", ttft=fmt_num(lat["ttft_ms"], 1), tpot=fmt_num(lat["tpot_ms"], 2),
                  kv=f"{cap['max_kv_tokens']:,}", batch=cap["max_batch"]))
    c.print(t("est.cli.time", hours=fmt_num(d["time_hours"], 2), gpu_hours=fmt_num(d["gpu_hours"], 1)))
    if d.get("time_hours_range"):
        lo, hi = d["time_hours_range"]
        c.print(t("est.cli.time_range", lo=fmt_num(lo, 2), hi=fmt_num(hi, 2)))
    if d.get("accuracy"):
        acc = d["accuracy"]
        c.print(t("est_infer.accuracy_line", band=f"{acc['band_pct']:g}", basis=acc["basis"]), markup=False)
    c.print(f"[bold]{t('est.cli.assumptions')}[/]:")
    for a in d["assumptions"]:
        c.print(f"  - {a}", soft_wrap=True, markup=False)
