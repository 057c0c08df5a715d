"""`gpuquote probe [--quote FILE] [--id ID] [--bench] [--json]`: what this machine is, and where it differs."""

from __future__ import annotations

from pathlib import Path

import typer

from gpuquote.cli.common import console, print_json
from gpuquote.i18n import t


def _fmt(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return t("probe.m.yes") if v else t("probe.m.no")
    if isinstance(v, dict):
        return ", ".join(f"{k}={_fmt(x)}" for k, x in v.items() if x is not None)
    if isinstance(v, list):
        return ", ".join(_fmt(x) for x in v)
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _machine_rows(d: dict) -> list[tuple[str, str]]:
    s = d["gpu_summary"]
    rows: list[tuple[str, str]] = []
    if s["count"]:
        g0 = d["gpus"][0]
        excl = t("probe.exclusive") if s["exclusive"] is True else str(s["exclusive"])
        mem = f"{s['memory_gib']:g} GB" if s.get("memory_gib") else "?"
        rows.append((t("probe.row.gpus"), f"{s['count']} x {s['gpu_id'] or g0['name']} ({g0['name']}), {mem}, "
                     f"{s.get('variant') or '?'}, {excl}"))
        topo = d.get("topology") or {}
        rows.append((t("probe.row.intra_node"), f"{s.get('intra_node') or '?'}"
                     + (f" ({topo['evidence']})" if topo.get("evidence") else "")))
        p = g0.get("pcie") or {}
        if p.get("gen_max"):
            rows.append(("PCIe", t("probe.m.pcie", gen=_fmt(p.get("gen_current")), width=_fmt(p.get("width_current")),
                                   gen_max=_fmt(p.get("gen_max")), width_max=_fmt(p.get("width_max")))))
        if g0.get("power_limit_w"):
            rows.append((t("probe.row.power"),
                         t("probe.m.power", w=f"{g0['power_limit_w']:g}", max=_fmt(g0.get("max_power_limit_w")))))
        dr = d.get("driver") or {}
        if dr.get("driver_version"):
            rows.append((t("probe.row.driver"), f"{dr['driver_version']} / CUDA {_fmt(dr.get('cuda_version'))}"))
    else:
        rows.append((t("probe.row.gpus"), t("probe.no_gpu")))
    c = d["cpu"]
    rows.append((t("probe.row.cpu"), f"{_fmt(c.get('sockets'))} x {c.get('model') or '?'}, "
                 + t("probe.m.cores", cores=_fmt(c.get("cores")), threads=_fmt(c.get("threads")))))
    rows.append((t("probe.row.ram"), f"{_fmt(d['memory'].get('ram_gib'))} GiB"))
    st = d["storage"]
    rows.append((t("probe.row.nvme"), t("probe.m.nvme", n=st.get("nvme_count", 0), total=_fmt(st.get("nvme_total_tb")),
                                       data=_fmt(st.get("nvme_data_tb")))))
    n = d["network"]
    rows.append((t("probe.row.network"), f"{n.get('kind')}, {_fmt(n.get('gbps_per_node'))} Gb/s"))
    bad = [s for s in d["sources"] if s["status"] != "ok"]
    if bad:
        rows.append((t("probe.row.unread"), "; ".join(f"{s['command']}: {s['status']}" for s in bad)))
    return rows


def _bench_rows(b: dict) -> list[tuple[str, str]]:
    rows = []
    dk = b.get("disk") or {}
    rows.append((t("probe.bench.disk"), f"write {_fmt(dk.get('write_gbs'))} GB/s, read {_fmt(dk.get('read_gbs'))} "
                 f"GB/s (O_DIRECT)" if dk.get("status") == "ok" else f"{dk.get('status')}: {dk.get('reason')}"))
    hm = b.get("host_memory") or {}
    rows.append((t("probe.bench.memory"), f"copy {_fmt(hm.get('copy_gbs'))} GB/s" if hm.get("status") == "ok"
                 else f"{hm.get('status')}: {hm.get('reason')}"))
    g = b.get("gpu") or {}
    if g.get("status") == "ok":
        for r in g.get("versus_peak", []):
            rows.append(("GPU", r["text"]))
    else:
        rows.append(("GPU", f"{g.get('status')}: {g.get('reason')}"))
    return rows


_STYLE = {"confirmed": "green", "differs": "bold red", "unverifiable": "yellow"}


def register(app: typer.Typer) -> None:
    @app.command("probe", help=t("help.probe"))
    def probe(
        quote: Path = typer.Option(None, "--quote", help=t("help.probe.opt.quote")),
        quote_id: str = typer.Option(None, "--id", help=t("help.probe.opt.id")),
        bench: bool = typer.Option(False, "--bench", help=t("help.probe.opt.bench")),
        as_json: bool = typer.Option(False, "--json", help=t("help.probe.opt.json")),
        timeout: float = typer.Option(60.0, "--timeout", help=t("help.probe.opt.timeout")),
        bench_seconds: float = typer.Option(120.0, "--bench-seconds", help=t("help.probe.opt.bench_seconds")),
        bench_dir: Path = typer.Option(None, "--bench-dir",
                                       help=t("help.probe.opt.bench_dir")),
        recorded: Path = typer.Option(None, "--recorded",
                                      help=t("help.probe.opt.recorded")),
        root: Path = typer.Option(Path("/"), "--root", help=t("help.probe.opt.root")),
    ) -> int:
        """What this machine really is (GPUs, links, CPU, RAM, disks, network) and where it differs from a quote.

        Exit code 3 when a checklist item differs from the quote.
        """
        from gpuquote.i18n import localize
        from gpuquote.service.probe import probe_machine

        data = probe_machine(quote_path=quote, quote_id=quote_id, bench=bench, root=root, timeout_s=timeout,
                             recorded=recorded, bench_seconds=bench_seconds, bench_dir=bench_dir)
        data = localize(data)
        if as_json:
            print_json(data)
            return data["exit_code"]
        from rich.table import Table

        c = console()
        tbl = Table(title=t("probe.title"), show_header=False)
        tbl.add_column("what", style="bold")
        tbl.add_column("found")
        for k, v in _machine_rows(data):
            tbl.add_row(k, v)
        c.print(tbl)
        if data.get("bench"):
            bt = Table(title=t("probe.bench.title"), show_header=False)
            bt.add_column("what", style="bold")
            bt.add_column("measured")
            for k, v in _bench_rows(data["bench"]):
                bt.add_row(k, v)
            c.print(bt)
        if data["verdict"]:
            vt = Table(title=t("probe.verdict.title", id=data["quote"]["id"] or "-"))
            for col in ("#", t("probe.col.item"), t("probe.col.status"), t("probe.col.quoted"),
                        t("probe.col.found"), t("probe.col.note")):
                vt.add_column(col)
            for i in data["verdict"]:
                vt.add_row(str(i["item"]), i["name"], f"[{_STYLE[i['status']]}]{t('probe.status.' + i['status'])}[/]",
                           _fmt(i["quoted"]), _fmt(i["found"]), i.get("note") or "")
            c.print(vt)
            sm = data["summary"]
            c.print(t("probe.summary", **sm))
        return data["exit_code"]
