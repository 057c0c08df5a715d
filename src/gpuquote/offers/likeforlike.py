"""Like for like: when two quotes may be ranked against each other, and which quotes may not be ranked at all.

The rule follows the seeds (a GPU buyer compares prices only once the machines line up): two quotes are
comparable when GPU SKU, GPU count, form factor, exclusivity, intra-node link (checklist items 1-5), spot or
on-demand and the price form (rent / term / buy) are equal; CPU cores and RAM per GPU are within 25% of each
other; local NVMe is within 2x (or absent on both); and the inter-node network is of the same kind and within 2x
in speed (single-node offers, network 'none' on both: ignored). Items 6-10 must also be stated on both
(`checklist.differences`). Every differing item is named with both values. docs/quotes.md states the rule.

A quote that contradicts the GPU catalog on items 1-5 (a 40 GB card sold as 80 GB, FP8 on an A100) is never
ranked nor imported as an offer: `contradictions` says which item and what the quote stated.
"""

from __future__ import annotations

from gpuquote.i18n import Msg, Text, join
from gpuquote.offers.checklist import CheckItem, Facts, differences

#: CPU cores and RAM per GPU: the larger at most 25% above the smaller.
PER_GPU_TOLERANCE = 1.25
#: Local NVMe and inter-node Gbps: the larger at most twice the smaller.
NVME_RATIO = 2.0
NETWORK_RATIO = 2.0


def price_form(f: Facts) -> str:
    """rent | term | buy: what the price pays for (a purchase is never compared with a rental)."""
    if f.form == "purchase":
        return "buy"
    return "term" if f.form == "reserved" or f.term_months else "rent"


def _num(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}".rstrip("0").rstrip(".")


def _apart(a: float, b: float, ratio: float) -> bool:
    lo, hi = sorted((a, b))
    return hi > lo * ratio if lo > 0 else hi > 0


def _diff(item: int, name: str, this: object, other: object, text: str) -> dict:
    return {"item": item, "name": name, "this": this, "other": other, "message": f"({item}) {name}: {text}"}


def _per_gpu(v: float | None, f: Facts) -> float | None:
    return v / f.gpu_count if v is not None and f.gpu_count else None


def compare(a_id: str, fa: Facts, ia: list[CheckItem], b_id: str, fb: Facts, ib: list[CheckItem]) -> list[dict]:
    """Why quote a is not like for like with quote b (empty: comparable); each entry has both values."""
    out = differences(a_id, ia, b_id, ib)
    ok = {x.item for x, y in zip(ia, ib, strict=True) if x.status == "ok" and y.status == "ok"}
    if fa.spot != fb.spot:
        sa, sb = ("spot" if s else "on-demand" for s in (fa.spot, fb.spot))
        out.append(_diff(10, "spot", sa, sb, f"{sa} vs {sb}"))
    pa, pb = price_form(fa), price_form(fb)
    if pa != pb:
        out.append(_diff(10, "price_form", pa, pb, f"{pa} vs {pb}"))
    if 6 in ok:
        ca = _per_gpu(fa.cpu_cores if fa.cpu_cores is not None else fa.vcpus, fa)
        cb = _per_gpu(fb.cpu_cores if fb.cpu_cores is not None else fb.vcpus, fb)
        if ca is not None and cb is not None and _apart(ca, cb, PER_GPU_TOLERANCE):
            out.append(_diff(6, "cpu", ca, cb, f"{_num(ca)} vs {_num(cb)} CPU cores per GPU (more than 25% apart)"))
    if 7 in ok:
        ra, rb = _per_gpu(fa.ram_gib, fa), _per_gpu(fb.ram_gib, fb)
        if ra is not None and rb is not None and _apart(ra, rb, PER_GPU_TOLERANCE):
            out.append(_diff(7, "ram", ra, rb, f"{_num(ra)} vs {_num(rb)} GB RAM per GPU (more than 25% apart)"))
    if 8 in ok:
        na, nb = fa.nvme_gib or 0.0, fb.nvme_gib or 0.0
        if _apart(na, nb, NVME_RATIO):
            out.append(_diff(8, "nvme", fa.nvme_gib, fb.nvme_gib,
                             f"{_num(na)} vs {_num(nb)} GB local NVMe (more than 2x apart, or one has none)"))
    if 9 in ok and not (fa.net_kind == "none" and fb.net_kind == "none"):
        va, vb = f"{fa.net_kind}/{_num(fa.net_gbps or 0)}", f"{fb.net_kind}/{_num(fb.net_gbps or 0)}"
        if fa.net_kind != fb.net_kind:
            out.append(_diff(9, "network", va, vb, f"{va} vs {vb} Gbps per node (not the same kind)"))
        elif fa.net_gbps and fb.net_gbps and _apart(fa.net_gbps, fb.net_gbps, NETWORK_RATIO):
            out.append(_diff(9, "network", va, vb, f"{va} vs {vb} Gbps per node (more than 2x apart)"))
    return out


def _stated(item: int, f: Facts) -> object:
    """What the quote itself said on a checklist item (the value a contradiction is about)."""
    if item == 1:
        v = {"gpu": f.gpu_name, "memory_gib": f.memory_gib_stated, "memory_bandwidth_gbs": f.bandwidth_gbs_stated,
             "precisions": list(f.precisions_claimed) or None}
        return {k: x for k, x in v.items() if x is not None}
    return {2: f.form_factor_stated, 3: f.gpu_count, 4: f.exclusive, 5: f.intra_node}.get(item)


def contradictions(f: Facts, items: list[CheckItem]) -> list[dict]:
    """Checklist items 1-5 on which the quote contradicts the GPU catalog, with the value it stated."""
    return [{"item": i.item, "name": i.name, "value": _stated(i.item, f), "message": i.message}
            for i in items if i.item <= 5 and i.status == "mismatch"]


def contradiction_text(quote_id: str, bad: list[dict]) -> str:
    """One line: which quote, which items, what they said (import's skip reason, plan's `Not ranked`)."""
    parts = join("; ", [Text(f"({b['item']}) {b['name']}: ", b["message"]) for b in bad])
    return Msg("quote.f.contradicts", id=quote_id, parts=parts)
