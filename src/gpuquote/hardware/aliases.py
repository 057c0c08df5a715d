"""One id for every spelling of a GPU name.

Names from catalogs, quotes and nvidia-smi ("A100-80G-PCIe", "NVIDIA A100-SXM4-80GB", "H100-MEGA",
"RTX6000Ada") resolve to a SKU id (a100-80gb-pcie) when the name pins memory and form factor,
and to a *family* id (a100, a100-80gb, a100-sxm) when it does not: an ambiguous name never
becomes one SKU silently. Exact aliases that rules cannot derive live in data/gpu_aliases.csv, and
families that span models (bare "RTX 6000": Turing Quadro or Ada) in data/gpu_families.csv.
"""

from __future__ import annotations

import csv
import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from gpuquote.config import DATA_DIR
from gpuquote.errors import BadInput
from gpuquote.hardware.specs import GPU, load_gpus
from gpuquote.i18n import Msg

_STRIP_WORDS = re.compile(r"\b(nvidia|tesla|geforce|amd|instinct|intel|habana|google)\b")
_IGNORABLE = ("generation", "tensorcore", "edition", "gpu", "gpus", "card", "module")
_TOKENS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"sxm\d?"), "sxm"),
    (re.compile(r"pcie(?:gen\d)?"), "pcie"),
    (re.compile(r"nvlink"), "bridge"),
    (re.compile(r"nvl"), "nvl"),
    (re.compile(r"mega|hgx|dgx"), "sxm"),
    (re.compile(r"hbm\d?e?"), "hbm"),
    (re.compile(r"([1-9]\d{1,2})gi?b?"), "mem"),
]


def compact(name: str) -> str:
    s = _STRIP_WORDS.sub(" ", name.lower())
    return re.sub(r"[^a-z0-9]", "", s)


@dataclass(frozen=True)
class Resolved:
    """A resolved name: a SKU (one GPU) or a family (several SKUs, some parts unknown)."""

    id: str
    kind: str  # "sku" | "family"
    members: tuple[str, ...]
    memory_gib: float | None
    variant: str | None  # pcie | sxm | nvl | oam | other, None when unknown
    unknown: tuple[str, ...] = ()

    @property
    def is_family(self) -> bool:
        return self.kind == "family"

    def to_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "members": list(self.members),
                "memory_gib": self.memory_gib, "variant": self.variant, "unknown": list(self.unknown)}


class _Index:
    def __init__(self) -> None:
        gpus = load_gpus()
        self.by_model: dict[str, list[GPU]] = {}
        for g in gpus.values():
            self.by_model.setdefault(g.family, []).append(g)
        self.groups: dict[str, tuple[str, ...]] = {}
        for model, skus in self.by_model.items():
            self._add(model, skus)
            for mem in {g.memory_gib for g in skus}:
                self._add(f"{model}-{int(mem)}gb", [g for g in skus if g.memory_gib == mem])
            for var in {g.variant for g in skus}:
                self._add(f"{model}-{var}", [g for g in skus if g.variant == var])
        for g in gpus.values():
            self.groups[g.id] = (g.id,)
        self._add_declared_families(gpus)
        self.exact: dict[str, str] = {compact(k): k for k in self.groups}
        with (DATA_DIR / "gpu_aliases.csv").open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(ln for ln in fh if not ln.startswith("#")):
                self.exact[compact(row["alias"])] = row["id"]
        self.models = sorted(self.by_model, key=lambda m: -len(compact(m)))

    def _add(self, fid: str, skus: list[GPU]) -> None:
        self.groups.setdefault(fid, tuple(sorted(g.id for g in skus)))

    def _add_declared_families(self, gpus: dict[str, GPU]) -> None:
        """Families across models from data/gpu_families.csv ('rtx-6000' = Quadro RTX 6000 or RTX 6000 Ada).

        A bad row is a packaging error, not user input, so it fails loudly rather than being skipped.
        """
        with (DATA_DIR / "gpu_families.csv").open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(ln for ln in fh if not ln.startswith("#")):
                fid, skus = row["family"].strip(), row["members"].split()
                missing = [m for m in skus if m not in gpus]
                if missing or len(skus) < 2 or fid in self.groups:
                    raise ValueError(f"gpu_families.csv: bad family {fid!r} (unknown {missing}, or id already taken)")
                self.groups[fid] = tuple(sorted(skus))


