"""Which quotes of one file are like for like, in time linear in the number of quotes.

`likeforlike.compare` is the rule for one pair. Applied to every pair of a 2,000-quote file it is four million
calls and an answer of gigabytes, so the file is cut first into buckets of quotes that agree exactly on what
must be equal (checklist items 1-5, spot, price form, network kind, every item stated); two quotes in different
buckets, or with an item missing, are never comparable. Inside a bucket the tolerance rules (CPU and RAM per GPU
within 25%, NVMe and network Gbps within 2x) are one NumPy comparison of the bucket against itself. The pairwise
rule stays the reference: a test checks that both give the same sets.

Small files (up to FULL_PAIRS_MAX quotes) keep every pair in `comparable_with` and `differs_from`. Larger ones
list at most LIST_CAP comparable ids and DIFF_CAP differing quotes per quote (the nearest first: same bucket,
then one quote of each other bucket), with the full counts in `comparable_count` and `differs_count`; `groups`
always ranks every member.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpuquote.offers.checklist import CheckItem, Facts
from gpuquote.offers.likeforlike import NETWORK_RATIO, NVME_RATIO, PER_GPU_TOLERANCE, compare, price_form

#: Up to this many quotes, every pair is listed (the answer grows as the square of the file).
FULL_PAIRS_MAX = 100
#: Above it, at most this many comparable ids and differing quotes are listed per quote.
LIST_CAP = 20
DIFF_CAP = 3
_A, _B = "\x00a\x00", "\x00b\x00"  # placeholder ids of a cached pair


@dataclass
class Checked:
    """One quote as the comparison needs it."""

    id: str
    facts: Facts
    items: list[CheckItem]
    usd_per_gpu_hour: float | None = None
    usd_per_node_hour: float | None = None
    unit: str | None = None


@dataclass
class Comparison:
    """Per quote id: comparable ids, differences by other id and the full counts; groups and unranked ids."""

    comparable_with: dict[str, list[str]] = field(default_factory=dict)
    differs_from: dict[str, dict[str, list[dict]]] = field(default_factory=dict)
    comparable_count: dict[str, int] = field(default_factory=dict)
    differs_count: dict[str, int] = field(default_factory=dict)
    groups: list[dict] = field(default_factory=list)
    unranked: list[str] = field(default_factory=list)
    truncated: bool = False


def _per_gpu(v: float | None, f: Facts) -> float:
    return v / f.gpu_count if v is not None and f.gpu_count else np.nan


def _h(v: object) -> object:
    """A hashable stand-in for a checklist value that keeps == (8 == 8.0)."""
    try:
        hash(v)
    except TypeError:
        return ("\x00repr", repr(v))
    return v


def _key(c: Checked) -> tuple | None:
    """What two comparable quotes share exactly; None when an item is missing or contradictory."""
    if any(i.status != "ok" for i in c.items):
        return None
    f = c.facts
    return (tuple(_h(i.value) for i in c.items if i.item <= 5), f.spot, price_form(f), f.net_kind)


def _fingerprint(c: Checked) -> tuple:
    """Everything `compare` reads: two quotes with equal fingerprints differ from any third one alike."""
    f = c.facts
    return (tuple((i.status, _h(i.value), i.name) for i in c.items), f.spot, price_form(f), f.cpu_cores,
            f.vcpus, f.gpu_count, f.ram_gib, f.nvme_gib, f.net_kind, f.net_gbps)


def _within(x: np.ndarray, ratio: float, missing_ok: bool) -> np.ndarray:
    """Pairs (i, j) whose values are within `ratio` of each other (NaN: not stated, passes when missing_ok)."""
    lo, hi = np.minimum.outer(x, x), np.maximum.outer(x, x)
    with np.errstate(invalid="ignore"):
        ok = np.where(lo > 0, hi <= lo * ratio, ~(hi > 0))
    if missing_ok:
        nan = np.isnan(x)
        ok |= nan[:, None] | nan[None, :]
    return ok


def _bucket_matrix(members: list[Checked]) -> np.ndarray:
    """m x m: which pairs of one bucket pass the tolerance rules (likeforlike.compare items 6-9)."""
    fs = [c.facts for c in members]
    cpu = np.array([_per_gpu(f.cpu_cores if f.cpu_cores is not None else f.vcpus, f) for f in fs], dtype=float)
    ram = np.array([_per_gpu(f.ram_gib, f) for f in fs], dtype=float)
    nvme = np.array([f.nvme_gib or 0.0 for f in fs], dtype=float)
    net = np.array([f.net_gbps if f.net_gbps else np.nan for f in fs], dtype=float)
    ok = _within(cpu, PER_GPU_TOLERANCE, True) & _within(ram, PER_GPU_TOLERANCE, True)
    ok &= _within(nvme, NVME_RATIO, False)
    if fs[0].net_kind != "none":
        ok &= _within(net, NETWORK_RATIO, True)
    return ok


class _Diffs:
    """compare() for a pair, cached by the pair's fingerprints (ids enter only the messages)."""

    def __init__(self, checked: list[Checked]) -> None:
        self.fp = [_fingerprint(c) for c in checked]
        self.checked = checked
        self.cache: dict[tuple, list[dict]] = {}

    def __call__(self, a: int, b: int) -> list[dict]:
        key = (self.fp[a], self.fp[b])
        got = self.cache.get(key)
        if got is None:
            ca, cb = self.checked[a], self.checked[b]
            got = self.cache[key] = compare(_A, ca.facts, ca.items, _B, cb.facts, cb.items)
        ia, ib = self.checked[a].id, self.checked[b].id
        return [dict(d, message=d["message"].replace(_A, ia).replace(_B, ib)) if "\x00" in d["message"] else d
                for d in got]


