"""Reading one raw quote (a YAML mapping or a CSV row) into a Quote: spellings, units and aliases.

This is normalisation ("RMB" -> CNY, TB -> GiB, "HGX A100" -> an SXM board); the accepted ranges of
every field live in one declarative schema (offers.quote_schema), checked on the normalised values.
Each bad field is collected, so one bad quote is one QuoteError line listing all of them.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.hardware import INTRA_NODE, narrow, resolve, try_resolve
from gpuquote.i18n import Msg, t
from gpuquote.offers.checklist import MIG_RE
from gpuquote.offers.forms import FORMS, GRANULARITY_S, PAY_AS_YOU_GO, PERS
from gpuquote.offers.model import Price
from gpuquote.offers.quote_fields import _Reader, _show
from gpuquote.offers.quote_model import (
    _INTRA_ALIASES,
    _NET_ALIASES,
    FORM_FACTORS_STATED,
    GB_GIB,
    KNOWN_KEYS,
    NET_KINDS,
    TB_GIB,
    Quote,
    QuoteError,
)
from gpuquote.offers.quote_schema import check_price, check_quote
from gpuquote.offers.tco import CAPITAL_METHODS, RECURRING_PER, TcoSpec

_BW_RE = re.compile(r"(\d+(?:\.\d+)?)\s*(tb|gb)\s*/\s*s", re.IGNORECASE)
_FP8_RE = re.compile(r"\bfp8\b", re.IGNORECASE)
_NEG_FP8_RE = re.compile(r"\b(no|not|without|lacks?)\b\W+(?:\w+\W+){0,2}fp8|\bfp8\b\W+(?:\w+\W+){0,1}(not|unsupported)",
                         re.IGNORECASE)


def _exclusive(r: _Reader, v: Any) -> bool | str:
    if r.blank(v):
        return "unknown"
    if isinstance(v, bool):
        return True if v else "shared"
    s = str(v).strip().lower()
    if s in ("true", "yes", "exclusive", "dedicated", "full"):
        return True
    if s in ("false", "no", "shared", "time-shared", "timeshared"):
        return "shared"
    if s == "unknown":
        return "unknown"
    m = re.fullmatch(r"(?:mig[:\s-]*)?(\d)g\.(\d+)gb(\+me)?", s)
    if m:
        return f"mig:{m.group(1)}g.{m.group(2)}gb{m.group(3) or ''}"
    r.err("exclusive", Msg("quote.e.not_accepted", value=f"'{v}'"), [Msg("quote.acc.exclusive")])
    return "unknown"


_MODEL_WORD = re.compile(r"\b[A-Za-z]+\d+[A-Za-z\d]*\b")


def _check_model_word(name: str) -> None:
    """Refuse names whose model word is unknown even if the whole name resolves ('A1000 80GB' is not an A100)."""
    stripped = re.sub(r"\b(nvidia|tesla|amd|instinct|intel|habana|google)\b", " ", name, flags=re.IGNORECASE)
    m = _MODEL_WORD.search(stripped)
    if m and m.group(0) != stripped.strip() and try_resolve(m.group(0)) is None:
        resolve(m.group(0))  # raises BadInput with the closest names


def parse_quote(raw: dict, index: int, overrides: dict[str, float] | None = None,
                line: int | None = None) -> Quote | QuoteError:
    """Validate one raw quote; returns the Quote, or a QuoteError listing every bad field."""
    r = _Reader(raw, overrides)
    qid = r.text("id", raw.get("id")) or f"q{index}"
    warnings = [Msg("quote.f.unknown_field", field=k) for k in raw if k not in KNOWN_KEYS]

    # GPU: a MIG profile written in the name is a statement about exclusivity, not part of the model
    gpu_name = r.text("gpu", raw.get("gpu"))
    excl = _exclusive(r, raw.get("exclusive"))
    gpu_id = None
    form_hint = None
    if gpu_name is None:
        warnings.append(Msg("quote.f.no_gpu"))
    else:
        name = gpu_name
        m = MIG_RE.search(name)
        if m:
            name = MIG_RE.sub(" ", name)
            if excl == "unknown":
                excl = f"mig:{m.group(0).lower()}"
        name = re.sub(r"\bmig\b", " ", name, flags=re.IGNORECASE).strip()
        if re.search(r"\b[hd]gx\b", name, re.IGNORECASE):  # "HGX A100 80GB": an SXM board
            name = re.sub(r"\b[hd]gx\b", " ", name, flags=re.IGNORECASE).strip()
            form_hint = "sxm"
        try:
            _check_model_word(name)
            res = resolve(name)
            gpu_id = res.id
        except BadInput as e:
            r.err("gpu", str(e).removeprefix("gpu: "), ["any name from `gpuquote gpus`"] + list(e.accepted or []))
    count = r.num("gpu_count", raw.get("gpu_count"), gt=True, accepted="a number > 0")
    form = r.choice("form", raw.get("form"), FORMS, {"gpuhour": "gpu_hour", "hourly": "gpu_hour",
                                                      "instance": "cloud_instance", "node": "node_rental",
                                                      "buy": "purchase", "rental": "node_rental"})
    form_factor = r.choice("form_factor", raw.get("form_factor"), FORM_FACTORS_STATED,
                           {"sxm4": "sxm", "sxm5": "sxm", "sxm2": "sxm", "hgx": "sxm", "pci-e": "pcie"})
    intra = r.choice("intra_node", raw.get("intra_node"), INTRA_NODE, _INTRA_ALIASES) or "unknown"

    # price
    price = None
    pr = r.mapping("price", raw.get("price"))
    if pr is None and not any(e[0] == "price" for e in r.errors):
        r.err("price", "not stated", ["price: {amount, currency, per[, term_months]}"])
    if pr is not None:
        from gpuquote.offers.forms import parse_cn_amount, parse_cn_per

        amt_v, cur_hint, per_gpu = pr.get("amount"), None, False
        if isinstance(amt_v, str) and re.search(r"[万亿千元¥￥]|人民币|RMB", amt_v):  # "9.5万", "1.2亿元"
            try:
                amt_v, cur_hint = parse_cn_amount(amt_v)
            except ValueError:
                r.err("price.amount", t("quote.cn.bad_amount", value=amt_v), ["a number, or 9.5万 / 1.2亿 / 3500元"])
                amt_v = None
        amount = r.num("price.amount", amt_v, gt=True, accepted="a number > 0")
        if r.blank(pr.get("amount")):
            r.err("price.amount", "not stated", ["a number > 0"])
        per_v = pr.get("per")
        if isinstance(per_v, str) and re.search(r"[\u4e00-\u9fff/]", per_v):  # 月, 小时, 元/卡/小时, 卡时
            try:
                per_v, per_gpu, cur_from_per = parse_cn_per(per_v)
                cur_hint = cur_hint or cur_from_per
            except ValueError:
                r.err("price.per", t("quote.cn.bad_per", value=per_v),
                      [*PERS, "小时", "天", "月", "年", "元/卡/小时", "卡时"])
                per_v = None
        cur = r.currency("price.currency", pr.get("currency") if not r.blank(pr.get("currency")) else cur_hint)
        per = r.choice("price.per", per_v, PERS, {"h": "hour", "hr": "hour", "mo": "month", "yr": "year",
                                                  "one-off": "once", "one_off": "once", "s": "second"})
        if per_gpu and form is None:
            form = "gpu_hour"  # a per-card price (元/卡/小时, 卡时)
            warnings.append(t("quote.cn.per_gpu", per=pr.get("per")))
        elif per_gpu and form not in (None, "gpu_hour"):
            r.err("price.per", t("quote.cn.per_gpu_form", per=pr.get("per"), form=form), ["form: gpu_hour"])
        if per is None and r.blank(pr.get("per")):
            r.err("price.per", Msg("quote.e.not_stated"), list(PERS))
        term = r.num("price.term_months", pr.get("term_months"), gt=True, accepted="a number of months > 0")
        for k in pr:
            if k not in ("amount", "currency", "per", "term_months"):
                warnings.append(Msg("quote.f.unknown_field", field=f"price.{k}"))
        if amount is not None and cur and per:
            price = Price(amount=amount, currency=cur, per=per, term_months=term)

    form_inferred = False
    if form is None and price is not None and not any(e[0] == "form" for e in r.errors):
        form_inferred = True
        if price.per == "once" and not price.term_months:
            form = "purchase"
        elif price.term_months:
            form = "reserved"
        elif price.per in PAY_AS_YOU_GO:
            form = "gpu_hour"
        else:
            form = "node_rental" if (count or 1) > 1 else "cloud_instance"
        warnings.append(Msg("quote.f.form_assumed", form=form, per=price.per))
    if price is not None and form == "purchase" and price.per != "once":
        r.err("price.per", Msg("quote.e.per_for_purchase", per=price.per), ["once"])
    if price is not None and form not in (None, "purchase") and price.per == "once" and not price.term_months:
        r.err("price.per", Msg("quote.e.once_needs_term", form=form),
              ["form: purchase", "price.term_months"])

    # billing granularity
    billing = None
    bv = raw.get("billing")
    if not r.blank(bv):
        if isinstance(bv, int | float) and not isinstance(bv, bool) or (isinstance(bv, str) and bv.strip().isdigit()):
            billing = int(r.num("billing", bv, gt=True, accepted="seconds > 0") or 0) or None
        else:
            b = r.choice("billing", bv, tuple(GRANULARITY_S), {"per-second": "second", "hourly": "hour",
                                                               "monthly": "month", "daily": "day"})
            billing = GRANULARITY_S[b] if b else None

    # CPU
    cpu_model = cores = vcpus = None
    cv = raw.get("cpu")
    if isinstance(cv, dict):
        cpu_model = r.text("cpu.model", cv.get("model"))
        cores = r.num("cpu.cores", cv.get("cores"), gt=True, accepted="a number > 0")
        vcpus = r.num("cpu.vcpus", cv.get("vcpus", cv.get("threads")), gt=True, accepted="a number > 0")
    elif not r.blank(cv):
        cpu_model = r.text("cpu", cv)
    if vcpus is None:
        vcpus = r.num("vcpus", raw.get("vcpus"), gt=True, accepted="a number > 0")

    ram = r.num("ram_gb", raw.get("ram_gb"), accepted="GB >= 0")
    if ram is None:
        ram = r.num("ram_gib", raw.get("ram_gib"), accepted="GiB >= 0")

    nvme = nvme_write = None
    nv = raw.get("nvme")
    if isinstance(nv, dict):
        tb = r.num("nvme.capacity_tb", nv.get("capacity_tb"), accepted="TB >= 0")
        gb = r.num("nvme.capacity_gb", nv.get("capacity_gb"), accepted="GB >= 0")
        nvme = tb * TB_GIB if tb is not None else gb * GB_GIB if gb is not None else None
        nvme_write = r.num("nvme.write_gbs", nv.get("write_gbs"), gt=True, accepted="GB/s > 0")
    elif not r.blank(nv):
        if isinstance(nv, str) and nv.strip().lower() in ("none", "no"):
            nvme = 0.0
        else:
            r.err("nvme", Msg("quote.e.value_expected_mapping", value=_show(nv)),
                  ["nvme: {capacity_tb: 3.84}", "nvme: none"])
    if nvme is None:
        tb = r.num("nvme_tb", raw.get("nvme_tb"), accepted="TB >= 0")
        gb = r.num("nvme_gb", raw.get("nvme_gb"), accepted="GB >= 0")
        nvme = tb * TB_GIB if tb is not None else gb * GB_GIB if gb is not None else None

    net_kind, net_gbps = "unknown", None
    nw = raw.get("network")
    if isinstance(nw, dict):
        net_kind = r.choice("network.kind", nw.get("kind"), NET_KINDS, _NET_ALIASES) or "unknown"
        net_gbps = r.num("network.gbps_per_node", nw.get("gbps_per_node"), accepted="Gbit/s >= 0")
        per_gpu = r.num("network.gbps_per_gpu", nw.get("gbps_per_gpu"), accepted="Gbit/s >= 0")
        if net_gbps is None and per_gpu is not None and count:
            net_gbps = per_gpu * count
    elif not r.blank(nw):
        net_kind = r.choice("network", nw, NET_KINDS, _NET_ALIASES) or "unknown"

    spot = r.boolean("spot", raw.get("spot")) or False
    covers = r.strlist("covers", raw.get("covers"))
    extras: dict[str, float] = {}
    ev = r.mapping("extras", raw.get("extras"))
    for k, v in (ev or {}).items():
        x = r.num(f"extras.{k}", v)
        if x is not None:
            extras[str(k)] = x

    # claims that identify the chip
    mem = r.num("gpu_memory_gb", raw.get("gpu_memory_gb"), gt=True, accepted="GB > 0")
    if mem is None:
        mem = r.num("gpu_memory_gib", raw.get("gpu_memory_gib"), gt=True, accepted="GiB > 0")
    bw = r.num("memory_bandwidth_gbs", raw.get("memory_bandwidth_gbs"), gt=True, accepted="GB/s > 0")
    if bw is None:
        tbs = r.num("memory_bandwidth_tbs", raw.get("memory_bandwidth_tbs"), gt=True, accepted="TB/s > 0")
        bw = tbs * 1000 if tbs is not None else None
    if bw is None and not r.blank(raw.get("memory_bandwidth")):
        mb = _BW_RE.search(str(raw["memory_bandwidth"]))
        if mb:
            bw = float(mb.group(1)) * (1000 if mb.group(2).lower() == "tb" else 1)
        else:
            bw = r.num("memory_bandwidth", raw.get("memory_bandwidth"), gt=True, accepted="GB/s, or text like '2 TB/s'")
    notes = " ".join(x for x in (r.text("notes", raw.get("notes")), r.text("description", raw.get("description")))
                     if x)
    if bw is None and notes:
        mb = _BW_RE.search(notes)
        if mb:
            bw = float(mb.group(1)) * (1000 if mb.group(2).lower() == "tb" else 1)
    precisions = r.strlist("precisions", raw.get("precisions")) or []
    if r.boolean("fp8", raw.get("fp8")) and "fp8" not in precisions:
        precisions.append("fp8")
    if notes and _FP8_RE.search(notes) and not _NEG_FP8_RE.search(notes) and "fp8" not in precisions:
        precisions.append("fp8")
    intra_from_text = False
    if intra == "unknown" and notes:
        low = notes.lower()
        if "nvswitch" in low:
            intra, intra_from_text = "nvswitch", True
        elif "nvlink" in low:
            intra, intra_from_text = "nvlink", True

    production: dict[str, str] = {}
    pv = r.mapping("production", raw.get("production"))
    for k, v in (pv or {}).items():
        if not r.blank(v):
            production[str(k)] = str(v)

    tco = None
    tv = raw.get("tco")
    if isinstance(tv, dict):
        dc = price.currency if price else "USD"
        pue = r.num("tco.pue", tv.get("pue"), lo=1.0, accepted="a number >= 1.0 (1.0 = no cooling overhead)")
        resid = r.num("tco.residual_fraction", tv.get("residual_fraction"), hi=1.0, accepted="a fraction 0..1")
        coc = r.num("tco.cost_of_capital", tv.get("cost_of_capital"), hi=1.0,
                    accepted="an annual rate 0..1, e.g. 0.06 or '6%'")
        method = r.choice("tco.capital_method", tv.get("capital_method"), CAPITAL_METHODS) or "annuity"
        tco = TcoSpec(
            power_kw=r.num("tco.power_kw", tv.get("power_kw"), accepted="kW >= 0"),
            idle_power_kw=r.num("tco.idle_power_kw", tv.get("idle_power_kw"), accepted="kW >= 0") or 0.0,
            pue=pue,
            electricity=r.money("tco.electricity", tv.get("electricity"), default_currency=dc, default_per="kwh",
                                pers=("kwh",)),
            hosting=r.money("tco.hosting", tv.get("hosting"), default_currency=dc, default_per="month",
                            pers=RECURRING_PER),
            maintenance=r.money("tco.maintenance", tv.get("maintenance"), default_currency=dc, default_per="year",
                                pers=RECURRING_PER),
            years=r.num("tco.years", tv.get("years"), gt=True, accepted="years > 0"),
            residual_fraction=resid, cost_of_capital=coc, capital_method=method,
        )
        for k in tv:
            if k not in TcoSpec.__dataclass_fields__:
                warnings.append(Msg("quote.f.unknown_field", field=f"tco.{k}"))
    elif not r.blank(tv):
        r.err("tco", Msg("quote.e.expected_mapping"),
              ["tco: {power_kw, pue, electricity, hosting, years, residual_fraction}"])
    if tco is not None and form not in (None, "purchase"):
        warnings.append(Msg("quote.f.tco_ignored", form=form))

    # the accepted ranges (offers.quote_schema): one declarative check on the normalised values
    stated = {"id": qid if not r.blank(raw.get("id")) else None, "gpu": gpu_name, "gpu_count": count, "exclusive": excl,
              "price_amount": price.amount if price else None,
              "price_term_months": price.term_months if price else None,
              "vcpus": vcpus, "cpu_cores": cores, "ram_gib": ram, "nvme_gib": nvme, "net_gbps": net_gbps,
              "gpu_memory_gib": mem, "memory_bandwidth_gbs": bw, "billing_granularity_s": billing, "extras": extras,
              "tco": {k: getattr(tco, k) for k in ("power_kw", "idle_power_kw", "pue", "years", "residual_fraction",
                                                   "cost_of_capital")} if tco else None}
    failed = {e[0] for e in r.errors}
    for fld, msg, acc in check_quote({k: v for k, v in stated.items() if v is not None}):
        if fld not in failed and not (fld == "gpu" and "gpu" in failed):
            r.err(fld, msg, acc)
    if not r.errors and price is not None and form is not None:
        for fld, msg, acc in check_price(price, count, form, r.overrides):
            r.err(fld, msg, acc)

    if r.errors or price is None or form is None:
        if not r.errors:
            r.err("quote", Msg("quote.e.incomplete"), None)
        return QuoteError(qid, line, r.errors)

    # narrow a family by what the quote states (memory, form factor); a fact matching no member is ignored
    res = resolve(gpu_id) if gpu_id else None
    if res is not None and res.is_family:
        variant = {"pcie": "pcie", "sxm": "sxm"}.get(form_factor or form_hint or "")
        gpu_id = narrow(gpu_id, mem if "memory" in res.unknown else None, variant).id

    return Quote(
        id=qid, gpu=gpu_name or "", gpu_id=gpu_id, form=form, price=price, gpu_count=count,
        vendor=r.text("vendor", raw.get("vendor")), form_inferred=form_inferred, exclusive=excl,
        form_factor=form_factor, intra_node=intra, intra_node_from_text=intra_from_text, cpu_model=cpu_model,
        cpu_cores=cores, vcpus=vcpus, ram_gib=ram, nvme_gib=nvme, net_kind=net_kind, net_gbps=net_gbps,
        nvme_write_gbs=nvme_write,
        region=r.text("region", raw.get("region")), billing_granularity_s=billing, spot=spot, covers=covers,
        extras=extras, tco=tco, gpu_memory_gib=mem, memory_bandwidth_gbs=bw, precisions=precisions, notes=notes,
        production=production, date=_date_text(raw.get("date")), valid_until=_date_text(raw.get("valid_until")),
        available=r.boolean("available", raw.get("available")), line=line, warnings=warnings,
        id_stated=stated["id"] is not None,
    )


def _date_text(v: Any) -> str | None:
    if v is None or v == "":
        return None
    if isinstance(v, datetime | date):
        return v.isoformat()
    return str(v)

