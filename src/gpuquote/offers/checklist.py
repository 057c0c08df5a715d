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
        return CheckItem(n, name, "missing", "GPU model not stated: ask the exact model, memory and form factor")
    label = _label(gs)
    mems = sorted({g.memory_gib for g in gs})
    problems: list[str] = []
    profile = mig_profile(f.exclusive)
    if f.memory_gib_stated is not None and not any(_mem_close(f.memory_gib_stated, m) for m in mems):
        smaller = f.memory_gib_stated < min(mems)
        sliceish = smaller and any((g.mig_max or 0) > 0 for g in gs) and not _sibling_memory(gs, f.memory_gib_stated)
        if profile is None and not sliceish:
            problems.append(f"{_fmt(f.memory_gib_stated)} GB per GPU stated, but {label} "
                            f"{' / '.join(_fmt(m) for m in mems)} GB has {' or '.join(_fmt(m) for m in mems)} GB")
    if f.bandwidth_gbs_stated is not None:
        bws = {g.id: g.memory_bandwidth_gbs for g in gs if g.memory_bandwidth_gbs}
        if bws and not any(abs(f.bandwidth_gbs_stated - b) <= BANDWIDTH_TOLERANCE * b for b in bws.values()):
            cat = load_gpus()
            fam = {g.family for g in gs}
            who = [g for g in cat.values() if g.family in fam and g.memory_bandwidth_gbs
                   and abs(f.bandwidth_gbs_stated - g.memory_bandwidth_gbs) <= BANDWIDTH_TOLERANCE
                   * g.memory_bandwidth_gbs]
            hint = f" ({_fmt(f.bandwidth_gbs_stated / 1000)} TB/s is the {', '.join(g.id for g in who)})" if who else ""
            problems.append(f"memory bandwidth {_fmt(f.bandwidth_gbs_stated)} GB/s stated, but {label} "
                            f"{'/'.join(_fmt(m) for m in mems)} GB has "
                            f"{' or '.join(sorted({_fmt(b) for b in bws.values()}))} GB/s{hint}")
    for p in f.precisions_claimed:
        if all(g.peak_tflops(p) is None for g in gs):
            arch = sorted({g.architecture.split(" (")[0] for g in gs})
            problems.append(f"{p.upper()} promised, but {label} ({', '.join(arch)}) has no {p.upper()} support"
                            + (" (FP8 arrived with Hopper/Ada)" if p == "fp8" else ""))
    if problems:
        return CheckItem(n, name, "mismatch", "; ".join(problems), None)
    fam = sorted({g.family for g in gs})[0]
    if len(mems) > 1:
        def bw_range(m: float) -> str:
            bw = sorted({g.memory_bandwidth_gbs for g in gs if g.memory_gib == m and g.memory_bandwidth_gbs})
            return "-".join(_fmt(b) for b in (bw[0], bw[-1]) if b) if len(bw) > 1 else _fmt(bw[0] if bw else None)

        opts = ", ".join(f"{_fmt(m)} GB ({bw_range(m)} GB/s)" for m in mems)
        msg = f"memory not stated: '{f.gpu_name or f.gpu_id}' may be {opts}; ask the vendor which"
        if f.bandwidth_gbs_stated:
            msg += f" (stated {_fmt(f.bandwidth_gbs_stated)} GB/s suggests the closest match)"
        return CheckItem(n, name, "missing", msg, None)
    m = mems[0]
    bws = sorted({g.memory_bandwidth_gbs for g in gs if g.memory_bandwidth_gbs})
    msg = f"{label} {_fmt(m)} GB {gs[0].memory_type}, {'-'.join(_fmt(b) for b in bws)} GB/s"
    if f.memory_gib_stated is not None and not _mem_close(f.memory_gib_stated, m):
        msg += f"; {_fmt(f.memory_gib_stated)} GB stated per GPU is a slice of it (see item 4)"
    return CheckItem(n, name, "ok", msg, f"{fam}-{_fmt(m)}gb")


