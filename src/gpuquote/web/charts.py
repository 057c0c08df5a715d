"""Plotly figures (data + layout dicts) built from service dicts; static/app.js only draws them.

Building figures here keeps the logic testable in Python and keeps inline script out of the pages.
"""

from __future__ import annotations

from gpuquote.i18n import t

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")


def _layout(x: str, y: str, **kw) -> dict:
    return {"xaxis": {"title": {"text": x}, "zeroline": False}, "yaxis": {"title": {"text": y}, "zeroline": False},
            "margin": {"l": 70, "r": 20, "t": 30, "b": 60}, "height": 420, "hovermode": "closest",
            "legend": {"orientation": "h", "y": -0.2}, **kw}


def plan_chart(result: dict, lang: str) -> dict | None:
    """Cost to finish against time to finish, one point per ranked row; the Pareto front highlighted."""
    rows = [r for r in result.get("rows", []) if r.get("time_hours") is not None
            and r.get("total_cost_usd") is not None]
    if not rows:
        return None

    def label(r: dict) -> str:
        return f"{r.get('provider', '')} {r.get('sku', '')} {r.get('region', '') or ''} x{r.get('gpus', '')}".strip()

    # every Pareto point the API returns (pareto_front), not only those among the top rows
    front = sorted((r for r in result.get("pareto_front") or [] if r.get("time_hours") is not None
                    and r.get("total_cost_usd") is not None), key=lambda r: r["time_hours"])
    if not front:
        front = sorted((r for r in rows if r.get("pareto")), key=lambda r: r["time_hours"])
    hover = "%{text}<br>%{x:.2f} h, $%{y:,.2f}<extra></extra>"
    data = [{"type": "scatter", "mode": "markers", "name": t("web.plan.chart.offers", lang),
             "x": [r["time_hours"] for r in rows], "y": [r["total_cost_usd"] for r in rows],
             "text": [label(r) for r in rows], "hovertemplate": hover,
             "marker": {"color": "#9aa5b1", "size": 8}}]
    if front:
        data.append({"type": "scatter", "mode": "lines+markers", "name": t("web.plan.chart.pareto", lang),
                     "x": [r["time_hours"] for r in front], "y": [r["total_cost_usd"] for r in front],
                     "text": [label(r) for r in front], "hovertemplate": hover,
                     "marker": {"color": "#d62728", "size": 11, "symbol": "diamond"},
                     "line": {"color": "#d62728", "shape": "hv"}})
    layout = _layout(t("web.plan.chart.x", lang), t("web.plan.chart.y", lang))
    layout["xaxis"]["type"] = "log"  # a nested key: Plotly.js has no `xaxis_type` shorthand (that is Python's)
    layout["yaxis"]["tickformat"] = "$,.2f"
    return {"data": data, "layout": layout}


def history_chart(data: dict, lang: str) -> dict | None:
    """Median USD per GPU-hour per day, one line per provider, with the min-max range as error bars."""
    series = data.get("series") or []
    if not series:
        return None
    days = sorted({s["day"] for s in series})
    if len(days) == 1:
        return _one_day_chart(data, series, days[0], lang)
    by: dict[str, list[dict]] = {}
    for s in series:
        by.setdefault(s["provider"], []).append(s)
    traces = []
    for i, (prov, pts) in enumerate(sorted(by.items())):
        pts.sort(key=lambda p: p["day"])
        med = [p["median_usd_per_gpu_hour"] for p in pts]
        traces.append({
            "type": "scatter", "mode": "lines+markers", "name": prov, "x": [p["day"] for p in pts], "y": med,
            "line": {"color": PALETTE[i % len(PALETTE)]},
            "error_y": {"type": "data", "symmetric": False, "visible": True,
                        "array": [p["max_usd_per_gpu_hour"] - m for p, m in zip(pts, med, strict=True)],
                        "arrayminus": [m - p["min_usd_per_gpu_hour"] for p, m in zip(pts, med, strict=True)]},
            "customdata": [[p["min_usd_per_gpu_hour"], p["max_usd_per_gpu_hour"], p["offers"]] for p in pts],
            "hovertemplate": prov + " %{x}<br>median $%{y:.3f} (min $%{customdata[0]:.3f}, max "
                             "$%{customdata[1]:.3f}, %{customdata[2]} offers)<extra></extra>"})
    layout = _layout(t("web.history.chart.x", lang), t("web.history.chart.y", lang))
    layout["xaxis"]["type"] = "date"
    return {"data": traces, "layout": layout}