@lru_cache(maxsize=1)
def _index() -> _Index:
    return _Index()


def _describe(gid: str) -> Resolved:
    idx = _index()
    gpus = load_gpus()
    members = idx.groups[gid]
    mems = {gpus[m].memory_gib for m in members}
    vars_ = {gpus[m].variant for m in members}
    unknown = []
    if len(mems) > 1:
        unknown.append("memory")
    if len(vars_) > 1:
        unknown.append("form_factor")
    return Resolved(
        id=gid if len(members) > 1 else members[0],
        kind="family" if len(members) > 1 else "sku",
        members=members,
        memory_gib=mems.pop() if len(mems) == 1 else None,
        variant=vars_.pop() if len(vars_) == 1 else None,
        unknown=tuple(unknown),
    )


def _parse(c: str) -> str | None:
    """Rule-based parse of a compact name into a group id, or None."""
    idx = _index()
    load_gpus()
    c = re.sub(r"^\d+x", "", c)
    for model in idx.models:
        key = compact(model)
        if not c.startswith(key) or (key == "v100s" and c.startswith("v100sxm")):
            continue
        rest = c[len(key):]
        mem = variant = None
        hbm = False
        while rest:
            for word in _IGNORABLE:
                if rest.startswith(word):
                    rest = rest[len(word):]
                    break
            else:
                for pat, what in _TOKENS:
                    m = pat.match(rest)
                    if not m:
                        continue
                    if what == "mem":
                        mem = float(m.group(1))
                    elif what == "hbm":
                        hbm = True
                    elif what in ("sxm", "pcie", "nvl"):
                        variant = what
                    rest = rest[m.end():]
                    break
                else:
                    return None
        skus = idx.by_model[model]
        if hbm and variant is None and model == "h100" and mem == 80:
            variant = "sxm"  # nvidia-smi spells the SXM part "H100 80GB HBM3", the PCIe part "H100 PCIe"
        cand = [g for g in skus if (mem is None or g.memory_gib == mem) and (variant is None or g.variant == variant)]
        if not cand:
            return None
        if len(cand) == 1:
            return cand[0].id
        if mem is not None and variant is None:
            return f"{model}-{int(mem)}gb"
        if variant is not None and mem is None:
            return f"{model}-{variant}"
        return model
    return None


_COUNT_LEAD = re.compile(r"^\s*\d{1,3}\s*(?:[x×]\s+|[*×]\s*|x(?=[a-z]))", re.IGNORECASE)
_COUNT_TAIL = re.compile(r"\s+(?:[x×*]\s*\d{1,3}|\d{1,3}\s*[x×*]|\(\s*[x×*]?\s*\d{1,3}\s*\))\s*$", re.IGNORECASE)
_SPLIT = re.compile(r"[\s\-_/,+()]+")
_MEM_TOKEN = re.compile(r"\d{2,3}(?:g|gb|gib)")
_VARIANT_TOKEN = re.compile(r"sxm\d?|pcie(?:gen\d)?|nvl|nvlink|hbm\d?e?|hgx|dgx|mega")


def reorder(name: str) -> str | None:
    """The name's tokens in the order the rules read them (model, memory, form), counts dropped.

    Vendors and users write the same GPU in any order: "H200 SXM 141GB", "SXM5 H100 80G",
    "8*A100 80G", "A100 80G PCIe x8". None when reordering changes nothing.
    """
    s = _STRIP_WORDS.sub(" ", name.lower())
    s = _COUNT_TAIL.sub(" ", _COUNT_LEAD.sub(" ", s))
    s = re.sub(r"(\d+)\s+(gb|gib|g)\b", r"\1\2", s)
    model, mem, var = [], [], []
    for tok in _SPLIT.split(s):
        if not tok or tok in _IGNORABLE:
            continue
        (mem if _MEM_TOKEN.fullmatch(tok) else var if _VARIANT_TOKEN.fullmatch(tok) else model).append(tok)
    out = " ".join(model + mem + var)
    return out if model and compact(out) != compact(name) else None