def _item_form(f: Facts) -> CheckItem:
    n, name = 2, ITEM_NAMES[2]
    gs = _gpus(f)
    if not gs:
        return CheckItem(n, name, "missing", "GPU not stated: ask PCIe or SXM")
    forms = sorted({g.form_factor for g in gs})
    variants = sorted({g.variant for g in gs})
    if f.form_factor_stated and f.form_factor_stated not in forms:
        return CheckItem(n, name, "mismatch", f"form factor '{f.form_factor_stated}' stated, but the GPU named "
                         f"('{f.gpu_name or f.gpu_id}') is {'/'.join(forms).upper()}", None)
    if len(variants) > 1:
        msg = (f"PCIe or SXM not stated ('{f.gpu_name or f.gpu_id}' may be {' or '.join(v.upper() for v in variants)});"
               " ask the vendor: SXM on an HGX board has NVLink/NVSwitch and a higher power limit, PCIe cards "
               "talk over PCIe or bridged pairs")
        if f.intra_node == "nvswitch":
            msg += "; NVSwitch implies SXM (HGX) - confirm"
        return CheckItem(n, name, "missing", msg, None)
    g = gs[0]
    return CheckItem(n, name, "ok", f"{g.form_factor_detail} ({_fmt(g.tdp_w)} W)", variants[0])


def _is_sliced(f: Facts) -> bool:
    return f.exclusive == "shared" or mig_profile(f.exclusive) is not None


def _item_count(f: Facts) -> CheckItem:
    n, name = 3, ITEM_NAMES[3]
    c = f.gpu_count
    if c is None:
        return CheckItem(n, name, "missing", "GPU count per node not stated: ask how many GPUs one node has")
    if c > MAX_GPUS_PER_NODE and not _is_sliced(f):
        return CheckItem(n, name, "mismatch", f"{_fmt(c)} GPUs in one node: no server board holds more than "
                         f"{MAX_GPUS_PER_NODE}; ask for the count per node and the number of nodes", None)
    if f.exclusive is True and not float(c).is_integer():
        return CheckItem(n, name, "mismatch", f"{_fmt(c)} GPUs but sold as exclusive whole GPUs", None)
    unit = "MIG slices" if mig_profile(f.exclusive) else "GPUs"
    return CheckItem(n, name, "ok", f"{_fmt(c)} {unit} per node", c)


def _item_exclusive(f: Facts) -> CheckItem:
    n, name = 4, ITEM_NAMES[4]
    gs = _gpus(f)
    label = _label(gs)
    profile = mig_profile(f.exclusive)
    text_mig = MIG_RE.search(f.text or "") or re.search(r"\bmig\b", f.text or "", re.IGNORECASE)
    if f.exclusive == "unknown":
        msg = "not stated whether the GPUs are dedicated, MIG slices or time-shared: ask the vendor"
        if text_mig:
            msg += " (the notes mention MIG)"
        return CheckItem(n, name, "missing", msg)
    if f.exclusive == "shared":
        return CheckItem(n, name, "ok", "time-shared GPU: throughput and memory are not guaranteed", "shared")
    if profile is not None:
        m = MIG_RE.fullmatch(profile)
        if not m:
            return CheckItem(n, name, "mismatch", f"MIG profile '{profile}' is not of the form <N>g.<M>gb")
        slices, mem = int(m.group(1)), float(m.group(2))
        if gs and all(not g.mig_max for g in gs):
            return CheckItem(n, name, "mismatch", f"MIG slice '{profile}' offered, but {label} does not support MIG")
        if gs:
            tables = mig_profiles()
            known = [g for g in gs if g.id in tables]
            base = profile.lower()
            if known and not any(base in tables[g.id] for g in known):
                opts = sorted({p for g in known for p in tables[g.id] if "+me" not in p})
                return CheckItem(n, name, "mismatch", f"MIG profile '{profile}' does not exist on "
                                 f"{', '.join(g.id for g in known)}; its profiles: {', '.join(opts)}")
            if all(mem > g.memory_gib * 1.02 or slices > (g.mig_max or 0) for g in gs):
                return CheckItem(n, name, "mismatch", f"MIG profile '{profile}' exceeds {label}'s memory or "
                                 "slice count")
        if f.memory_gib_stated is not None and not _mem_close(f.memory_gib_stated, mem, 0.1):
            full = gs and any(_mem_close(f.memory_gib_stated, g.memory_gib) for g in gs)
            if full:
                return CheckItem(n, name, "mismatch", f"sold as MIG slice '{profile}' but {_fmt(f.memory_gib_stated)}"
                                 " GB per GPU stated (the full GPU's memory): ask which it is")
        mig_max = max((g.mig_max or 7) for g in gs) if gs else 7
        return CheckItem(n, name, "ok", f"MIG slice {profile}: {slices}/{mig_max} of the compute, {_fmt(mem)} GB; "
                         "priced per slice, never ranked against whole GPUs", f"mig:{profile.lower()}")
    # exclusive whole GPUs: look for signs of a slice sold as a full GPU
    mems = [g.memory_gib for g in gs]
    if (f.memory_gib_stated is not None and mems and f.memory_gib_stated < 0.9 * min(mems)
            and any((g.mig_max or 0) > 0 for g in gs) and not _sibling_memory(gs, f.memory_gib_stated)):
        return CheckItem(n, name, "mismatch", f"sold as a full {label} but {_fmt(f.memory_gib_stated)} GB per GPU "
                         f"is a MIG-slice size (full GPU: {'/'.join(_fmt(m) for m in sorted(set(mems)))} GB): a "
                         "MIG slice sold as a full GPU?")
    if text_mig:
        return CheckItem(n, name, "mismatch", f"sold as exclusive full GPUs but the notes mention MIG "
                         f"('{text_mig.group(0)}'): ask whether the GPU is partitioned")
    return CheckItem(n, name, "ok", "dedicated whole GPUs", "exclusive")


