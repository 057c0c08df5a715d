"""`watch`: rules that tell you when an offer's price, a job's best plan, or an offer's availability changes.

Two kinds of rule:
- `offers`: offer filters (as `gpuquote offers`) and a threshold in USD (or `currency`) per GPU-hour. An offer
  *crosses* when it is below the threshold now and was not at the last evaluation (a new offer, or one
  whose price fell under the threshold). With `available`, only offers the source reports available count: an offer that
  comes back (vast, RunPod, Shadeform report it) crosses again.
- `plan`: a job and a threshold on its best total cost (`gpuquote plan` over the current store, with
  the same offer filters). It crosses when the best cost falls below the threshold from above.

A rule's state (what its last evaluation saw) is stored with it; `watch add` records the baseline, so
what is already below the threshold when you add the rule is not reported. `watch run` notifies each
crossing once: a failed delivery leaves the crossing unsent, and the next run tries again.
"""

from __future__ import annotations

import math
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from gpuquote.errors import BadInput
from gpuquote.i18n import Msg, t

KINDS = ("offers", "plan")
FILTER_KEYS = ("gpu", "min_gpus", "interconnect", "region", "spot", "provider")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
MAX_OFFERS_IN_BODY = 20
MAX_SEEN = 5000  # offers rules remember the price of at most this many matching offers (the cheapest)
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8000"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_filters(filters: dict | None) -> dict:
    """Validated offer filters; an unknown key or value is BadInput naming it."""
    from gpuquote.service.offers import INTERCONNECTS, gpu_filter_ids

    out: dict[str, Any] = {}
    for k, v in (filters or {}).items():
        if k not in FILTER_KEYS:
            raise BadInput(f"filter '{k}' is not one of {', '.join(FILTER_KEYS)}", field="filters",
                           accepted=list(FILTER_KEYS))
        if v is None or v == "" or v == []:
            continue
        if k == "gpu":
            out[k] = gpu_filter_ids(str(v))[0]
        elif k == "min_gpus":
            x = _number(v, "min_gpus")
            if not x > 0:
                raise BadInput(f"--min-gpus: must be > 0, got {v}", field="min_gpus")
            out[k] = x
        elif k == "interconnect":
            if v not in INTERCONNECTS:
                raise BadInput(Msg("err.not_one_of", field="--interconnect",
                                   value=v, accepted=", ".join(INTERCONNECTS)),
                               field="interconnect", accepted=list(INTERCONNECTS))
            out[k] = v
        elif k == "spot":
            if not isinstance(v, bool):
                raise BadInput(Msg("err.not_one_of", field="--spot",
                                   value=v, accepted="true, false"), field="spot", accepted=["true", "false"])
            out[k] = v
        elif k == "provider":
            items = [v] if isinstance(v, str) else list(v)
            out[k] = sorted({p.strip().lower() for x in items for p in str(x).split(",") if p.strip()})
        else:
            out[k] = str(v).strip()
    return out


