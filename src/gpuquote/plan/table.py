"""Offers as columns: what pricing needs, one NumPy array per fact, and each full row on demand.

A plan reads a handful of facts from every offer (GPU, node shape, links, price, billing, spot) and the
full row only for the offers it shows. Building these columns once - from dict rows in one pass, or
straight from a columnar source - is what lets a plan over a million offers stay in NumPy.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

SIMPLE_PER = {"second": 1, "minute": 60, "hour": 3600}


def is_purchase(row: dict) -> bool:
    """A bought server (its hourly price is a TCO), not a rental: the `form`, or the note a quote import leaves."""
    return row.get("form") == "purchase" or any(str(n).startswith("purchase") for n in row.get("notes") or [])


class OfferTable:
    """Columns: gpu_id, gpu_count, exclusive, intra, net_kind, net_gbps (config); rate, per_simple, gran, spot,
    provider, vcpus, st, eg, cov_st, cov_eg, is_quote (pricing); sku, region, purchase, nvme_gib, nvme_wr (sections,
    spot discounts, checkpoint speed). `row(i)` gives offer i as a full dict."""

    def __init__(self, columns: dict[str, np.ndarray], row: Callable[[int], dict]):
        self.c = columns
        self.row = row
        self.n = len(columns["rate"])

    def __len__(self) -> int:
        return self.n

    @classmethod
    def from_rows(cls, rows: list[dict]) -> OfferTable:
        n = len(rows)
        gpu, excl, intra, kind, prov = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
        cnt, gbps, rate, gran, vcpus, st, eg = (np.full(n, np.nan) for _ in range(7))
        simple, spot, cov_st, cov_eg, quote = (np.zeros(n, dtype=bool) for _ in range(5))
        sku, reg, buy, nvme, nvme_wr = [None] * n, [None] * n, np.zeros(n, dtype=bool), np.full(n, np.nan), np.full(
            n, np.nan)
        for i, r in enumerate(rows):
            gpu[i] = r["gpu_id"]
            cnt[i] = r["gpu_count"]
            e = r.get("gpu_exclusive", True)
            excl[i] = "true" if e is True else str(e)
            intra[i] = r.get("intra_node") or "unknown"
            net = r.get("inter_node") or {}
            kind[i] = net.get("kind") or "unknown"
            g = net.get("gbps_per_node")
            if g is not None:
                gbps[i] = g
            v = r.get("usd_per_node_hour")
            if v is not None:
                rate[i] = v
            p = r["price"]
            per = p["per"]
            simple[i] = per in SIMPLE_PER and not p.get("term_months")
            gran[i] = r.get("billing_granularity_s") or SIMPLE_PER.get(per, 3600)
            spot[i] = bool(r.get("spot"))
            prov[i] = r["provider"]
            c = r.get("vcpus")
            if c:
                vcpus[i] = c
            ex = r.get("extras")
            st[i] = ex.get("storage_usd_per_gb_month", 0.0) if ex else 0.0
            eg[i] = ex.get("egress_usd_per_gb", 0.0) if ex else 0.0
            cov = r.get("covers")
            if cov:
                cov_st[i] = "storage" in cov
                cov_eg[i] = "egress" in cov
            quote[i] = str(r.get("source") or "").startswith("quote:")
            sku[i], reg[i] = r.get("sku"), r.get("region")
            buy[i] = is_purchase(r)
            if r.get("nvme_gib") is not None:
                nvme[i] = r["nvme_gib"]
            if r.get("nvme_write_gbs"):
                nvme_wr[i] = r["nvme_write_gbs"]
        obj = lambda xs: np.array(xs, dtype=object)  # noqa: E731
        cols = {"gpu_id": obj(gpu), "gpu_count": cnt, "exclusive": obj(excl), "intra": obj(intra),
                "net_kind": obj(kind), "net_gbps": gbps, "rate": rate, "per_simple": simple, "gran": gran,
                "spot": spot, "provider": obj(prov), "vcpus": vcpus, "st": st, "eg": eg, "cov_st": cov_st,
                "cov_eg": cov_eg, "is_quote": quote, "sku": obj(sku), "region": obj(reg), "purchase": buy,
                "nvme_gib": nvme, "nvme_wr": nvme_wr}
        return cls(cols, rows.__getitem__)

    @classmethod
    def from_columns(cls, raw: dict[str, list], row: Callable[[int], dict]) -> OfferTable:
        """From stored columns (see store.queries.PLAN_COLUMNS); JSON fields are parsed only when not empty."""
        import json

        n = len(raw["gpu_id"])
        f = lambda xs: np.array([np.nan if x is None else x for x in xs], dtype=float)  # noqa: E731
        per = raw["price_per"]
        term = raw["term_months"]
        simple = np.array([p in SIMPLE_PER and not t for p, t in zip(per, term, strict=True)], dtype=bool)
        gran = np.array([g or SIMPLE_PER.get(p, 3600) for g, p in zip(raw["billing_granularity_s"], per, strict=True)],
                        dtype=float)
        st, eg = np.zeros(n), np.zeros(n)
        for i, ex in enumerate(raw["extras"]):
            if ex and ex != "{}":
                d = json.loads(ex)
                st[i] = d.get("storage_usd_per_gb_month", 0.0)
                eg[i] = d.get("egress_usd_per_gb", 0.0)
        cov_st, cov_eg = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        for i, cv in enumerate(raw["covers"]):
            if cv and cv != "[]":
                items = json.loads(cv)
                cov_st[i], cov_eg[i] = "storage" in items, "egress" in items
        obj = lambda xs: np.array(xs, dtype=object)  # noqa: E731
        cols = {"gpu_id": obj(raw["gpu_id"]), "gpu_count": f(raw["gpu_count"]),
                "exclusive": obj([e or "unknown" for e in raw["gpu_exclusive"]]),
                "intra": obj([x or "unknown" for x in raw["intra_node"]]),
                "net_kind": obj([x or "unknown" for x in raw["inter_node_kind"]]),
                "net_gbps": f(raw["inter_node_gbps"]),
                "rate": f(raw["usd_per_node_hour"]), "per_simple": simple, "gran": gran,
                "spot": np.array([bool(x) for x in raw["spot"]], dtype=bool), "provider": obj(raw["provider"]),
                "vcpus": f([v or None for v in raw["vcpus"]]), "st": st, "eg": eg, "cov_st": cov_st, "cov_eg": cov_eg,
                "is_quote": np.array([str(s or "").startswith("quote:") for s in raw["source"]], dtype=bool),
                "sku": obj(raw.get("sku") or [None] * n), "region": obj(raw.get("region") or [None] * n),
                "purchase": np.array([x == "purchase" for x in raw.get("form") or [None] * n], dtype=bool),
                "nvme_gib": f(raw.get("nvme_gib") or [None] * n),
                "nvme_wr": f(raw.get("nvme_write_gbs") or [None] * n)}
        return cls(cols, row)

    @classmethod
    def concat(cls, a: OfferTable, b: OfferTable) -> OfferTable:
        na = len(a)
        cols = {k: np.concatenate([a.c[k], b.c[k]]) for k in a.c}
        return cls(cols, lambda i: a.row(i) if i < na else b.row(i - na))

    def take(self, idx: np.ndarray) -> OfferTable:
        """The offers at these positions, in this order."""
        idx = np.asarray(idx, dtype=np.int64)
        return OfferTable({k: v[idx] for k, v in self.c.items()}, lambda i: self.row(int(idx[i])))

    def families(self) -> np.ndarray:
        """The GPU family of each offer's conservative SKU (computed once per table: the upgrade advice asks)."""
        fam = getattr(self, "_families", None)
        if fam is None:
            from gpuquote.hardware import load_gpus
            from gpuquote.plan.candidates import conservative_sku

            gpus = load_gpus()
            by_id: dict = {}
            for g in set(self.c["gpu_id"].tolist()):
                spec = gpus.get(conservative_sku(g) or g)
                by_id[g] = spec.family if spec is not None else None
            fam = self._families = np.array([by_id[g] for g in self.c["gpu_id"].tolist()] + [None],
                                            dtype=object)[: self.n]
        return fam

    def config_codes(self) -> tuple[np.ndarray, list[tuple]]:
        """A code per offer for its hardware configuration key, and the distinct keys (computed once per table:
        a server plans many jobs on the same cached table)."""
        got = getattr(self, "_codes", None)
        if got is None:
            got = self._codes = self._config_codes()
        return got

    def subset(self, key: object, pick: Callable[[OfferTable], np.ndarray]) -> OfferTable:
        """`take(pick(self))`, kept on this table under `key` (the upgrade advice asks for the same families)."""
        subs = self.__dict__.setdefault("_subsets", {})
        t = subs.get(key)
        if t is None:
            t = self.take(pick(self))
            t.shared = self.__dict__.get("shared", False)  # kept with its parent
            subs[key] = t
        return t

    def _config_codes(self) -> tuple[np.ndarray, list[tuple]]:
        c = self.c
        keys: dict[tuple, int] = {}
        gb = np.where(np.isnan(c["net_gbps"]), -1.0, c["net_gbps"])
        it = zip(c["gpu_id"].tolist(), c["gpu_count"].tolist(), c["exclusive"].tolist(), c["intra"].tolist(),
                 c["net_kind"].tolist(), gb.tolist(), strict=True)
        codes = np.fromiter((keys.setdefault(k, len(keys)) for k in it), dtype=np.int64, count=self.n)
        return codes, list(keys)