def _item_intra(f: Facts) -> CheckItem:
    n, name = 5, ITEM_NAMES[5]
    gs = _gpus(f)
    label = _label(gs)
    c = f.gpu_count
    link = f.intra_node
    if mig_profile(f.exclusive) is not None or f.exclusive == "shared":
        return CheckItem(n, name, "ok", "a slice of one GPU: no GPU-to-GPU link involved", "none")
    if c is not None and c <= 1:
        msg = "single GPU: no GPU-to-GPU link needed"
        if link in ("nvswitch", "nvlink"):
            msg += f" ({link} stated; it is not usable by one GPU)"
        return CheckItem(n, name, "ok", msg, "none")
    if link == "unknown":
        msg = ("GPU-to-GPU link not stated: ask NVSwitch (HGX board, all-to-all NVLink), NVLink bridges "
               "(pairs) or PCIe only - all-reduce bandwidth differs ~10x")
        return CheckItem(n, name, "missing", msg)
    if link == "none":
        return CheckItem(n, name, "mismatch", f"intra_node 'none' means a single GPU, but {_fmt(c)} GPUs are quoted")
    src = " (from the notes)" if f.intra_node_from_text else ""
    forms = {g.form_factor for g in gs}
    no_nvlink = bool(gs) and all((g.nvlink_gen or "none").lower().startswith("none") for g in gs)
    if link == "nvswitch" and gs and forms <= {"pcie"}:
        return CheckItem(n, name, "mismatch", f"NVSwitch stated{src} for {_fmt(c)}x {label} PCIe: PCIe cards cannot "
                         "attach to an NVSwitch (at most NVLink-bridged pairs); NVSwitch needs SXM on an HGX board")
    if link in ("nvswitch", "nvlink") and no_nvlink:
        return CheckItem(n, name, "mismatch", f"{link} stated{src}, but {label} has no NVLink")
    if link == "pcie" and gs and forms == {"sxm"}:
        return CheckItem(n, name, "mismatch", f"PCIe-only stated for {label} SXM: SXM GPUs are linked by NVLink on "
                         "their board; ask whether the GPUs are really SXM")
    msg = {"nvswitch": "NVSwitch: all-to-all NVLink between the GPUs",
           "nvlink": "NVLink between GPUs",
           "pcie": "PCIe only between GPUs: tensor parallelism across GPUs will be slow"}[link] + src
    if link == "nvlink" and forms <= {"pcie"} and c and c > 2:
        msg += f"; on PCIe cards bridges join pairs only, not all {_fmt(c)}"
    if link == "nvswitch" and c and c < 8 and forms == {"sxm"}:
        msg += "; NVSwitch boards carry 8 GPUs: this is a slice of a node"
    return CheckItem(n, name, "ok", msg, link)


