"""offers.comparable (bucketed, linear) agrees with likeforlike.compare (the pairwise rule) on every pair."""

from __future__ import annotations

import csv
import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuquote.offers import comparable
from gpuquote.offers.checklist import run_checklist
from gpuquote.offers.comparable import Checked, compare_all
from gpuquote.offers.likeforlike import compare
from gpuquote.offers.quotes import parse_quotes_text

HEAD = ["id", "vendor", "gpu", "gpu_count", "form", "exclusive", "intra_node", "cpu.model", "cpu.cores", "ram_gb",
        "nvme.capacity_tb", "network.kind", "network.gbps_per_node", "price.amount", "price.currency", "price.per",
        "billing", "spot", "covers"]

row = st.fixed_dictionaries({
    "gpu": st.sampled_from(["A100 80GB SXM4", "A100 80GB PCIe", "H100 80GB SXM5"]),
    "gpu_count": st.sampled_from(["1", "8"]),
    "form": st.sampled_from(["node_rental", "gpu_hour", "cloud_instance"]),
    "exclusive": st.sampled_from(["true", ""]),
    "intra_node": st.sampled_from(["nvswitch", "none", "pcie", ""]),
    "cpu.model": st.sampled_from(["", "Xeon Platinum 8480+"]),
    "cpu.cores": st.sampled_from(["", "8", "12", "64", "96", "128"]),
    "ram_gb": st.sampled_from(["", "128", "160", "1024", "2048"]),
    "nvme.capacity_tb": st.sampled_from(["", "0", "1", "3", "7.68"]),
    "network.kind": st.sampled_from(["", "none", "ib", "ethernet"]),
    "network.gbps_per_node": st.sampled_from(["", "10", "25", "400", "1600", "3200"]),
    "price.per": st.sampled_from(["hour", "month"]),
    "spot": st.sampled_from(["true", "false"]),
    "covers": st.sampled_from(["", "power;hosting"]),
})


def _checked(rows: list[dict]) -> list[Checked]:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=HEAD, lineterminator="\n")
    w.writeheader()
    for i, r in enumerate(rows):
        w.writerow({**r, "id": f"q{i}", "vendor": "v", "price.amount": str(1 + i), "price.currency": "USD",
                    "billing": r["price.per"]})
    parsed = parse_quotes_text(buf.getvalue(), "csv", "t.csv")
    out = []
    for q in parsed.quotes:
        f = q.facts()
        out.append(Checked(q.id, f, run_checklist(f)))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(row, min_size=2, max_size=14))
def test_buckets_agree_with_the_pairwise_rule(rows):
    checked = _checked(rows)
    res = compare_all(checked)
    for a in checked:
        want_ok = [b.id for b in checked if b is not a and not compare(a.id, a.facts, a.items, b.id, b.facts, b.items)]
        assert res.comparable_with[a.id] == want_ok
        want_diff = {b.id: compare(a.id, a.facts, a.items, b.id, b.facts, b.items)
                     for b in checked if b is not a and b.id not in want_ok}
        assert res.differs_from[a.id] == want_diff
        assert res.comparable_count[a.id] + res.differs_count[a.id] == len(checked) - 1


def test_large_file_is_capped_but_counts_every_pair(monkeypatch):
    monkeypatch.setattr(comparable, "FULL_PAIRS_MAX", 10)
    monkeypatch.setattr(comparable, "LIST_CAP", 3)
    monkeypatch.setattr(comparable, "DIFF_CAP", 2)
    base = {"gpu": "A100 80GB SXM4", "gpu_count": "8", "form": "node_rental", "exclusive": "true",
            "intra_node": "nvswitch", "cpu.model": "Xeon Platinum 8480+", "cpu.cores": "96", "ram_gb": "1024",
            "nvme.capacity_tb": "7.68",
            "network.kind": "ib", "network.gbps_per_node": "3200", "price.per": "hour", "spot": "false",
            "covers": "power;hosting"}
    rows = [dict(base) for _ in range(12)] + [dict(base, spot="true") for _ in range(6)]
    rows += [dict(base, **{"cpu.cores": "8"})]  # same bucket, CPU per GPU 12x below
    checked = _checked(rows)
    res = compare_all(checked)
    assert res.truncated
    assert res.comparable_count["q0"] == 11 and res.comparable_with["q0"] == ["q1", "q2", "q3"]
    assert res.differs_count["q0"] == 7
    # the nearest first: the same bucket (only CPU differs), then one quote of the other bucket
    assert list(res.differs_from["q0"]) == ["q18", "q12"]
    assert [d["name"] for d in res.differs_from["q0"]["q18"]] == ["cpu"]
    assert [d["name"] for d in res.differs_from["q0"]["q12"]] == ["spot"]
    # groups still rank every member, cheapest first
    on_demand = next(g for g in res.groups if g["config"]["spot"] == "on-demand")
    assert [r["id"] for r in on_demand["ranking"]] == [f"q{i}" for i in range(12)]