@lru_cache(maxsize=4096)
def resolve(name: str) -> Resolved:
    """Resolve any spelling to a SKU or family id; BadInput with the closest matches if unknown."""
    idx = _index()
    c = compact(str(name))
    if not c:
        raise BadInput("gpu: empty GPU name", field="gpu")
    gid = idx.exact.get(c)
    if gid is None:
        gid = _parse(c)
    if gid is None or gid not in idx.groups:
        r = reorder(str(name))
        if r is not None:
            gid = idx.exact.get(compact(r)) or _parse(compact(r))
    if gid is None or gid not in idx.groups:
        names = [k for k, v in idx.groups.items() if len(v) > 1 or k == v[0]]
        close = difflib.get_close_matches(str(name).lower(), names, n=4, cutoff=0.5)
        hint = Msg("err.gpu.closest", names=", ".join(close)) if close else Msg("err.gpu.see_list")
        raise BadInput(Msg("err.gpu.unknown", name=name, hint=hint), field="gpu", accepted=close)
    return _describe(gid)


def try_resolve(name: str) -> Resolved | None:
    try:
        return resolve(name)
    except BadInput:
        return None


def members(gpu_id: str) -> tuple[str, ...]:
    """The SKU ids a SKU or family id stands for."""
    return _index().groups.get(gpu_id, ())


def matches(offer_gpu_id: str, filter_id: str) -> bool:
    """True when every SKU the offer could be is inside the filter's family: 40 and 80 GB never mix."""
    want = set(members(filter_id))
    have = members(offer_gpu_id)
    return bool(have) and set(have) <= want


def narrow(gpu_id: str, memory_gib: float | None = None, variant: str | None = None) -> Resolved:
    """Narrow a family by facts learnt elsewhere (memory from a catalog, 'SXM4' in a SKU name).

    A fact that matches no member is ignored rather than trusted: the name wins over a hint.
    """
    gpus = load_gpus()
    cand = list(members(gpu_id))
    if memory_gib is not None:
        sub = [m for m in cand if abs(gpus[m].memory_gib - memory_gib) <= 0.07 * gpus[m].memory_gib]
        cand = sub or cand
    if variant is not None:
        sub = [m for m in cand if gpus[m].variant == variant]
        cand = sub or cand
    key = tuple(sorted(cand))
    for gid, mem in _index().groups.items():
        if mem == key and (len(mem) == 1 or gid != mem[0]):
            return _describe(gid)
    return _describe(gpu_id)


def group_of(skus: list[str] | tuple[str, ...]) -> Resolved | None:
    """The SKU or family id whose members are exactly these SKUs, or None if no id names that set."""
    key = tuple(sorted(set(skus)))
    for gid, mem in _index().groups.items():
        if mem == key and (len(mem) == 1 or gid != mem[0]):
            return _describe(gid)
    return None


def settle_memory(gpu_id: str, memory_gib: float | None, variant: str | None = None) -> tuple[Resolved, bool]:
    """Narrow a name by the per-GPU memory a catalog reports, read against each card's usable-to-label window.

    Returns (resolved, settled). A memory that fits no member of the name never moves the offer to another,
    larger card: the offer widens to the model (and variant, if known) with its memory unknown, settled=False.
    """
    gpus = load_gpus()
    cand = list(members(gpu_id))
    if variant is not None:
        cand = [m for m in cand if gpus[m].variant == variant] or cand
    if memory_gib is None:
        return group_of(cand) or _describe(gpu_id), True
    fit = [m for m in cand if gpus[m].memory_matches(memory_gib)]
    if fit:
        return group_of(fit) or _describe(gpu_id), True
    model = {gpus[m].family for m in cand}
    wide = [g.id for g in gpus.values() if g.family in model]
    var = {gpus[m].variant for m in cand}
    wide = [m for m in wide if gpus[m].variant in var] if len(var) == 1 else wide
    return group_of(wide) or group_of([g.id for g in gpus.values() if g.family in model]) or _describe(gpu_id), False


def group_ids() -> list[str]:
    return sorted(_index().groups)