def _item_cpu(f: Facts) -> CheckItem:
    n, name = 6, ITEM_NAMES[6]
    cores = f.cpu_cores if f.cpu_cores is not None else f.vcpus
    unit = "cores" if f.cpu_cores is not None else "vCPUs"
    if not f.cpu_model and cores is None:
        return CheckItem(n, name, "missing", "CPU not stated: ask the CPU model and core count (data loading, "
                         "tokenisation and CPU offload depend on it)")
    if not f.cpu_model:
        return CheckItem(n, name, "missing", f"{_fmt(cores)} {unit} but no CPU model: ask the model (generation "
                         "sets PCIe gen and memory bandwidth)")
    if cores is None:
        return CheckItem(n, name, "missing", f"CPU '{f.cpu_model}' but core count not stated: ask how many cores "
                         "are yours")
    msg = f"{f.cpu_model}, {_fmt(cores)} {unit}"
    if f.gpu_count and not _is_sliced(f) and cores / f.gpu_count < 4:
        msg += f" - only {_fmt(cores / f.gpu_count)} per GPU"
    return CheckItem(n, name, "ok", msg, f"{f.cpu_model} / {_fmt(cores)}")


def _item_ram(f: Facts) -> CheckItem:
    n, name = 7, ITEM_NAMES[7]
    if f.ram_gib is None:
        return CheckItem(n, name, "missing", "system RAM not stated: ask (rule of thumb: at least the GPUs' total "
                         "memory, more for CPU offload)")
    msg = f"{_fmt(f.ram_gib)} GB system RAM"
    gs = _gpus(f)
    if gs and f.gpu_count and not _is_sliced(f):
        total = min(g.memory_gib for g in gs) * f.gpu_count
        if f.ram_gib < total:
            msg += f" - less than the GPUs' {_fmt(total)} GB: checkpoint loading and CPU offload are limited"
    return CheckItem(n, name, "ok", msg, f.ram_gib)


def _item_nvme(f: Facts) -> CheckItem:
    n, name = 8, ITEM_NAMES[8]
    if f.nvme_gib is None:
        return CheckItem(n, name, "missing", "local NVMe not stated: ask capacity and speed (datasets, checkpoints "
                         "and the model cache live there)")
    if f.nvme_gib == 0:
        return CheckItem(n, name, "ok", "no local NVMe: data and checkpoints go to network storage", 0)
    return CheckItem(n, name, "ok", f"{_fmt(f.nvme_gib * 2**30 / 1e12)} TB local NVMe", f.nvme_gib)


def _item_network(f: Facts) -> CheckItem:
    n, name = 9, ITEM_NAMES[9]
    kind, gbps = f.net_kind, f.net_gbps
    names = {"ib": "InfiniBand", "roce": "RoCE (RDMA over Ethernet)", "ethernet": "Ethernet (no RDMA)",
             "omnipath": "Omni-Path", "none": "none"}
    if kind == "none":
        if gbps:
            return CheckItem(n, name, "mismatch", f"network 'none' but {_fmt(gbps)} Gbps stated", None)
        return CheckItem(n, name, "ok", "single node only: no multi-node network", "none")
    if kind == "unknown" and gbps is None:
        return CheckItem(n, name, "missing", "network between nodes not stated: ask the kind (InfiniBand / RoCE / "
                         "Ethernet) and Gbps per node (multi-node training needs RDMA, ~100+ Gbps per GPU)")
    if kind == "unknown":
        return CheckItem(n, name, "missing", f"{_fmt(gbps)} Gbps stated but not the kind: ask InfiniBand, RoCE "
                         "(RDMA) or plain Ethernet")
    if gbps is None:
        return CheckItem(n, name, "missing", f"{names[kind]} stated without speed: ask Gbps per node")
    msg = f"{names[kind]} {_fmt(gbps)} Gbps per node"
    if f.gpu_count and f.gpu_count > 1 and not _is_sliced(f):
        msg += f" ({_fmt(gbps / f.gpu_count)} Gbps per GPU)"
    return CheckItem(n, name, "ok", msg, f"{kind}/{_fmt(gbps)}")


