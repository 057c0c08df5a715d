"""Quote checking, purchase TCO and quote import: the dicts behind `quote check`, `tco` and `import quotes`.

The CLI's --json and the web API return exactly these dicts. A file with bad quotes still reports the
good ones; the bad ones are listed under "errors" (one line each) and the CLI exits 2.
"""

from __future__ import annotations

from pathlib import Path

from gpuquote.errors import BadInput
from gpuquote.offers.checklist import CHECKLIST_ITEMS, differences, run_checklist
from gpuquote.offers.comparable import Checked, compare_all
from gpuquote.offers.currency import parse_overrides
from gpuquote.offers.forms import GRANULARITY_S, HOURS_PER_MONTH, check_utilisation
from gpuquote.offers.likeforlike import contradiction_text, contradictions
from gpuquote.offers.quote_model import Assessment
from gpuquote.offers.quotes import ParsedQuotes, Quote, parse_quotes_text, read_quote_file
from gpuquote.offers.tco import break_even, compute_tco

SWEEP = (0.25, 0.5, 0.75, 1.0)
CONVENTIONS = {"hours_per_month": HOURS_PER_MONTH, "hours_per_year": 8760.0,
               "usd_per_gpu_hour": "USD per GPU-hour used (per MIG slice for a MIG quote), at the utilisation",
               "utilisation": "monthly, term and purchase costs are spread over hours x utilisation; pay-as-you-go "
                              "hourly prices do not depend on it"}


def _overrides(rate_overrides: dict[str, float] | list[str] | None) -> dict[str, float]:
    if rate_overrides is None:
        return {}
    if isinstance(rate_overrides, dict):
        return {k.upper(): float(v) for k, v in rate_overrides.items()}
    return parse_overrides(list(rate_overrides))


