"""`gpuquote estimate JOB [--gpu ID] [--gpus N] [--json]`: memory, fit, GPU count, throughput, time."""

from __future__ import annotations

import typer

from gpuquote.cli.common import console, fmt_num, print_json


def register(app: typer.Typer) -> None:
    @app.command("estimate")
    def estimate_cmd(
        job: str = typer.Argument(..., help="Job file (YAML/JSON, DESIGN.md section 3)."),
        gpu: str = typer.Option(None, "--gpu", help="GPU id or alias; overrides the job's hardware.gpu."),
        gpus: int = typer.Option(None, "--gpus", help="GPU count; overrides the job's hardware.gpus."),
        as_json: bool = typer.Option(False, "--json", help="JSON output (the API body)."),
    ) -> None:
        """Size a job: memory per GPU, whether it fits, minimum GPUs, throughput and time."""
        from gpuquote.errors import BadInput
        from gpuquote.service.estimate import estimate_job

        if gpus is not None and gpus < 1:
            raise BadInput(f"gpus: must be >= 1 (got {gpus})", field="gpus")
        data = estimate_job(job, gpu=gpu, gpus=gpus)
        if as_json:
            print_json(data)
            return
        _render(data)


def _layout_text(layout: dict | str | None) -> str:
    """`layout` is a dict (tp, pp, ... and `describe`); older outputs held the string alone."""
    return str(layout.get("describe", "")) if isinstance(layout, dict) else str(layout or "")


def _render(d: dict) -> None:
    from rich.table import Table

    c = console()
    c.print(
        f"[bold]{d['kind']}[/] on {d['gpus']} x {d['gpu']}"
        + (f"  layout: {_layout_text(d.get('layout'))}" if d.get("layout") else ""),
        soft_wrap=True,
    )
    mem = Table(show_header=True)
    mem.add_column("memory per GPU")
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
            mem.add_row(k.removesuffix("_gib").replace("_", " "), fmt_num(v))
    mem.add_row("[bold]total[/]", f"[bold]{fmt_num(d['memory']['total_per_gpu_gib'])}[/]")
    c.print(mem)
    fits = "[green]fits[/]" if d["fits"] else "[red]does not fit[/]"
    c.print(f"{fits}; minimum GPUs: {d['min_gpus'] if d['min_gpus'] is not None else 'none up to 1024'}")
    t = d["throughput"]
    c.print(
        f"throughput: {fmt_num(t['tokens_per_s'], 1)} tokens/s "
        f"({fmt_num(t['tokens_per_s_per_gpu'], 1)} per GPU),"
        f" MFU {t['mfu'] * 100:.1f}%, bound: [bold]{t['bound']}[/]"
    )
    if d.get("latency"):
        lat, cap = d["latency"], d["capacity"]
        c.print(
            f"latency: TTFT {fmt_num(lat['ttft_ms'], 1)} ms, TPOT {fmt_num(lat['tpot_ms'], 2)} ms; "
            f"KV capacity {cap['max_kv_tokens']:,} tokens, max batch {cap['max_batch']}"
        )
    c.print(f"time: {fmt_num(d['time_hours'], 2)} h, {fmt_num(d['gpu_hours'], 1)} GPU-hours")
    if d.get("time_hours_range"):
        lo, hi = d["time_hours_range"]
        c.print(f"time range (network not stated): {fmt_num(lo, 2)} - {fmt_num(hi, 2)} h")
    if d.get("accuracy"):
        from gpuquote.i18n import t as tr

        acc = d["accuracy"]
        c.print(tr("est_infer.accuracy_line", band=f"{acc['band_pct']:g}", basis=acc["basis"]), markup=False)
    c.print("[bold]assumptions[/]:")
    for a in d["assumptions"]:
        c.print(f"  - {a}", soft_wrap=True, markup=False)
