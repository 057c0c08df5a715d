"""The Quote type: one validated quote, and QuoteError: one bad quote with every bad field.

A Quote hands over finished results (`assess`: normalised prices, the checklist, advisories) so that
callers build a report from one call instead of reaching back into the quote for each part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gpuquote.errors import BadInput
from gpuquote.hardware import load_gpus, members
from gpuquote.i18n import Msg
from gpuquote.offers.checklist import MIG_RE, Facts
from gpuquote.offers.forms import normalise_price, offer_form
from gpuquote.offers.model import InterNode, Offer, Price
from gpuquote.offers.tco import TcoSpec, compute_tco

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
        """One line (an i18n Text: still translatable) naming the quote, its line and every bad field."""
        from gpuquote.i18n import Text, join

        parts = []
        for fld, msg, acc in self.fields:
            part = Text(f"{fld}: ", msg)
            parts.append(part + Msg("quote.e.accepted", values=join(", ", list(acc))) if acc else part)
        head = Msg("quote.e.head_line", id=self.quote_id, line=self.line) if self.line else \
            Msg("quote.e.head", id=self.quote_id)
        return head + join("; ", parts)

    def to_dict(self) -> dict:
        return {"id": self.quote_id, "line": self.line, "message": self.line_text(),
                "fields": [{"field": f, "message": m, "accepted": a} for f, m, a in self.fields]}


@dataclass
class Assessment:
    """A quote's finished results at one utilisation (see Quote.assess)."""

    prices: dict
    checklist: list
    advisories: list
    unit: str  # gpu | mig_slice | shared_gpu
    assumptions: list[str]
    warnings: list[str]
    facts: object = None  # the checklist's Facts (offers.checklist), kept for the comparison of a whole file

    def checked(self, quote_id: str):
        """This quote as offers.comparable needs it: the same facts and checklist items, not rebuilt."""
        from gpuquote.offers.comparable import Checked

        return Checked(quote_id, self.facts, self.checklist, self.prices["usd_per_gpu_hour"],
                       self.prices["usd_per_node_hour"], self.unit)


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
    nvme_write_gbs: float | None = None
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
    id_stated: bool = True  # False: `id` was not in the file and is the position (q3)

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

    def assess(self, utilisation: float = 1.0, overrides: dict[str, float] | None = None) -> Assessment:
        """Everything a report needs from this quote, computed once: prices, checklist, advisories, unit."""
        from gpuquote.offers.checklist import advisories, run_checklist

        facts = self.facts()
        pr = self.prices(utilisation, overrides)
        unit = "mig_slice" if self.mig_profile else "shared_gpu" if self.exclusive == "shared" else "gpu"
        assumptions = list(pr["tco"].assumptions) if pr["tco"] else []
        if self.billing_granularity_s is None and self.form != "purchase":
            assumptions.append(Msg("quote.f.granularity_assumed",
                                   per=Msg("unit.one." + (self.price.per if self.price.per != "once" else "term"))))
        return Assessment(prices=pr, checklist=run_checklist(facts), advisories=advisories(facts), unit=unit,
                          assumptions=assumptions, warnings=list(self.warnings) + pr["notes"], facts=facts)

    def to_offer(self, source: str, *, fetched_at: datetime | None = None,
                 overrides: dict[str, float] | None = None) -> Offer:
        """This quote as a catalog Offer (its id is the quote id), so plan/import treat quotes like offers.

        The Offer's price is for the whole quoted machine: a per-GPU price is multiplied by gpu_count;
        a prepaid term becomes its monthly equivalent with the term; a purchase becomes its TCO per
        node-hour at utilisation 1, in USD (stated in the notes).
        """
        if not self.id_stated:
            from gpuquote.i18n import t

            raise BadInput(t("hostile.id_required", id=self.id), field="id", accepted=["a unique id"])
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
            nvme_write_gbs=self.nvme_write_gbs,
            inter_node=InterNode(kind=self.net_kind, gbps_per_node=self.net_gbps), price=price,
            billing_granularity_s=1 if self.form == "purchase" else self.billing_granularity_s, spot=self.spot,
            covers=list(self.covers or []), extras=dict(self.extras), available=self.available, source=source,
            fetched_at=when, gpu_memory_gib=memory, notes=notes, id=self.id, form=offer_form(self.form, self.price),
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