def _one_day_chart(data: dict, series: list[dict], day: str, lang: str) -> dict:
    """One day of history is not a time series (every provider stacked on one x): the providers side by side,
    cheapest median first, each with its min-max bar."""
    pts = sorted(series, key=lambda p: (p["median_usd_per_gpu_hour"], p["provider"]))
    med = [p["median_usd_per_gpu_hour"] for p in pts]
    trace = {
        "type": "scatter", "mode": "markers", "name": day, "x": [p["provider"] for p in pts], "y": med,
        "marker": {"color": PALETTE[0], "size": 9},
        "error_y": {"type": "data", "symmetric": False, "visible": True,
                    "array": [p["max_usd_per_gpu_hour"] - m for p, m in zip(pts, med, strict=True)],
                    "arrayminus": [m - p["min_usd_per_gpu_hour"] for p, m in zip(pts, med, strict=True)]},
        "customdata": [[p["min_usd_per_gpu_hour"], p["max_usd_per_gpu_hour"], p["offers"]] for p in pts],
        "hovertemplate": "%{x} " + day + "<br>median $%{y:.3f} (min $%{customdata[0]:.3f}, max "
                         "$%{customdata[1]:.3f}, %{customdata[2]} offers)<extra></extra>"}
    layout = _layout(t("web.f.provider", lang), t("web.history.chart.y", lang))
    layout["xaxis"]["type"] = "category"
    layout["margin"]["t"] = 50
    kind = t("history.spot" if data.get("spot") else "history.ondemand", lang)
    layout["title"] = {"text": t("history.one_day", lang, gpu=data["gpu"]["id"], kind=kind, day=day),
                       "font": {"size": 13}}
    return {"data": [trace], "layout": layout}


SWEEP = tuple(round(0.1 * i, 2) for i in range(1, 11))


def tco_chart(result: dict, req, lang: str) -> dict | None:
    """USD per used GPU-hour against utilisation: each purchase's TCO and each rental it is compared with.

    The lines come from the same service (`check_quotes` at each utilisation), so a crossing is the
    break-even utilisation `tco` reports; the chosen utilisation is marked.
    """
    from gpuquote.web.api import run_quote_check

    if not result.get("purchases"):
        return None
    ids = {p["id"] for p in result["purchases"]} | {v["rent_id"] for p in result["purchases"] for v in p["vs"]}
    lines: dict[str, list[float | None]] = {i: [] for i in ids}
    for u in SWEEP:
        chk = run_quote_check(req.text, req.format, req.name, u, req.rates)
        by_id = {q["id"]: q for q in chk["quotes"]}
        for i in ids:
            lines[i].append(by_id.get(i, {}).get("usd_per_gpu_hour"))
    data = []
    for n, (qid, ys) in enumerate(sorted(lines.items())):
        buy = any(p["id"] == qid for p in result["purchases"])
        data.append({"type": "scatter", "mode": "lines+markers", "name": qid + (" (buy)" if buy else " (rent)"),
                     "x": list(SWEEP), "y": ys, "line": {"color": PALETTE[n % len(PALETTE)],
                                                         "dash": "solid" if buy else "dot", "width": 3 if buy else 2},
                     "hovertemplate": qid + ": U=%{x:.0%}, $%{y:.3f}/GPU-h<extra></extra>"})
    u = result.get("utilisation")
    layout = _layout(t("web.tco.chart.x", lang), t("web.tco.chart.y", lang))
    layout["xaxis"]["tickformat"] = ".0%"
    layout["yaxis"]["type"] = "log"
    if u is not None:
        layout["shapes"] = [{"type": "line", "x0": u, "x1": u, "yref": "paper", "y0": 0, "y1": 1,
                             "line": {"color": "#555", "dash": "dash", "width": 1}}]
    return {"data": data, "layout": layout}