def load(path_or_text: str | Path, overrides: dict[str, float], fmt: str | None = None,
         name: str | None = None) -> tuple[ParsedQuotes, str]:
    """A path to a .yaml/.csv file, or the file's text (web uploads); returns the parse and a display name."""
    if isinstance(path_or_text, Path) or ("\n" not in str(path_or_text) and fmt is None):
        return read_quote_file(path_or_text, overrides), str(path_or_text)
    text = str(path_or_text)
    if fmt is None:
        first = next((ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
        fmt = "csv" if "," in first and ":" not in first else "yaml"
    return parse_quotes_text(text, fmt, name or "<quotes>", overrides), name or "<quotes>"


def _price_text(q: Quote) -> str:
    p = q.price
    s = f"{p.amount:,.2f}".rstrip("0").rstrip(".") + f" {p.currency}/{p.per}"
    if p.term_months:
        s += f", {p.term_months:g}-month term"
    if q.form == "gpu_hour":
        s += " per GPU"
    return s


def quote_report(q: Quote, a: Assessment, utilisation: float) -> dict:
    """Everything `quote check` says about one quote (its assessment), except comparability (needs the others)."""
    pr, items, unit, tco = a.prices, a.checklist, a.unit, a.prices["tco"]
    node_h = pr["usd_per_node_hour"]
    out = {
        "id": q.id, "vendor": q.vendor, "gpu": q.gpu, "gpu_id": q.gpu_id, "gpu_count": q.gpu_count, "form": q.form,
        "unit": unit, "exclusive": q.exclusive, "region": q.region, "spot": q.spot,
        "price": q.price.model_dump(), "price_text": _price_text(q),
        "rate": pr["rate"].to_dict(), "rates": [r.to_dict() for r in pr["rates"]],
        "utilisation": utilisation,
        "usd_per_gpu_hour": pr["usd_per_gpu_hour"], "usd_per_node_hour": node_h,
        "usd_per_node_month": node_h * HOURS_PER_MONTH * utilisation if node_h is not None else None,
        "committed": pr["committed"], "commitment_usd": pr["commitment_usd"], "formula": pr["formula"],
        "billing": {"granularity_s": q.billing_granularity_s or (GRANULARITY_S.get(q.price.per)
                                                                 if q.form != "purchase" else None),
                    "stated": q.billing_granularity_s is not None},
        "tco": tco.to_dict() if tco else None,
        "checklist": [i.to_dict() for i in items],
        "summary": {s: sum(1 for i in items if i.status == s) for s in ("ok", "missing", "mismatch")},
        "comparable_with": [], "differs_from": {},
        "advisories": a.advisories, "assumptions": a.assumptions, "warnings": a.warnings,
        "line": q.line,
    }
    if unit == "mig_slice":
        out["usd_per_slice_hour"] = pr["usd_per_gpu_hour"]
    return out


def _compare(reports: list[dict], checked: list[Checked]) -> tuple[list[dict], list[str], bool]:
    """Fill comparable_with / differs_from (offers.comparable); the like-for-like groups ranked by $/GPU-hour."""
    res = compare_all(checked)
    for r in reports:
        r["comparable_with"] = res.comparable_with[r["id"]]
        r["differs_from"] = res.differs_from[r["id"]]
        r["comparable_count"] = res.comparable_count[r["id"]]
        r["differs_count"] = res.differs_count[r["id"]]
    return res.groups, res.unranked, res.truncated


def check_quotes(path_or_text: str | Path, utilisation: float = 1.0,
                 rate_overrides: dict[str, float] | list[str] | None = None, *, fmt: str | None = None,
                 name: str | None = None) -> dict:
    """Normalised prices, the 10-item checklist and comparability for every quote of a file."""
    u = check_utilisation(utilisation)
    ov = _overrides(rate_overrides)
    parsed, shown = load(path_or_text, ov, fmt, name)
    reports: list[dict] = []
    checked: list[Checked] = []
    errors = [e.to_dict() for e in parsed.errors]
    for q in parsed.quotes:
        try:
            a = q.assess(u, ov)
            reports.append(quote_report(q, a, u))
            checked.append(a.checked(q.id))
        except BadInput as e:  # e.g. a currency known at parse time but refused later
            errors.append({"id": q.id, "line": q.line, "message": f"quote '{q.id}': {e}",
                           "fields": [{"field": e.field, "message": str(e), "accepted": e.accepted}]})
    groups, unranked, truncated = _compare(reports, checked)
    rates: dict[str, dict] = {}
    for r in reports:
        for rt in r["rates"]:
            rates.setdefault(rt["currency"], rt)
    return {
        "file": shown, "format": parsed.fmt, "utilisation": u, "rates": rates, "conventions": CONVENTIONS,
        "checklist_items": [{"item": n, "name": nm} for n, nm in CHECKLIST_ITEMS],
        "quotes": reports, "groups": groups, "unranked": unranked, "errors": errors,
        "pairs_listed": "capped" if truncated else "all",
    }


def tco(path_or_text: str | Path, buy: list[str] | None = None, rent: list[str] | None = None,
        utilisation: float = 1.0, rate_overrides: dict[str, float] | list[str] | None = None, *,
        fmt: str | None = None, name: str | None = None) -> dict:
    """Purchase TCO per GPU-hour and break-even against rentals (`gpuquote tco --buy ID --rent ID FILE`)."""
    u = check_utilisation(utilisation)
    ov = _overrides(rate_overrides)
    parsed, shown = load(path_or_text, ov, fmt, name)
    by_id = {q.id: q for q in parsed.quotes}
    bad = {e.quote_id: e for e in parsed.errors}
    purchases = [q.id for q in parsed.quotes if q.form == "purchase"]
    rentals = [q.id for q in parsed.quotes if q.form != "purchase"]

    def pick(ids: list[str] | None, pool: list[str], flag: str, what: str) -> list[str]:
        if not ids:
            return pool
        for i in ids:
            if i in bad:
                raise BadInput(f"{flag}: {bad[i].line_text()}", field=flag.lstrip("-"))
            if i not in pool:
                raise BadInput(f"{flag}: '{i}' is not a {what} quote in {shown}; accepted: {', '.join(pool) or 'none'}",
                               field=flag.lstrip("-"), accepted=pool)
        return list(ids)

    buy_ids = pick(buy, purchases, "--buy", "purchase")
    rent_ids = pick(rent, rentals, "--rent", "rental")
    if not rent:  # default: rentals of the same GPU, whole GPUs (a slice is never compared with a server)
        gpus = {by_id[b].gpu_id for b in buy_ids} - {None}
        same = [i for i in rent_ids if by_id[i].gpu_id in gpus and not by_id[i].mig_profile
                and by_id[i].exclusive != "shared"]
        rent_ids = same or rent_ids
    if not buy_ids:
        raise BadInput(f"--buy: no purchase quote (form: purchase) in {shown}; accepted: a file with one",
                       field="buy", accepted=[])
    out_buys = []
    rates: dict[str, dict] = {}
    for bid in buy_ids:
        q = by_id[bid]
        t = compute_tco(q.price, q.tco, q.gpu_count, utilisation=u, overrides=ov)
        for r in t.rates:
            rates.setdefault(r.currency, r.to_dict())
        sweep = []
        for su in sorted({*SWEEP, u}):
            ts = compute_tco(q.price, q.tco, q.gpu_count, utilisation=su, overrides=ov)
            sweep.append({"utilisation": su, "usd_per_gpu_hour": ts.usd_per_gpu_hour,
                          "usd_per_node_hour": ts.usd_per_node_hour, "total_usd": ts.total_usd})
        buy_items = run_checklist(q.facts())
        vs = []
        for rid in rent_ids:
            rq = by_id[rid]
            p1 = rq.prices(1.0, ov)
            pu = rq.prices(u, ov)
            for r in p1["rates"]:
                rates.setdefault(r.currency, r.to_dict())
            diff = differences(bid, buy_items, rid, run_checklist(rq.facts()))
            like = [d for d in diff if d["item"] in (1, 2, 4, 5)]
            row = {"rent_id": rid, "rent_price_text": _price_text(rq), "rent_form": rq.form,
                   "rent_usd_per_gpu_hour": pu["usd_per_gpu_hour"], "buy_usd_per_gpu_hour": t.usd_per_gpu_hour,
                   "comparable": not diff, "differs": [d["message"] for d in diff]}
            if rq.mig_profile or rq.exclusive == "shared":
                row.update(break_even_utilisation=None, break_even_months=None, buy_cheaper=None,
                           reason="a MIG slice / shared GPU is never compared with whole GPUs")
            elif p1["usd_per_gpu_hour"] is None:
                row.update(break_even_utilisation=None, break_even_months=None, buy_cheaper=None,
                           reason="the rental does not state gpu_count")
            else:
                row.update(break_even(t, p1["usd_per_gpu_hour"], p1["committed"]))
                if like:
                    row["warning"] = "not the same GPU configuration: " + "; ".join(d["message"] for d in like)
            vs.append(row)
        out_buys.append({"id": bid, "vendor": q.vendor, "gpu_id": q.gpu_id, "gpu_count": q.gpu_count,
                         "price": q.price.model_dump(), "price_text": _price_text(q), "tco": t.to_dict(),
                         "usd_per_gpu_hour": t.usd_per_gpu_hour, "usd_per_node_hour": t.usd_per_node_hour,
                         "sweep": sweep, "vs": vs})
    return {"file": shown, "utilisation": u, "rates": rates, "conventions": CONVENTIONS, "purchases": out_buys,
            "errors": [e.to_dict() for e in parsed.errors]}


def import_quotes(path: str | Path, rate_overrides: dict[str, float] | list[str] | None = None) -> dict:
    """Store a quote file's quotes as offers with source `quote:<file name>` (one snapshot, one transaction).

    Bad quotes are skipped with their one-line reason (listed under "errors"); so is a quote that contradicts
    the GPU catalog on checklist items 1-5 (also under "skipped_quotes", with the item and the stated value).
    A purchase is stored at its TCO per node-hour at utilisation 1, with form `purchase` (see Quote.to_offer).
    """
    from gpuquote.store import import_offers, write_engine

    ov = _overrides(rate_overrides)
    p = Path(path)
    parsed = read_quote_file(p, ov)
    source = f"quote:{p.name}"[:64]
    offers = []
    skip: dict[str, int] = {}
    errors = [e.to_dict() for e in parsed.errors]
    for e in parsed.errors:
        skip[e.line_text()] = skip.get(e.line_text(), 0) + 1
    skipped_quotes: list[dict] = []
    for q in parsed.quotes:
        bad = contradictions(q.facts(), run_checklist(q.facts()))
        if bad:
            msg = contradiction_text(q.id, bad)
            skip[msg] = skip.get(msg, 0) + 1
            skipped_quotes.append({"id": q.id, "line": q.line, "contradicts": bad, "message": msg})
            errors.append({"id": q.id, "line": q.line, "message": msg,
                           "fields": [{"field": f"checklist.{b['name']}", "message": b["message"], "accepted": []}
                                      for b in bad]})
            continue
        try:
            offers.append(q.to_offer(source, overrides=ov))
        except BadInput as e:
            skip[str(e)] = skip.get(str(e), 0) + 1
            errors.append({"id": q.id, "line": q.line, "message": str(e),
                           "fields": [{"field": e.field, "message": str(e), "accepted": e.accepted}]})
    if not offers:
        raise BadInput(f"{path}: no valid quote to import; first problem: "
                       f"{errors[0]['message'] if errors else 'empty file'}", field="file")
    raw = p.read_bytes()
    ctype = "text/csv" if parsed.fmt == "csv" else "application/yaml"
    engine = write_engine()
    res = import_offers(engine, source, offers, skipped=sum(skip.values()), skip_reasons=skip,
                        provenance={"file": str(p.resolve()), "format": parsed.fmt, "kind": "quotes"},
                        raw=[(p.name, ctype, raw)], check=False)
    out = res.to_dict()
    out.update({"errors": errors, "offer_ids": [o.id for o in offers], "skipped_quotes": skipped_quotes})
    return out