def _item_price(f: Facts) -> CheckItem:
    n, name = 10, ITEM_NAMES[10]
    if f.per is None:
        return CheckItem(n, name, "missing", "price period not stated")
    if f.spot and f.term_months:
        return CheckItem(n, name, "mismatch", f"spot/interruptible price with a {_fmt(f.term_months)}-month term: "
                         "a term commitment cannot be preemptible; ask which it is")
    if f.form == "purchase":
        gs = _gpus(f)
        if f.tco_power_kw is not None and gs and f.gpu_count and not _is_sliced(f):
            tdp = min((g.tdp_w or 0) for g in gs) * f.gpu_count / 1000
            if tdp and f.tco_power_kw < 0.5 * tdp:
                return CheckItem(n, name, "mismatch", f"tco.power_kw {_fmt(f.tco_power_kw)} kW is below half the GPUs' "
                                 f"own {_fmt(tdp)} kW TDP: power cost would be understated")
        if f.tco_missing:
            return CheckItem(n, name, "missing", f"purchase: TCO inputs not stated ({', '.join(f.tco_missing)}); "
                             "defaults used - ask or estimate them (power draw, PUE, electricity price, hosting, "
                             "depreciation years)")
        return CheckItem(n, name, "ok", "purchase, TCO inputs stated (power, PUE, electricity, hosting, years)",
                         "purchase")
    if f.form_inferred and f.gpu_count and f.gpu_count > 1:
        return CheckItem(n, name, "missing", f"form not stated: the price per {f.per} was read as '{f.form}'; ask "
                         "whether it is per GPU or for the whole node")
    period = f"per {f.per}" + (f", {_fmt(f.term_months)}-month term" if f.term_months else "") + (
        ", spot" if f.spot else "")
    if f.form == "reserved" and not f.term_months:
        return CheckItem(n, name, "missing", f"reserved price {period} without term length: ask the term (months) "
                         "and whether it is paid up front")
    if f.covers is None:
        return CheckItem(n, name, "missing", f"{period}; what the price covers is not stated: ask whether power, "
                         "hosting, storage, egress and support are included")
    covers = ", ".join(f.covers) if f.covers else "GPUs only"
    return CheckItem(n, name, "ok", f"{period}; covers {covers}", period)


_ITEMS = (_item_memory, _item_form, _item_count, _item_exclusive, _item_intra, _item_cpu, _item_ram, _item_nvme,
          _item_network, _item_price)


def run_checklist(f: Facts) -> list[CheckItem]:
    """The ten items for one quote / offer / machine, in order."""
    return [fn(f) for fn in _ITEMS]


def advisories(f: Facts) -> list[str]:
    """Production questions the price does not answer (advisory: they never block a comparison)."""
    out = []
    prod = {k.lower(): v for k, v in (f.production or {}).items()}
    if not any(k in prod for k in ("node_failure", "failure", "sla")):
        out.append("node failure: ask how a failed GPU or node is handled (replacement time, credit, SLA)")
    if not any(k in prod for k in ("drivers", "software", "cuda")):
        out.append("software: ask who installs and updates the NVIDIA driver, CUDA, NCCL and the fabric drivers")
    covers = {c.lower() for c in (f.covers or [])}
    keys = " ".join(f.extras)
    if "storage" not in covers and "storage" not in keys and "storage" not in prod:
        out.append("storage: ask the price of network/object storage beyond local NVMe (per GB-month)")
    if "egress" not in covers and "egress" not in keys and "egress" not in prod:
        out.append("egress: ask the data-transfer-out price (per GB): moving checkpoints and datasets out can "
                   "cost more than the GPUs")
    if f.spot:
        out.append("spot: the node can be reclaimed - checkpoint often and price the restarts")
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
