"""The ten items that must line up before two GPU quotes (or offers, or a machine) can be compared.

Each item gets a status per quote: `ok` (stated and consistent with the GPU catalog), `missing` (not
stated: the message says what to ask the vendor) or `mismatch` (stated but impossible or contradictory,
e.g. 8 PCIe A100s "with NVSwitch", 80 GB with 1.5 TB/s, FP8 on an A100, a MIG slice sold as a full GPU).
Item 1 covers the GPU's identity as well as its memory: bandwidth and precision claims that tell one
chip from another are checked there.

Two quotes are comparable like for like only when items 1-5 agree (same value, both ok) and nothing in
6-10 is missing or contradictory in either. The checklist works on `Facts`, built from a Quote
(offers.quotes), a catalog Offer (`facts_from_offer`) or, for the probe, a machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from gpuquote.hardware import GPU, load_gpus, members
from gpuquote.i18n import Msg, join
from gpuquote.offers.model import Offer

#: (number, name) of the ten checklist items; numbers and names are stable (JSON contract).
CHECKLIST_ITEMS: list[tuple[int, str]] = [
    (1, "memory"),
    (2, "form_factor"),
    (3, "gpu_count"),
    (4, "exclusive"),
    (5, "intra_node"),
    (6, "cpu"),
    (7, "ram"),
    (8, "nvme"),
    (9, "network"),
    (10, "price_terms"),
]
ITEM_NAMES = dict(CHECKLIST_ITEMS)
#: Items whose values must be equal for a like-for-like comparison; the others must only be stated.
MUST_AGREE = (1, 2, 3, 4, 5)
MUST_BE_STATED = (6, 7, 8, 9, 10)
STATUSES = ("ok", "missing", "mismatch")
MAX_GPUS_PER_NODE = 16  # the largest single-node GPU boards (HGX-2, a2-megagpu-16g) carry 16
BANDWIDTH_TOLERANCE = 0.10
MEMORY_TOLERANCE = 0.07
MIG_RE = re.compile(r"\b(\d)g\.(\d+)gb(\+me)?\b", re.IGNORECASE)


@dataclass
class Facts:
    """What a quote, offer or machine states about the ten items. None / "unknown": not stated."""

    id: str
    gpu_id: str | None = None  # SKU or family id (resolved, narrowed by stated memory / form factor)
    gpu_name: str | None = None  # as written
    gpu_count: float | None = None
    exclusive: bool | str = "unknown"  # True | "shared" | "mig:<profile>" | "unknown"
    form_factor_stated: str | None = None  # pcie | sxm | oam | other, when stated apart from the name
    intra_node: str = "unknown"
    intra_node_from_text: bool = False
    cpu_model: str | None = None
    cpu_cores: float | None = None
    vcpus: float | None = None
    ram_gib: float | None = None
    nvme_gib: float | None = None
    net_kind: str = "unknown"
    net_gbps: float | None = None
    form: str | None = None  # quote form; None for catalog offers
    form_inferred: bool = False  # the quote did not say whether the price is per GPU or per node
    per: str | None = None
    term_months: float | None = None
    spot: bool = False
    covers: list[str] | None = None  # None: not stated
    extras: dict[str, float] = field(default_factory=dict)
    tco_missing: list[str] | None = None  # purchase: TCO inputs not stated
    tco_power_kw: float | None = None
    memory_gib_stated: float | None = None  # per GPU, as the quote states it
    bandwidth_gbs_stated: float | None = None
    precisions_claimed: list[str] = field(default_factory=list)
    text: str = ""  # free text (notes, description) searched for claims
    production: dict[str, str] = field(default_factory=dict)


@dataclass
class CheckItem:
    item: int
    name: str
    status: str  # ok | missing | mismatch
    message: str
    value: object = None  # the normalised value compared between quotes (items 1-5)

    def to_dict(self) -> dict:
        return {"item": self.item, "name": self.name, "status": self.status, "message": self.message,
                "value": self.value}


@lru_cache(maxsize=1)
def mig_profiles() -> dict[str, tuple[str, ...]]:
    """GPU id -> the MIG profiles it supports (data/mig_profiles.yaml, NVIDIA MIG user guide)."""
    import yaml

    from gpuquote.config import DATA_DIR

    data = yaml.safe_load((DATA_DIR / "mig_profiles.yaml").read_text(encoding="utf-8"))
    out: dict[str, tuple[str, ...]] = {}
    for row in data["profiles"]:
        for g in row["gpus"]:
            out[g] = tuple(p.lower() for p in row["profiles"])
    return out


def _gpus(f: Facts) -> list[GPU]:
    if not f.gpu_id:
        return []
    cat = load_gpus()
    return [cat[m] for m in members(f.gpu_id)]


def _label(gs: list[GPU]) -> str:
    fam = {g.family for g in gs}
    return (fam.pop().upper() if len(fam) == 1 else "/".join(sorted(fam))) if gs else "GPU"


def _fmt(v: float | None, unit: str = "") -> str:
    if v is None:
        return "?"
    return (f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}".rstrip("0").rstrip(".")) + unit


def _mem_close(a: float, b: float, tol: float = MEMORY_TOLERANCE) -> bool:
    return abs(a - b) <= tol * b


def _sibling_memory(gs: list[GPU], mem: float) -> bool:
    """True when `mem` is the full memory of another SKU of the same family (a 40 GB A100 beside the 80 GB)."""
    fam = {g.family for g in gs}
    return any(g.family in fam and _mem_close(mem, g.memory_gib) for g in load_gpus().values())


def mig_profile(exclusive: bool | str) -> str | None:
    if isinstance(exclusive, str) and exclusive.startswith("mig:"):
        return exclusive[4:]
    return None


# ------------------------------------------------------------------ items


def _item_memory(f: Facts) -> CheckItem:
    n, name = 1, ITEM_NAMES[1]
    gs = _gpus(f)
    if not gs:
        return CheckItem(n, name, "missing", Msg("check.memory.no_gpu"))
    label = _label(gs)
    mems = sorted({g.memory_gib for g in gs})
    problems: list[object] = []
    profile = mig_profile(f.exclusive)
    if f.memory_gib_stated is not None and not any(_mem_close(f.memory_gib_stated, m) for m in mems):
        smaller = f.memory_gib_stated < min(mems)
        sliceish = smaller and any((g.mig_max or 0) > 0 for g in gs) and not _sibling_memory(gs, f.memory_gib_stated)
        if profile is None and not sliceish:
            problems.append(Msg("check.memory.stated_wrong", stated=_fmt(f.memory_gib_stated), label=label,
                                mems="/".join(_fmt(m) for m in mems)))
    if f.bandwidth_gbs_stated is not None:
        bws = {g.id: g.memory_bandwidth_gbs for g in gs if g.memory_bandwidth_gbs}
        if bws and not any(abs(f.bandwidth_gbs_stated - b) <= BANDWIDTH_TOLERANCE * b for b in bws.values()):
            cat = load_gpus()
            fam = {g.family for g in gs}
            who = [g for g in cat.values() if g.family in fam and g.memory_bandwidth_gbs
                   and abs(f.bandwidth_gbs_stated - g.memory_bandwidth_gbs) <= BANDWIDTH_TOLERANCE
                   * g.memory_bandwidth_gbs]
            hint = (Msg("check.memory.bandwidth_hint", tbs=_fmt(f.bandwidth_gbs_stated / 1000),
                        ids=", ".join(g.id for g in who)) if who else "")
            problems.append(Msg("check.memory.bandwidth_wrong", stated=_fmt(f.bandwidth_gbs_stated), label=label,
                                mems="/".join(_fmt(m) for m in mems),
                                bws="/".join(sorted({_fmt(b) for b in bws.values()})), hint=hint))
    for p in f.precisions_claimed:
        if all(g.peak_tflops(p) is None for g in gs):
            arch = sorted({g.architecture.split(" (")[0] for g in gs})
            problems.append(Msg("check.memory.precision_fp8" if p == "fp8" else "check.memory.precision",
                                p=p.upper(), label=label, arch=", ".join(arch)))
    if problems:
        return CheckItem(n, name, "mismatch", join("; ", problems), None)
    fam = sorted({g.family for g in gs})[0]
    if len(mems) > 1:
        def bw_range(m: float) -> str:
            bw = sorted({g.memory_bandwidth_gbs for g in gs if g.memory_gib == m and g.memory_bandwidth_gbs})
            return "-".join(_fmt(b) for b in (bw[0], bw[-1]) if b) if len(bw) > 1 else _fmt(bw[0] if bw else None)

        opts = ", ".join(f"{_fmt(m)} GB ({bw_range(m)} GB/s)" for m in mems)
        msg: object = Msg("check.memory.not_stated", name=f.gpu_name or f.gpu_id, opts=opts)
        if f.bandwidth_gbs_stated:
            msg = msg + Msg("check.memory.bandwidth_suggests", bw=_fmt(f.bandwidth_gbs_stated))
        return CheckItem(n, name, "missing", msg, None)
    m = mems[0]
    bws = sorted({g.memory_bandwidth_gbs for g in gs if g.memory_bandwidth_gbs})
    msg = f"{label} {_fmt(m)} GB {gs[0].memory_type}, {'-'.join(_fmt(b) for b in bws)} GB/s"
    if f.memory_gib_stated is not None and not _mem_close(f.memory_gib_stated, m):
        msg = msg + Msg("check.memory.slice", stated=_fmt(f.memory_gib_stated))
    return CheckItem(n, name, "ok", msg, f"{fam}-{_fmt(m)}gb")


def _item_form(f: Facts) -> CheckItem:
    n, name = 2, ITEM_NAMES[2]
    gs = _gpus(f)
    if not gs:
        return CheckItem(n, name, "missing", Msg("check.form.no_gpu"))
    forms = sorted({g.form_factor for g in gs})
    variants = sorted({g.variant for g in gs})
    if f.form_factor_stated and f.form_factor_stated not in forms:
        return CheckItem(n, name, "mismatch", Msg("check.form.contradicts", stated=f.form_factor_stated,
                                                  name=f.gpu_name or f.gpu_id, forms="/".join(forms).upper()), None)
    if len(variants) > 1:
        msg: object = Msg("check.form.not_stated", name=f.gpu_name or f.gpu_id,
                          variants=" / ".join(v.upper() for v in variants))
        if f.intra_node == "nvswitch":
            msg = msg + Msg("check.form.nvswitch_implies_sxm")
        return CheckItem(n, name, "missing", msg, None)
    g = gs[0]
    return CheckItem(n, name, "ok", f"{g.form_factor_detail} ({_fmt(g.tdp_w)} W)", variants[0])


def _is_sliced(f: Facts) -> bool:
    return f.exclusive == "shared" or mig_profile(f.exclusive) is not None


def _item_count(f: Facts) -> CheckItem:
    n, name = 3, ITEM_NAMES[3]
    c = f.gpu_count
    if c is None:
        return CheckItem(n, name, "missing", Msg("check.count.not_stated"))
    if c > MAX_GPUS_PER_NODE and not _is_sliced(f):
        return CheckItem(n, name, "mismatch", Msg("check.count.too_many", n=_fmt(c), max=MAX_GPUS_PER_NODE), None)
    if f.exclusive is True and not float(c).is_integer():
        return CheckItem(n, name, "mismatch", Msg("check.count.fractional", n=_fmt(c)), None)
    key = "check.count.ok_mig" if mig_profile(f.exclusive) else "check.count.ok"
    return CheckItem(n, name, "ok", Msg(key, n=_fmt(c)), c)


def _item_exclusive(f: Facts) -> CheckItem:
    n, name = 4, ITEM_NAMES[4]
    gs = _gpus(f)
    label = _label(gs)
    profile = mig_profile(f.exclusive)
    text_mig = MIG_RE.search(f.text or "") or re.search(r"\bmig\b", f.text or "", re.IGNORECASE)
    if f.exclusive == "unknown":
        msg: object = Msg("check.exclusive.not_stated")
        if text_mig:
            msg = msg + Msg("check.exclusive.notes_mention_mig")
        return CheckItem(n, name, "missing", msg)
    if f.exclusive == "shared":
        return CheckItem(n, name, "ok", Msg("check.exclusive.shared"), "shared")
    if profile is not None:
        m = MIG_RE.fullmatch(profile)
        if not m:
            return CheckItem(n, name, "mismatch", Msg("check.exclusive.mig_form", profile=profile))
        slices, mem = int(m.group(1)), float(m.group(2))
        if gs and all(not g.mig_max for g in gs):
            return CheckItem(n, name, "mismatch", Msg("check.exclusive.no_mig", profile=profile, label=label))
        if gs:
            tables = mig_profiles()
            known = [g for g in gs if g.id in tables]
            base = profile.lower()
            if known and not any(base in tables[g.id] for g in known):
                opts = sorted({p for g in known for p in tables[g.id] if "+me" not in p})
                return CheckItem(n, name, "mismatch", Msg("check.exclusive.mig_unknown", profile=profile,
                                                          ids=", ".join(g.id for g in known), opts=", ".join(opts)))
            if all(mem > g.memory_gib * 1.02 or slices > (g.mig_max or 0) for g in gs):
                return CheckItem(n, name, "mismatch", Msg("check.exclusive.mig_too_big", profile=profile,
                                                          label=label))
        if f.memory_gib_stated is not None and not _mem_close(f.memory_gib_stated, mem, 0.1):
            full = gs and any(_mem_close(f.memory_gib_stated, g.memory_gib) for g in gs)
            if full:
                return CheckItem(n, name, "mismatch", Msg("check.exclusive.mig_full_memory", profile=profile,
                                                          stated=_fmt(f.memory_gib_stated)))
        mig_max = max((g.mig_max or 7) for g in gs) if gs else 7
        return CheckItem(n, name, "ok", Msg("check.exclusive.mig_ok", profile=profile, slices=slices,
                                            max=mig_max, mem=_fmt(mem)), f"mig:{profile.lower()}")
    # exclusive whole GPUs: look for signs of a slice sold as a full GPU
    mems = [g.memory_gib for g in gs]
    if (f.memory_gib_stated is not None and mems and f.memory_gib_stated < 0.9 * min(mems)
            and any((g.mig_max or 0) > 0 for g in gs) and not _sibling_memory(gs, f.memory_gib_stated)):
        return CheckItem(n, name, "mismatch", Msg("check.exclusive.slice_as_full", label=label,
                                                  stated=_fmt(f.memory_gib_stated),
                                                  full="/".join(_fmt(m) for m in sorted(set(mems)))))
    if text_mig:
        return CheckItem(n, name, "mismatch", Msg("check.exclusive.notes_mig", text=text_mig.group(0)))
    return CheckItem(n, name, "ok", Msg("check.exclusive.ok"), "exclusive")


def _item_intra(f: Facts) -> CheckItem:
    n, name = 5, ITEM_NAMES[5]
    gs = _gpus(f)
    label = _label(gs)
    c = f.gpu_count
    link = f.intra_node
    if mig_profile(f.exclusive) is not None or f.exclusive == "shared":
        return CheckItem(n, name, "ok", Msg("check.intra.slice"), "none")
    if c is not None and c <= 1:
        msg: object = Msg("check.intra.single")
        if link in ("nvswitch", "nvlink"):
            msg = msg + Msg("check.intra.single_link", link=link)
        return CheckItem(n, name, "ok", msg, "none")
    if link == "unknown":
        return CheckItem(n, name, "missing", Msg("check.intra.not_stated"))
    if link == "none":
        return CheckItem(n, name, "mismatch", Msg("check.intra.none_multi", n=_fmt(c)))
    src = Msg("check.intra.from_notes") if f.intra_node_from_text else ""
    forms = {g.form_factor for g in gs}
    no_nvlink = bool(gs) and all((g.nvlink_gen or "none").lower().startswith("none") for g in gs)
    if link == "nvswitch" and gs and forms <= {"pcie"}:
        return CheckItem(n, name, "mismatch", Msg("check.intra.nvswitch_pcie", src=src, n=_fmt(c), label=label))
    if link in ("nvswitch", "nvlink") and no_nvlink:
        return CheckItem(n, name, "mismatch", Msg("check.intra.no_nvlink", link=link, src=src, label=label))
    if link == "pcie" and gs and forms == {"sxm"}:
        return CheckItem(n, name, "mismatch", Msg("check.intra.pcie_sxm", label=label))
    msg = Msg(f"check.intra.ok_{link}") + src
    if link == "nvlink" and forms <= {"pcie"} and c and c > 2:
        msg = msg + Msg("check.intra.bridges_pairs", n=_fmt(c))
    if link == "nvswitch" and c and c < 8 and forms == {"sxm"}:
        msg = msg + Msg("check.intra.node_slice")
    return CheckItem(n, name, "ok", msg, link)


def _item_cpu(f: Facts) -> CheckItem:
    n, name = 6, ITEM_NAMES[6]
    cores = f.cpu_cores if f.cpu_cores is not None else f.vcpus
    unit = Msg("check.unit.cores") if f.cpu_cores is not None else "vCPUs"
    if not f.cpu_model and cores is None:
        return CheckItem(n, name, "missing", Msg("check.cpu.not_stated"))
    if not f.cpu_model:
        return CheckItem(n, name, "missing", Msg("check.cpu.no_model", n=_fmt(cores), unit=unit))
    if cores is None:
        return CheckItem(n, name, "missing", Msg("check.cpu.no_cores", model=f.cpu_model))
    msg: object = f"{f.cpu_model}, {_fmt(cores)} " + unit
    if f.gpu_count and not _is_sliced(f) and cores / f.gpu_count < 4:
        msg = msg + Msg("check.cpu.few_per_gpu", n=_fmt(cores / f.gpu_count))
    return CheckItem(n, name, "ok", msg, f"{f.cpu_model} / {_fmt(cores)}")


def _item_ram(f: Facts) -> CheckItem:
    n, name = 7, ITEM_NAMES[7]
    if f.ram_gib is None:
        return CheckItem(n, name, "missing", Msg("check.ram.not_stated"))
    msg: object = Msg("check.ram.ok", gb=_fmt(f.ram_gib))
    gs = _gpus(f)
    if gs and f.gpu_count and not _is_sliced(f):
        total = min(g.memory_gib for g in gs) * f.gpu_count
        if f.ram_gib < total:
            msg = msg + Msg("check.ram.less_than_gpus", gb=_fmt(total))
    return CheckItem(n, name, "ok", msg, f.ram_gib)


def _item_nvme(f: Facts) -> CheckItem:
    n, name = 8, ITEM_NAMES[8]
    if f.nvme_gib is None:
        return CheckItem(n, name, "missing", Msg("check.nvme.not_stated"))
    if f.nvme_gib == 0:
        return CheckItem(n, name, "ok", Msg("check.nvme.none"), 0)
    return CheckItem(n, name, "ok", Msg("check.nvme.ok", tb=_fmt(f.nvme_gib * 2**30 / 1e12)), f.nvme_gib)


_NET_NAMES = {"ib": "InfiniBand", "roce": "RoCE (RDMA over Ethernet)", "ethernet": "Ethernet (no RDMA)",
              "omnipath": "Omni-Path", "none": "none"}


def _item_network(f: Facts) -> CheckItem:
    n, name = 9, ITEM_NAMES[9]
    kind, gbps = f.net_kind, f.net_gbps
    if kind == "none":
        if gbps:
            return CheckItem(n, name, "mismatch", Msg("check.network.none_with_speed", gbps=_fmt(gbps)), None)
        return CheckItem(n, name, "ok", Msg("check.network.single_node"), "none")
    if kind == "unknown" and gbps is None:
        return CheckItem(n, name, "missing", Msg("check.network.not_stated"))
    if kind == "unknown":
        return CheckItem(n, name, "missing", Msg("check.network.no_kind", gbps=_fmt(gbps)))
    kind_name = Msg("check.network.ethernet") if kind == "ethernet" else _NET_NAMES[kind]
    if gbps is None:
        return CheckItem(n, name, "missing", Msg("check.network.no_speed", kind=kind_name))
    msg: object = Msg("check.network.ok", kind=kind_name, gbps=_fmt(gbps))
    if f.gpu_count and f.gpu_count > 1 and not _is_sliced(f):
        msg = msg + Msg("check.network.per_gpu", gbps=_fmt(gbps / f.gpu_count))
    return CheckItem(n, name, "ok", msg, f"{kind}/{_fmt(gbps)}")


def _item_price(f: Facts) -> CheckItem:
    n, name = 10, ITEM_NAMES[10]
    if f.per is None:
        return CheckItem(n, name, "missing", Msg("check.price.no_period"))
    if f.spot and f.term_months:
        return CheckItem(n, name, "mismatch", Msg("check.price.spot_term", months=_fmt(f.term_months)))
    if f.form == "purchase":
        gs = _gpus(f)
        if f.tco_power_kw is not None and gs and f.gpu_count and not _is_sliced(f):
            tdp = min((g.tdp_w or 0) for g in gs) * f.gpu_count / 1000
            if tdp and f.tco_power_kw < 0.5 * tdp:
                return CheckItem(n, name, "mismatch", Msg("check.price.power_low", kw=_fmt(f.tco_power_kw),
                                                          tdp=_fmt(tdp)))
        if f.tco_missing:
            return CheckItem(n, name, "missing", Msg("check.price.tco_missing", fields=", ".join(f.tco_missing)))
        return CheckItem(n, name, "ok", Msg("check.price.purchase_ok"), "purchase")
    if f.form_inferred and f.gpu_count and f.gpu_count > 1:
        return CheckItem(n, name, "missing", Msg("check.price.form_inferred", per=f.per, form=f.form))
    period: object = Msg("check.price.per", per=Msg("unit.one." + f.per) if f.per in _PER_WORDS else f.per)
    if f.term_months:
        period = period + Msg("check.price.term", months=_fmt(f.term_months))
    if f.spot:
        period = period + ", " + Msg("check.price.spot")
    if f.form == "reserved" and not f.term_months:
        return CheckItem(n, name, "missing", Msg("check.price.reserved_no_term", period=period))
    if f.covers is None:
        return CheckItem(n, name, "missing", Msg("check.price.covers_not_stated", period=period))
    covers = ", ".join(f.covers) if f.covers else Msg("check.price.gpus_only")
    return CheckItem(n, name, "ok", Msg("check.price.ok", period=period, covers=covers), str(period))


_ITEMS = (_item_memory, _item_form, _item_count, _item_exclusive, _item_intra, _item_cpu, _item_ram, _item_nvme,
          _item_network, _item_price)


#: Periods with a catalog word (unit.one.*).
_PER_WORDS = ("second", "minute", "hour", "day", "week", "month", "year", "once")


def run_checklist(f: Facts) -> list[CheckItem]:
    """The ten items for one quote / offer / machine, in order."""
    return [fn(f) for fn in _ITEMS]


def advisories(f: Facts) -> list[str]:
    """Production questions the price does not answer (advisory: they never block a comparison)."""
    out: list[str] = []
    prod = {k.lower(): v for k, v in (f.production or {}).items()}
    if not any(k in prod for k in ("node_failure", "failure", "sla")):
        out.append(Msg("check.advice.node_failure"))
    if not any(k in prod for k in ("drivers", "software", "cuda")):
        out.append(Msg("check.advice.software"))
    covers = {c.lower() for c in (f.covers or [])}
    keys = " ".join(f.extras)
    if "storage" not in covers and "storage" not in keys and "storage" not in prod:
        out.append(Msg("check.advice.storage"))
    if "egress" not in covers and "egress" not in keys and "egress" not in prod:
        out.append(Msg("check.advice.egress"))
    if f.spot:
        out.append(Msg("check.advice.spot"))
    return out


def facts_from_offer(o: Offer) -> Facts:
    """Facts of a catalog Offer; an Offer's empty `covers` means not stated."""
    return Facts(
        id=o.id, gpu_id=o.gpu_id, gpu_name=o.gpu_id, gpu_count=o.gpu_count, exclusive=o.gpu_exclusive,
        form_factor_stated=None, intra_node=o.intra_node, cpu_model=o.cpu_model, vcpus=o.vcpus,
        ram_gib=o.ram_gib, nvme_gib=o.nvme_gib, net_kind=o.inter_node.kind, net_gbps=o.inter_node.gbps_per_node,
        per=o.price.per, term_months=o.price.term_months, spot=o.spot, covers=list(o.covers) or None,
        extras=dict(o.extras), memory_gib_stated=None,
    )


def check_offer(o: Offer) -> list[CheckItem]:
    """The checklist of a catalog Offer (the planner attaches its missing/mismatch items as warnings)."""
    return run_checklist(facts_from_offer(o))


def differences(a_id: str, a: list[CheckItem], b_id: str, b: list[CheckItem]) -> list[dict]:
    """Why two checked quotes are not comparable like for like (empty list: they are)."""
    out: list[dict] = []
    for ia, ib in zip(a, b, strict=True):
        n = ia.item
        bad = [(qid, it) for qid, it in ((a_id, ia), (b_id, ib)) if it.status != "ok"]
        if bad:
            out.append({"item": n, "name": ia.name, "this": ia.value, "other": ib.value,
                        "message": f"({n}) {ia.name}: " + "; ".join(f"{it.status} in {qid}" for qid, it in bad)})
        elif n in MUST_AGREE and ia.value != ib.value:
            out.append({"item": n, "name": ia.name, "this": ia.value, "other": ib.value,
                        "message": f"({n}) {ia.name}: {_show(ia.value)} vs {_show(ib.value)}"})
    return out


def _show(v: object) -> str:
    return _fmt(v) if isinstance(v, int | float) and not isinstance(v, bool) else str(v)