def _number(v: Any, field: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise BadInput(f"--{field.replace('_', '-')}: '{v}' is not a number", field=field) from None
    if not math.isfinite(x):
        raise BadInput(f"--{field.replace('_', '-')}: must be a finite number, got {v}", field=field)
    return x


def _job_mapping(job: dict | str | Path) -> dict:
    """The job as a mapping (stored with the rule, so the rule does not depend on the file), validated."""
    from gpuquote.estimate import load_job

    if isinstance(job, dict):
        data = dict(job)
    else:
        p = Path(job)
        if not p.is_file():
            raise BadInput(f"--plan: job file not found: {p}", field="plan")
        from gpuquote.safeload import load_yaml

        data = load_yaml(p.read_bytes(), "plan")  # the same limits and messages as every job file
        if not isinstance(data, dict):
            raise BadInput(f"--plan: {p} must hold a mapping of job fields", field="plan")
    load_job(data)
    return data


def _store(write: bool):
    from gpuquote.store import write_engine
    from gpuquote.store.db import read_engine, user_store_exists

    if write:
        return write_engine()
    return read_engine()[0] if user_store_exists() else None


def add_watch(name: str, *, offers: dict | None = None, plan: dict | str | Path | None = None,
              filters: dict | None = None, below: float | None = None, currency: str | None = None,
              notify: str | None = None, available: bool = False) -> dict:
    """Validate and store a rule with its baseline (the current evaluation, not notified)."""
    from gpuquote.offers.currency import canonical, rate
    from gpuquote.service.notify import parse_target
    from gpuquote.store.watches import add_rule

    if not isinstance(name, str) or not NAME_RE.match(name):
        raise BadInput(f"NAME: '{name}' must be 1-100 letters, digits, '.', '_' or '-' (starting with a letter or "
                       "digit)", field="name")
    if (offers is None) == (plan is None):
        raise BadInput("watch add: give exactly one of --offers (offer filters) or --plan JOB", field="kind",
                       accepted=["--offers", "--plan JOB"])
    kind = "offers" if offers is not None else "plan"
    flt = check_filters({**(offers or {}), **(filters or {})})
    job = _job_mapping(plan) if plan is not None else None
    if below is None and not (available and kind == "offers"):
        raise BadInput("--below: a threshold is needed (offers: per GPU-hour; plan: the job's total cost)",
                       field="below")
    if below is not None:
        below = _number(below, "below")
        if not below > 0:
            raise BadInput(f"--below: must be a positive amount, got {below:g}", field="below")
    if available and kind == "plan":
        raise BadInput("--available: only for --offers rules (availability is reported per offer)",
                       field="available")
    cur = canonical(currency or "USD")
    rate(cur)
    target = (notify or "stdout").strip()
    parse_target(target)
    rule = {"name": name, "kind": kind, "filters": flt, "job": job, "below": below, "currency": cur,
            "available": bool(available), "notify": target, "created_at": _now()}
    ev = evaluate(rule)
    at = _now()
    stored = add_rule(_store(True), rule, {"at": at, "state": ev["state"], "value_usd": ev["value_usd"],
                                           "offer_ids": ev["offer_ids"]})
    return {"watch": public(stored), "baseline": _baseline_view(rule, ev)}


def _baseline_view(rule: dict, ev: dict) -> dict:
    return {"value": _in(ev["value_usd"], rule["currency"]), "value_usd": ev["value_usd"],
            "below": ev["below"], "offer_ids": ev["offer_ids"][:MAX_OFFERS_IN_BODY], "count": len(ev["offer_ids"])}


def _in(usd: float | None, currency: str) -> float | None:
    from gpuquote.offers.currency import from_usd

    return None if usd is None else round(from_usd(usd, currency), 6)


def _threshold_usd(rule: dict) -> float | None:
    from gpuquote.offers.currency import to_usd

    return None if rule.get("below") is None else to_usd(rule["below"], rule["currency"])[0]


def evaluate(rule: dict) -> dict:
    """What the rule sees in the current store: {state, value_usd, below, offer_ids, offers}."""
    return _evaluate_offers(rule) if rule["kind"] == "offers" else _evaluate_plan(rule)


def _evaluate_offers(rule: dict) -> dict:
    from gpuquote.service.offers import gpu_filter_ids
    from gpuquote.store import OfferFilter, open_reader, query_offers

    f = rule["filters"]
    limit = _threshold_usd(rule)
    reader = open_reader()
    try:
        rows, _ = query_offers(reader, OfferFilter(
            gpu_ids=gpu_filter_ids(f["gpu"])[1] if f.get("gpu") else None, min_gpus=f.get("min_gpus"),
            interconnect=f.get("interconnect"), region=f.get("region"), spot=f.get("spot"),
            providers=f.get("provider") or None, sort="price", limit=MAX_SEEN))
    finally:
        reader.close()
    rows = [r for r in rows if r["usd_per_gpu_hour"] is not None]
    if rule.get("available"):
        rows = [r for r in rows if r.get("available") not in (None, False, 0)]  # SQLite returns 1 for true
    # every matching offer's price (the cheapest MAX_SEEN), so a crossing reports the price it came from
    seen = {r["offer_id"]: round(float(r["usd_per_gpu_hour"]), 6) for r in rows}
    rows = [r for r in rows if limit is None or r["usd_per_gpu_hour"] < limit]
    prices = {r["offer_id"]: seen[r["offer_id"]] for r in rows}
    best = min(prices.values()) if prices else None
    return {"state": {"offers": prices, "seen": seen, "best_usd": best}, "value_usd": best, "below": bool(prices),
            "offer_ids": list(prices), "offers": rows}


def _evaluate_plan(rule: dict) -> dict:
    from gpuquote.service.plan import plan_job

    f = rule["filters"]
    res = plan_job(rule["job"], gpu=f.get("gpu"), min_gpus=f.get("min_gpus"), interconnect=f.get("interconnect"),
                   region=f.get("region"), spot=f.get("spot"), provider=f.get("provider") or None, top=1)
    row = res["rows"][0] if res["rows"] else None
    cost = row["total_cost_usd"] if row else None
    limit = _threshold_usd(rule)
    below = cost is not None and limit is not None and cost < limit
    return {"state": {"best_usd": cost, "offer_id": row["offer_id"] if row else None, "below": below},
            "value_usd": cost, "below": below, "offer_ids": [row["offer_id"]] if row else [], "offers": [row] if row
            else [], "plan_row": row}


def crossing(rule: dict, ev: dict) -> list[str]:
    """The offer ids that crossed since the last evaluation (empty: nothing to send)."""
    prev = rule.get("state") or {}
    if rule["kind"] == "plan":
        return ev["offer_ids"] if ev["below"] and not prev.get("below") else []
    before = prev.get("offers") or {}
    return [oid for oid in ev["state"]["offers"] if oid not in before]


def _links(rule: dict, offer_ids: list[str]) -> dict:
    base = os.environ.get("GPUQUOTE_PUBLIC_URL", DEFAULT_PUBLIC_URL).rstrip("/")
    f = rule["filters"]
    q = [(k, str(v).lower() if isinstance(v, bool) else v) for k, v in f.items() if k != "provider"]
    q += [("provider", p) for p in f.get("provider") or []]
    if rule["kind"] == "plan":
        return {"page": f"{base}/plan", "watches": f"{base}/watches"}
    return {"page": f"{base}/offers?{urlencode(q)}", "api": f"{base}/api/offers?{urlencode(q)}",
            "watches": f"{base}/watches"}


def payload(rule: dict, ev: dict, crossed: list[str], lang: str | None = None) -> dict:
    """The JSON body a webhook receives (and an email carries): rule, what crossed, old and new, links."""
    cur = rule["currency"]
    prev = rule.get("state") or {}
    old = prev.get("best_usd")
    new = ev["value_usd"]
    if rule["kind"] == "offers":
        by_id = {r["offer_id"]: r for r in ev["offers"]}
        offers = []
        for oid in crossed[:MAX_OFFERS_IN_BODY]:
            r = by_id[oid]
            offers.append({"offer_id": oid, "provider": r["provider"], "region": r["region"], "sku": r["sku"],
                           "gpu_id": r["gpu_id"], "gpu_count": r["gpu_count"], "spot": r["spot"],
                           "available": None if r.get("available") is None else bool(r["available"]),
                           "usd_per_gpu_hour": r["usd_per_gpu_hour"],
                           "price_per_gpu_hour": _in(r["usd_per_gpu_hour"], cur),
                           "old_usd_per_gpu_hour": (prev.get("seen") or {}).get(oid), "source": r["source"],
                           "fetched_at": r["fetched_at"]})
        cheapest = min((o["price_per_gpu_hour"] for o in offers), default=None)
        event = "available_again" if rule.get("available") else "price_below"
        msg = t("watch.msg.offers" + ("_available" if rule.get("available") else ""), lang, name=rule["name"],
                n=len(crossed), price=f"{cheapest:.4g}" if cheapest is not None else "?", currency=cur,
                below=f"{rule['below']:g}" if rule.get("below") is not None else "-", first=crossed[0])
    else:
        row = ev.get("plan_row") or {}
        offers = [{"offer_id": row.get("offer_id"), "provider": row.get("provider"), "gpu_id": row.get("gpu_id"),
                   "gpus": row.get("gpus"), "nodes": row.get("nodes"), "time_hours": row.get("time_hours"),
                   "total_cost_usd": row.get("total_cost_usd")}]
        event = "plan_below"
        msg = t("watch.msg.plan", lang, name=rule["name"], cost=f"{_in(new, cur):,.2f}", currency=cur,
                below=f"{rule['below']:g}", offer=row.get("offer_id"),
                old=f"{_in(old, cur):,.2f}" if old is not None else "?")
    return {
        "event": event, "at": _now(), "subject": t("watch.subject", lang, name=rule["name"]), "message": msg,
        "rule": {"name": rule["name"], "kind": rule["kind"], "filters": rule["filters"],
                 "job": (rule.get("job") or {}).get("model") if rule["kind"] == "plan" else None,
                 "below": rule.get("below"), "currency": cur, "available": rule.get("available", False)},
        "old": {"value": _in(old, cur), "value_usd": old},
        "new": {"value": _in(new, cur), "value_usd": new},
        "unit": "per_gpu_hour" if rule["kind"] == "offers" else "job_total",
        "offer_ids": crossed, "offers": offers, "links": _links(rule, crossed),
    }


def run_watches(names: list[str] | None = None, *, lang: str | None = None) -> dict:
    """Evaluate every rule (or the named ones) against the current store; notify each crossing once."""
    from gpuquote.service.notify import DeliveryError, send
    from gpuquote.store.watches import claim, list_rules, settle

    engine = _store(False)  # no store yet: no rules, and nothing is created just to find that out
    rules = list_rules(engine, names) if engine is not None else []
    if rules:
        engine = _store(True)
    if names:
        missing = sorted(set(names) - {r["name"] for r in rules})
        if missing:
            raise BadInput(f"NAME: no watch named '{missing[0]}'; see `gpuquote watch list`", field="name")
    results = []
    for rule in rules:
        at = _now()
        try:
            ev = evaluate(rule)
        except BadInput as e:  # the job or a filter no longer applies (e.g. a GPU id gone from the catalog)
            kept = claim(engine, rule, at=at, state=rule.get("state") or {}, value_usd=rule.get("last_value_usd"))
            if kept is not None:  # (never over the state a concurrent run has just written)
                settle(engine, rule["id"], at=at, claimed=kept, event={"event": "error", "error": str(e)})
            results.append({"name": rule["name"], "status": "error", "error": str(e), "sent": False})
            continue
        crossed = crossing(rule, ev)
        out = {"name": rule["name"], "kind": rule["kind"], "value_usd": ev["value_usd"],
               "value": _in(ev["value_usd"], rule["currency"]), "currency": rule["currency"],
               "below": ev["below"], "crossed": crossed, "sent": False, "status": "unchanged"}
        # the new state is written first, and only over the state this run evaluated: of two runs at once,
        # one wins the rule and notifies, the other skips it (store/watches.py)
        claimed = claim(engine, rule, at=at, state=ev["state"], value_usd=ev["value_usd"])
        if claimed is None:
            out.update(status="skipped", crossed=[], reason="another watch run evaluated this rule at the same time")
            results.append(out)
            continue
        if crossed:
            body = payload(rule, ev, crossed, lang)
            common = {"old_value_usd": (rule.get("state") or {}).get("best_usd"), "new_value_usd": ev["value_usd"],
                      "offer_ids": crossed, "payload": body}
            try:
                how = send(rule["notify"], body)
                settle(engine, rule["id"], at=at, claimed=claimed, event={"event": "notified", **common})
                out.update(status="notified", sent=True, via=how, notification=body)
            except DeliveryError as e:
                settle(engine, rule["id"], at=at, claimed=claimed, event={"event": "failed", **common, "error": str(e)},
                       state=_unsent(rule, ev["state"]))
                out.update(status="failed", error=str(e))
        results.append(out)
    return {"at": _now(), "rules": len(rules), "results": results,
            "notified": sum(1 for r in results if r["sent"]),
            "failed": sum(1 for r in results if r["status"] in ("failed", "error"))}


def _unsent(rule: dict, state: dict) -> dict:
    """The state to keep after a failed delivery: the crossing stays unsent, so the next run tries again."""
    prev = rule.get("state") or {}
    if rule["kind"] == "plan":
        return {**state, "below": bool(prev.get("below"))}
    before = prev.get("offers") or {}
    return {**state, "offers": {k: v for k, v in state["offers"].items() if k in before}}


def public(rule: dict) -> dict:
    """A rule as the CLI's --json and /api/watches show it (the full state stays in the store)."""
    st = rule.get("state") or {}
    return {"name": rule["name"], "kind": rule["kind"], "filters": rule["filters"],
            "job": (rule.get("job") or {}).get("model") if rule["kind"] == "plan" else None,
            "below": rule.get("below"), "currency": rule["currency"], "available": rule["available"],
            "notify": rule["notify"], "created_at": rule["created_at"], "last_run_at": rule.get("last_run_at"),
            "last_value_usd": rule.get("last_value_usd"),
            "last_value": _in(rule.get("last_value_usd"), rule["currency"]),
            "below_now": bool(st.get("offers")) if rule["kind"] == "offers" else bool(st.get("below")),
            "offers_below": len(st.get("offers") or {}) if rule["kind"] == "offers" else None,
            "last_notified_at": rule.get("last_notified_at"), "last_event": _last_event(rule.get("last_event")),
            "events": rule.get("events", 0)}


def _last_event(e: dict | None) -> dict | None:
    if not e:
        return None
    return {"at": e["at"], "event": e["event"], "offer_ids": e["offer_ids"][:MAX_OFFERS_IN_BODY],
            "error": e.get("error"), "message": (e.get("payload") or {}).get("message")}


def list_watches() -> dict:
    from gpuquote.store.watches import list_rules

    engine = _store(False)
    rules = list_rules(engine) if engine is not None else []
    return {"watches": [public(r) for r in rules], "count": len(rules)}


def remove_watch(name: str) -> dict:
    from gpuquote.store.watches import remove_rule

    engine = _store(False)
    if engine is None:
        raise BadInput(f"NAME: no watch named '{name}'; see `gpuquote watch list`", field="name")
    return {"removed": public(remove_rule(_store(True), name))}


def history(name: str, limit: int = 50) -> dict:
    from gpuquote.store.watches import events, list_rules

    engine = _store(False)
    rules = list_rules(engine, [name]) if engine is not None else []
    if not rules:
        raise BadInput(f"NAME: no watch named '{name}'; see `gpuquote watch list`", field="name")
    return {"watch": public(rules[0]), "events": events(engine, rules[0]["id"], limit)}


def after_refresh(results: list[dict]) -> dict | None:
    """`refresh` runs the watches after a good snapshot (None when no rule exists or nothing became current)."""
    if not any(r.get("status") == "good" for r in results):
        return None
    if not list_watches()["count"]:
        return None
    return run_watches()
