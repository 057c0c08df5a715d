"""Quote files (YAML, or CSV with the same column names): parsing, validation, normalisation, to Offer.

The format is DESIGN.md section 3, documented in docs/quotes.md. Parsing is per quote: a bad field
makes that one quote an error (one line naming the quote id, the field and the accepted values) and
the other quotes are still parsed; a file that is not YAML/CSV at all is one BadInput.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.hardware import INTRA_NODE, load_gpus, members, narrow, resolve, try_resolve
from gpuquote.offers.checklist import MIG_RE, Facts
from gpuquote.offers.currency import currencies, rate
from gpuquote.offers.forms import FORMS, GRANULARITY_S, PAY_AS_YOU_GO, PERS, normalise_price
from gpuquote.offers.model import InterNode, Offer, Price
from gpuquote.offers.tco import CAPITAL_METHODS, RECURRING_PER, Money, TcoSpec, compute_tco

EXCLUSIVE_ACCEPTED = "true | shared | mig:<profile> (e.g. mig:1g.10gb)"
NET_KINDS = ("ib", "roce", "ethernet", "omnipath", "none", "unknown")
_NET_ALIASES = {"infiniband": "ib", "eth": "ethernet", "tcp": "ethernet", "gbe": "ethernet", "efa": "roce",
                "rdma": "roce", "opa": "omnipath"}
_INTRA_ALIASES = {"nvlink-bridge": "nvlink", "nvlink bridge": "nvlink", "bridge": "nvlink", "hgx": "nvswitch",
                  "nvswitch (hgx)": "nvswitch", "pci-e": "pcie", "pcie switch": "pcie", "single": "none"}
FORM_FACTORS_STATED = ("pcie", "sxm", "oam", "other")
#: Top-level keys of a quote (anything else is reported as ignored).
KNOWN_KEYS = {
    "id", "vendor", "gpu", "gpu_count", "form", "exclusive", "form_factor", "intra_node", "cpu", "vcpus", "ram_gb",
    "ram_gib", "nvme", "nvme_tb", "nvme_gb", "network", "region", "price", "billing", "spot", "covers", "extras",
    "tco", "gpu_memory_gb", "gpu_memory_gib", "memory_bandwidth_gbs", "memory_bandwidth_tbs", "memory_bandwidth",
    "precisions", "fp8", "notes", "description", "production", "date", "valid_until", "available",
}
TB_GIB = 1e12 / 2**30  # vendors quote decimal TB for NVMe: 1 TB = 931.3 GiB
GB_GIB = 1e9 / 2**30


@dataclass
class QuoteError:
    """One bad quote: its id (or #n), its line in the file, and every bad field."""

    quote_id: str
    line: int | None
    fields: list[tuple[str, str, list[str] | None]]  # (field, message, accepted)

    def line_text(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        parts = []
        for fld, msg, acc in self.fields:
            parts.append(f"{fld}: {msg}" + (f" (accepted: {', '.join(acc)})" if acc else ""))
        return f"quote '{self.quote_id}'{where}: " + "; ".join(parts)

    def to_dict(self) -> dict:
        return {"id": self.quote_id, "line": self.line, "message": self.line_text(),
                "fields": [{"field": f, "message": m, "accepted": a} for f, m, a in self.fields]}


@dataclass
class Quote:
    """One validated quote. Unknown is kept as None / "unknown" so the checklist can report it."""

    id: str
    gpu: str
    gpu_id: str | None  # None: the quote does not name the GPU (checklist items 1-2 missing)
    form: str
    price: Price
    gpu_count: float | None = None
    vendor: str | None = None
    form_inferred: bool = False
    exclusive: bool | str = "unknown"
    form_factor: str | None = None
    intra_node: str = "unknown"
    intra_node_from_text: bool = False
    cpu_model: str | None = None
    cpu_cores: float | None = None
    vcpus: float | None = None
    ram_gib: float | None = None
    nvme_gib: float | None = None
    net_kind: str = "unknown"
    net_gbps: float | None = None
    region: str | None = None
    billing_granularity_s: int | None = None
    spot: bool = False
    covers: list[str] | None = None
    extras: dict[str, float] = field(default_factory=dict)
    tco: TcoSpec | None = None
    gpu_memory_gib: float | None = None
    memory_bandwidth_gbs: float | None = None
    precisions: list[str] = field(default_factory=list)
    notes: str = ""
    production: dict[str, str] = field(default_factory=dict)
    date: str | None = None
    valid_until: str | None = None
    available: bool | None = None
    line: int | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def mig_profile(self) -> str | None:
        return self.exclusive[4:] if isinstance(self.exclusive, str) and self.exclusive.startswith("mig:") else None

    def facts(self) -> Facts:
        precisions = list(self.precisions)
        text = " ".join(x for x in (self.gpu, self.notes) if x)
        return Facts(
            id=self.id, gpu_id=self.gpu_id, gpu_name=self.gpu, gpu_count=self.gpu_count, exclusive=self.exclusive,
            form_factor_stated=self.form_factor, intra_node=self.intra_node,
            intra_node_from_text=self.intra_node_from_text, cpu_model=self.cpu_model, cpu_cores=self.cpu_cores,
            vcpus=self.vcpus, ram_gib=self.ram_gib, nvme_gib=self.nvme_gib, net_kind=self.net_kind,
            net_gbps=self.net_gbps, form=self.form, per=self.price.per, term_months=self.price.term_months,
            spot=self.spot, covers=self.covers, extras=dict(self.extras),
            tco_missing=(self.tco or TcoSpec()).missing() if self.form == "purchase" else None,
            tco_power_kw=self.tco.power_kw if self.tco else None, memory_gib_stated=self.gpu_memory_gib,
            bandwidth_gbs_stated=self.memory_bandwidth_gbs, precisions_claimed=precisions, text=text,
            production=dict(self.production), form_inferred=self.form_inferred,
        )

    def prices(self, utilisation: float = 1.0, overrides: dict[str, float] | None = None) -> dict:
        """Normalised prices at a utilisation: usd_per_gpu_hour (per slice for MIG), usd_per_node_hour."""
        if self.form == "purchase":
            t = compute_tco(self.price, self.tco, self.gpu_count, utilisation=utilisation, overrides=overrides)
            return {"usd_per_gpu_hour": t.usd_per_gpu_hour, "usd_per_node_hour": t.usd_per_node_hour,
                    "rate": t.rates[0], "rates": t.rates, "basis": "node", "committed": True,
                    "formula": t.formula, "commitment_usd": None, "tco": t, "notes": []}
        n = normalise_price(self.price, self.gpu_count, form=self.form, utilisation=utilisation, overrides=overrides)
        return {"usd_per_gpu_hour": n.usd_per_gpu_hour, "usd_per_node_hour": n.usd_per_node_hour, "rate": n.rate,
                "rates": [n.rate], "basis": n.basis, "committed": n.committed, "formula": n.formula,
                "commitment_usd": n.commitment_usd, "tco": None, "notes": n.notes}

    def to_offer(self, source: str, *, fetched_at: datetime | None = None,
                 overrides: dict[str, float] | None = None) -> Offer:
        """This quote as a catalog Offer (its id is the quote id), so plan/import treat quotes like offers.

        The Offer's price is for the whole quoted machine: a per-GPU price is multiplied by gpu_count;
        a prepaid term becomes its monthly equivalent with the term; a purchase becomes its TCO per
        node-hour at utilisation 1, in USD (stated in the notes).
        """
        if not self.gpu_id:
            raise BadInput(f"quote '{self.id}': gpu: not stated; accepted: any GPU name (an offer needs it)",
                           field="gpu", accepted=["a GPU name"])
        if not self.gpu_count:
            raise BadInput(f"quote '{self.id}': gpu_count: not stated; accepted: a number > 0 (an offer needs it)",
                           field="gpu_count", accepted=["> 0"])
        notes = [f"quote {self.id}: form {self.form}" + (" (inferred)" if self.form_inferred else "")]
        p = self.price
        if self.form == "purchase":
            t = compute_tco(p, self.tco, self.gpu_count, utilisation=1.0, overrides=overrides)
            price = Price(amount=t.usd_per_node_hour, currency="USD", per="hour")
            notes.append(f"purchase of {p.amount:,.0f} {p.currency}: hourly price is the TCO at utilisation 1 over "
                         f"{t.years:g} years ({t.formula}); rates dated {t.rates[0].date}")
            notes += [f"assumption: {a}" for a in t.assumptions]
        elif p.per == "once":
            price = Price(amount=p.amount / (p.term_months or 1), currency=p.currency, per="month",
                          term_months=p.term_months)
            notes.append(f"prepaid {p.term_months:g}-month term of {p.amount:,.0f} {p.currency} shown per month")
        else:
            price = p
        if self.form == "gpu_hour":
            price = Price(amount=price.amount * self.gpu_count, currency=price.currency, per=price.per,
                          term_months=price.term_months)
            notes.append(f"price per GPU x {self.gpu_count:g} GPUs")
        if self.mig_profile:
            notes.append(f"MIG slice {self.mig_profile}: gpu_count counts slices; never rank against whole GPUs")
        gpus = load_gpus()
        forms = {gpus[m].form_factor for m in members(self.gpu_id)}
        form_factor = forms.pop() if len(forms) == 1 else (self.form_factor or "unknown")
        intra = self.intra_node
        if intra == "unknown" and self.gpu_count <= 1:
            intra = "none"
        vcpus = self.vcpus if self.vcpus is not None else self.cpu_cores
        if self.vcpus is None and self.cpu_cores is not None:
            notes.append(f"vcpus = {self.cpu_cores:g} physical cores as quoted")
        mig_mem = None
        if self.mig_profile:
            m = MIG_RE.fullmatch(self.mig_profile)
            mig_mem = float(m.group(2)) if m else None
        mems = {gpus[m].memory_gib for m in members(self.gpu_id)}
        memory = mig_mem or self.gpu_memory_gib or (mems.pop() if len(mems) == 1 else None)
        when = fetched_at or _parse_date(self.date) or datetime.now(UTC)
        return Offer(
            provider=_slug(self.vendor) or "quote", region=self.region or "unknown", sku=self.id, gpu_id=self.gpu_id,
            gpu_count=self.gpu_count, gpu_exclusive=self.exclusive, form_factor=form_factor, intra_node=intra,
            vcpus=vcpus, cpu_model=self.cpu_model, ram_gib=self.ram_gib, nvme_gib=self.nvme_gib,
            inter_node=InterNode(kind=self.net_kind, gbps_per_node=self.net_gbps), price=price,
            billing_granularity_s=1 if self.form == "purchase" else self.billing_granularity_s, spot=self.spot,
            covers=list(self.covers or []), extras=dict(self.extras), available=self.available, source=source,
            fetched_at=when, gpu_memory_gib=memory, notes=notes, id=self.id,
        )

    def to_dict(self) -> dict:
        """The quote as parsed (inputs, not results)."""
        return {
            "id": self.id, "vendor": self.vendor, "gpu": self.gpu, "gpu_id": self.gpu_id, "gpu_count": self.gpu_count,
            "form": self.form, "form_inferred": self.form_inferred, "exclusive": self.exclusive,
            "form_factor": self.form_factor, "intra_node": self.intra_node,
            "cpu": {"model": self.cpu_model, "cores": self.cpu_cores, "vcpus": self.vcpus}, "ram_gib": self.ram_gib,
            "nvme_gib": self.nvme_gib, "network": {"kind": self.net_kind, "gbps_per_node": self.net_gbps},
            "region": self.region, "price": self.price.model_dump(),
            "billing_granularity_s": self.billing_granularity_s,
            "spot": self.spot, "covers": self.covers, "extras": self.extras,
            "tco": self.tco.to_dict() if self.tco else None, "gpu_memory_gib": self.gpu_memory_gib,
            "memory_bandwidth_gbs": self.memory_bandwidth_gbs, "precisions": self.precisions, "notes": self.notes,
            "production": self.production, "date": self.date, "valid_until": self.valid_until, "line": self.line,
        }


def _slug(s: str | None) -> str:
    return re.sub(r"[^a-z0-9]+", "-", (s or "").lower()).strip("-")[:40]


def _parse_date(v: str | None) -> datetime | None:
    if not v:
        return None
    try:
        d = datetime.fromisoformat(str(v))
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=UTC)


# ---------------------------------------------------------------- field readers


class _Reader:
    """Reads one raw quote (a dict of YAML values or CSV strings), collecting every field error."""

    def __init__(self, raw: dict, overrides: dict[str, float] | None):
        self.raw = raw
        self.errors: list[tuple[str, str, list[str] | None]] = []
        self.overrides = overrides or {}

    def err(self, fld: str, msg: str, accepted: list[str] | None = None) -> None:
        self.errors.append((fld, msg, accepted))

    @staticmethod
    def blank(v: Any) -> bool:
        return v is None or (isinstance(v, str) and not v.strip())

    def num(self, fld: str, v: Any, *, lo: float | None = 0.0, gt: bool = False, hi: float | None = None,
            accepted: str | None = None) -> float | None:
        if self.blank(v):
            return None
        acc = [accepted or (f"a number {'>' if gt else '>='} {lo:g}" if lo is not None else "a number")]
        if isinstance(v, bool):
            self.err(fld, f"{v!r} is not a number", acc)
            return None
        if isinstance(v, str):
            s = v.strip().replace(",", "").replace("_", "").replace(" ", "")
            pct = s.endswith("%")
            try:
                x = float(s[:-1]) / 100 if pct else float(s)
            except ValueError:
                self.err(fld, f"'{v}' is not a number", acc)
                return None
        elif isinstance(v, int | float):
            x = float(v)
        else:
            self.err(fld, f"{type(v).__name__} is not a number", acc)
            return None
        if math.isnan(x) or math.isinf(x):
            self.err(fld, f"'{v}' is not a finite number", acc)
            return None
        if lo is not None and (x < lo or (gt and x == lo)):
            self.err(fld, f"{_show(v)} is {'not positive' if gt and lo == 0 else 'out of range'}", acc)
            return None
        if hi is not None and x > hi:
            self.err(fld, f"{_show(v)} is out of range", acc)
            return None
        return x

    def text(self, fld: str, v: Any) -> str | None:
        if self.blank(v):
            return None
        if isinstance(v, dict | list):
            self.err(fld, "expected text", ["text"])
            return None
        return str(v).strip()

    def choice(self, fld: str, v: Any, accepted: tuple[str, ...], aliases: dict[str, str] | None = None) -> str | None:
        if self.blank(v):
            return None
        s = str(v).strip().lower().replace("-", "_") if fld == "form" else str(v).strip().lower()
        s = (aliases or {}).get(s, s)
        if s not in accepted:
            self.err(fld, f"'{v}' is not accepted", list(accepted))
            return None
        return s

    def boolean(self, fld: str, v: Any) -> bool | None:
        if self.blank(v):
            return None
        if isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in ("true", "yes", "1", "y"):
            return True
        if s in ("false", "no", "0", "n"):
            return False
        self.err(fld, f"'{v}' is not true or false", ["true", "false"])
        return None

    def currency(self, fld: str, v: Any, default: str | None = None) -> str | None:
        if self.blank(v):
            if default:
                return default
            self.err(fld, "not stated", ["a currency code: " + ", ".join(["USD", *currencies()][:6]) + ", ..."])
            return None
        from gpuquote.offers.currency import canonical

        cur = canonical(str(v))
        if cur in self.overrides:
            return cur
        try:
            rate(cur)
        except BadInput:
            self.err(fld, f"unknown currency '{v}'", ["USD", *currencies()])
            return None
        return cur

    def mapping(self, fld: str, v: Any) -> dict | None:
        if self.blank(v):
            return None
        if not isinstance(v, dict):
            self.err(fld, "expected a mapping", [f"{fld}: {{...}}"])
            return None
        return v

    def strlist(self, fld: str, v: Any) -> list[str] | None:
        if v is None:
            return None
        if isinstance(v, str):
            s = v.strip()
            if s.lower() in ("none", "nothing", "[]"):
                return []
            if not s:
                return None
            return [p.strip().lower() for p in re.split(r"[;,|]", s) if p.strip()]
        if isinstance(v, list):
            return [str(p).strip().lower() for p in v if str(p).strip()]
        self.err(fld, "expected a list", ["a list, or text separated by ';'"])
        return None

    def money(self, fld: str, v: Any, *, default_currency: str, default_per: str,
              pers: tuple[str, ...]) -> Money | None:
        if self.blank(v):
            return None
        if not isinstance(v, dict):
            v = {"amount": v}
        amount = self.num(f"{fld}.amount", v.get("amount"))
        if amount is None and self.blank(v.get("amount")):
            self.err(f"{fld}.amount", "not stated", ["a number >= 0"])
        cur = self.currency(f"{fld}.currency", v.get("currency"), default_currency)
        per = self.choice(f"{fld}.per", v.get("per"), pers) or default_per
        if amount is None or cur is None:
            return None
        return Money(amount, cur, per)


def _show(v: Any) -> str:
    return f"'{v}'" if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else str(v)


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
    r.err("exclusive", f"'{v}' is not accepted", [EXCLUSIVE_ACCEPTED])
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
    warnings = [f"unknown field '{k}' ignored" for k in raw if k not in KNOWN_KEYS]

    # GPU: a MIG profile written in the name is a statement about exclusivity, not part of the model
    gpu_name = r.text("gpu", raw.get("gpu"))
    excl = _exclusive(r, raw.get("exclusive"))
    gpu_id = None
    form_hint = None
    if gpu_name is None:
        warnings.append("gpu not stated: checklist items 1-2 are missing and no per-GPU price without gpu_count")
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
        amount = r.num("price.amount", pr.get("amount"))
        if r.blank(pr.get("amount")):
            r.err("price.amount", "not stated", ["a number >= 0"])
        cur = r.currency("price.currency", pr.get("currency"))
        per = r.choice("price.per", pr.get("per"), PERS, {"h": "hour", "hr": "hour", "mo": "month", "yr": "year",
                                                          "one-off": "once", "one_off": "once", "s": "second"})
        if per is None and r.blank(pr.get("per")):
            r.err("price.per", "not stated", list(PERS))
        term = r.num("price.term_months", pr.get("term_months"), gt=True, accepted="a number of months > 0")
        for k in pr:
            if k not in ("amount", "currency", "per", "term_months"):
                warnings.append(f"unknown field 'price.{k}' ignored")
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
        warnings.append(f"form not stated: '{form}' assumed from price.per '{price.per}'")
    if price is not None and form == "purchase" and price.per != "once":
        r.err("price.per", f"'{price.per}' for form purchase", ["once"])
    if price is not None and form not in (None, "purchase") and price.per == "once" and not price.term_months:
        r.err("price.per", f"'once' for form {form} needs price.term_months (a prepaid term)",
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

    nvme = None
    nv = raw.get("nvme")
    if isinstance(nv, dict):
        tb = r.num("nvme.capacity_tb", nv.get("capacity_tb"), accepted="TB >= 0")
        gb = r.num("nvme.capacity_gb", nv.get("capacity_gb"), accepted="GB >= 0")
        nvme = tb * TB_GIB if tb is not None else gb * GB_GIB if gb is not None else None
    elif not r.blank(nv):
        if isinstance(nv, str) and nv.strip().lower() in ("none", "no"):
            nvme = 0.0
        else:
            r.err("nvme", f"{_show(nv)}: expected a mapping", ["nvme: {capacity_tb: 3.84}", "nvme: none"])
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
    notes = " ".join(t for t in (r.text("notes", raw.get("notes")), r.text("description", raw.get("description")))
                     if t)
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
                warnings.append(f"unknown field 'tco.{k}' ignored")
    elif not r.blank(tv):
        r.err("tco", "expected a mapping", ["tco: {power_kw, pue, electricity, hosting, years, residual_fraction}"])
    if tco is not None and form not in (None, "purchase"):
        warnings.append(f"tco ignored: form is {form}, not purchase")

    if r.errors or price is None or form is None:
        if not r.errors:
            r.err("quote", "incomplete", None)
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
        region=r.text("region", raw.get("region")), billing_granularity_s=billing, spot=spot, covers=covers,
        extras=extras, tco=tco, gpu_memory_gib=mem, memory_bandwidth_gbs=bw, precisions=precisions, notes=notes,
        production=production, date=_date_text(raw.get("date")), valid_until=_date_text(raw.get("valid_until")),
        available=r.boolean("available", raw.get("available")), line=line, warnings=warnings,
    )


def _date_text(v: Any) -> str | None:
    if v is None or v == "":
        return None
    if isinstance(v, datetime | date):
        return v.isoformat()
    return str(v)


# ---------------------------------------------------------------- files


@dataclass
class ParsedQuotes:
    quotes: list[Quote]
    errors: list[QuoteError]
    fmt: str  # yaml | csv


def _yaml_lines(text: str) -> list[int | None]:
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    seq = None
    if isinstance(node, yaml.SequenceNode):
        seq = node
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if getattr(k, "value", None) == "quotes" and isinstance(v, yaml.SequenceNode):
                seq = v
    return [item.start_mark.line + 1 for item in seq.value] if seq else []


def _unflatten(row: dict[str, str]) -> dict:
    out: dict = {}
    for key, val in row.items():
        if key is None or val is None or not str(val).strip():
            continue
        parts = key.strip().split(".")
        d = out
        for p in parts[:-1]:
            d = d.setdefault(p, {})
            if not isinstance(d, dict):
                break
        else:
            d[parts[-1]] = val.strip()
    return out


def parse_quotes_text(text: str, fmt: str = "yaml", name: str = "<quotes>",
                      overrides: dict[str, float] | None = None) -> ParsedQuotes:
    """Parse a whole quote file; only a file-level problem (syntax, no quotes) raises BadInput."""
    raws: list[tuple[dict | Any, int | None]] = []
    if fmt == "csv":
        all_lines = text.splitlines(keepends=True)
        skip = 0
        while skip < len(all_lines) and (not all_lines[skip].strip() or all_lines[skip].lstrip().startswith("#")):
            skip += 1
        reader = csv.DictReader(io.StringIO("".join(all_lines[skip:])))
        if not reader.fieldnames:
            raise BadInput(f"{name}: empty CSV; accepted: a header row with the quote columns (see docs/quotes.md)",
                           field="file")
        for row in reader:
            cells = [v for v in row.values() if isinstance(v, str)]
            if not any(v.strip() for v in cells) or (cells and cells[0].lstrip().startswith("#")):
                continue
            line = reader.line_num + skip
            if None in row:
                raws.append(({"__bad__": f"{len(row[None])} more cells than header columns"}, line))
                continue
            raws.append((_unflatten(row), line))
    else:
        import yaml

        from gpuquote.safeload import check_text, yaml_bounds

        try:
            check_text(text, name)
            yaml_bounds(text, name)
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(e, "problem", None) or str(e).splitlines()[0]
            ctx, cmark = getattr(e, "context", None), getattr(e, "context_mark", None)
            if ctx and cmark and (not mark or cmark.line != mark.line):
                problem += f" ({ctx} at line {cmark.line + 1})"
            raise BadInput(f"{name}: YAML syntax error{where}: {problem}; accepted: a YAML file with a `quotes:` list "
                           "(see docs/quotes.md)", field="file") from None
        if isinstance(data, dict) and "quotes" in data:
            items = data["quotes"]
        elif isinstance(data, list):
            items = data
        else:
            raise BadInput(f"{name}: no `quotes:` list found; accepted: a YAML mapping with `quotes:` (a list of "
                           "quotes) or a YAML list of quotes", field="quotes")
        if not isinstance(items, list):
            raise BadInput(f"{name}: `quotes` is not a list; accepted: a YAML list of quote mappings", field="quotes")
        lines = _yaml_lines(text)
        for i, item in enumerate(items):
            raws.append((item, lines[i] if i < len(lines) else None))
    if not raws:
        raise BadInput(f"{name}: no quotes in the file; accepted: at least one quote (see docs/quotes.md)",
                       field="quotes")
    quotes: list[Quote] = []
    errors: list[QuoteError] = []
    seen: set[str] = set()
    for i, (raw, line) in enumerate(raws, start=1):
        if not isinstance(raw, dict):
            errors.append(QuoteError(f"q{i}", line, [("quote", "expected a mapping of fields", ["id: ..., gpu: ..."])]))
            continue
        if "__bad__" in raw:
            errors.append(QuoteError(f"q{i}", line, [("row", raw["__bad__"], None)]))
            continue
        q = parse_quote(raw, i, overrides, line)
        if isinstance(q, Quote):
            if q.id in seen:
                errors.append(QuoteError(q.id, line, [("id", f"duplicate id '{q.id}'", ["ids unique in the file"])]))
                continue
            seen.add(q.id)
            quotes.append(q)
        else:
            seen.add(q.quote_id)
            errors.append(q)
    return ParsedQuotes(quotes, errors, fmt)


def read_quote_file(path: str | Path, overrides: dict[str, float] | None = None) -> ParsedQuotes:
    """Read a .yaml/.yml/.csv quote file (the format follows the extension; anything else is read as YAML)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise BadInput(f"FILE: '{path}' does not exist; accepted: a readable .yaml or .csv quote file",
                       field="file") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        raise BadInput(f"FILE: '{path}' cannot be read ({type(e).__name__}); accepted: a readable UTF-8 .yaml or "
                       ".csv quote file", field="file") from None
    fmt = "csv" if p.suffix.lower() == ".csv" else "yaml"
    return parse_quotes_text(text, fmt, str(path), overrides)