def _candidates(i: int, keys: list, strangers: list[int], firsts: list[int], loose: list[int]):
    """The quotes that quote i may be shown to differ from, nearest first, lazily (callers take a few).
    Friends are only ever in i's own bucket, and `strangers` already leaves them out."""
    yield from strangers
    for j in firsts:
        if keys[j] != keys[i] or keys[i] is None:
            yield j
    yield from loose


def compare_all(checked: list[Checked]) -> Comparison:
    """The like-for-like answer for a whole file (see the module docstring for the caps)."""
    n = len(checked)
    full = n <= FULL_PAIRS_MAX
    out = Comparison(truncated=not full)
    buckets: dict[tuple, list[int]] = {}
    keys = [_key(c) for c in checked]
    for i, k in enumerate(keys):
        if k is not None:
            buckets.setdefault(k, []).append(i)
    friends: list[np.ndarray] = [np.empty(0, dtype=int)] * n  # comparable indices, self excluded
    strangers: list[list[int]] = [[] for _ in range(n)]  # capped: the first few of the bucket that differ
    for idx in buckets.values():
        mat = _bucket_matrix([checked[i] for i in idx])
        np.fill_diagonal(mat, False)
        arr = np.array(idx)
        if not full:
            differ = ~mat
            np.fill_diagonal(differ, False)
        for row, i in enumerate(idx):
            friends[i] = arr[mat[row]]
            if not full:  # (no Python loop over the bucket per quote: a bucket can hold every quote)
                strangers[i] = arr[np.flatnonzero(differ[row])[:DIFF_CAP]].tolist()
    diffs = _Diffs(checked)
    firsts = [idx[0] for idx in buckets.values()]
    loose = [i for i, k in enumerate(keys) if k is None]
    for i, c in enumerate(checked):
        fr = friends[i]
        out.comparable_count[c.id] = len(fr)
        out.differs_count[c.id] = n - 1 - len(fr)
        shown = fr if full else fr[:LIST_CAP]
        out.comparable_with[c.id] = [checked[j].id for j in shown]
        if full:
            mine = set(fr.tolist())
            others = [j for j in range(n) if j != i and j not in mine]
        else:  # own bucket first, then one quote of each other bucket, then the unbucketed; never a friend
            others, seen = [], set()
            for j in _candidates(i, keys, strangers[i], firsts, loose):
                if j != i and j not in seen:
                    seen.add(j)
                    others.append(j)
                    if len(others) >= DIFF_CAP:
                        break
        out.differs_from[c.id] = {checked[j].id: diffs(i, j) for j in others}
    placed: set[int] = set()
    for i, c in enumerate(checked):
        if keys[i] is None:
            out.unranked.append(c.id)
            continue
        if i in placed:
            continue
        ids = sorted([i, *friends[i].tolist()])
        placed.update(ids)
        members = sorted((checked[j] for j in ids),
                         key=lambda x: (x.usd_per_gpu_hour is None, x.usd_per_gpu_hour or 0))
        vals = {it.name: it.value for it in c.items if it.item <= 5}
        vals.update(price_form=price_form(c.facts), spot="spot" if c.facts.spot else "on-demand")
        out.groups.append({"config": vals, "unit": c.unit,
                           "ranking": [{"id": m.id, "usd_per_gpu_hour": m.usd_per_gpu_hour,
                                        "usd_per_node_hour": m.usd_per_node_hour} for m in members],
                           "cheapest": members[0].id})
    return out
