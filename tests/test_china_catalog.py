"""China-cloud catalogs (Alibaba Cloud, Tencent Cloud): CNY restored, GPU spellings, slices, integrity (issue 13)."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime

import pytest
from tests.conftest import run_cli

from gpuquote.sources.china_catalog import CATALOG_CNY_USD, split_slice
from gpuquote.sources.skypilot import parse_path
from gpuquote.store.integrity import check

NOW = datetime(2026, 5, 7, tzinfo=UTC)


@pytest.fixture(scope="module")
def china(shared_dir):
    base = shared_dir / "data" / "china"
    out = {}
    for cloud in ("alicloud", "tencentcloud"):
        res = parse_path(base / cloud / "vms.csv", fetched_at=NOW)[0]
        with (base / cloud / "vms.csv").open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        out[cloud] = (res, rows)
    return out


def test_gn7e_prices_are_cny_restored_from_the_files_usd(china):
    res, rows = china["alicloud"]
    file_usd = {(r["Region"], r["InstanceType"]): float(r["Price"]) for r in rows}
    gn7e = [o for o in res.offers if o.sku.startswith("ecs.gn7e-") and not o.spot]
    assert len(gn7e) >= 10
    for o in gn7e:
        assert o.price.currency == "CNY" and o.price.per == "hour"
        assert o.price.amount == pytest.approx(file_usd[(o.region, o.sku)] / CATALOG_CNY_USD, abs=0.006)
        assert o.gpu_id == "a100-80gb-sxm4" and o.form_factor == "sxm"
        assert o.intra_node == ("none" if o.gpu_count == 1 else "nvlink")
        assert any("40 GiB" in n for n in o.notes)


def test_the_three_implausible_gn5i_rows_are_flagged_not_imported(china):
    res, _ = china["alicloud"]
    assert res.skip_reasons["implausible price (below 0.03 USD per GPU-hour)"] == 3
    flagged = res.provenance["flagged"]
    assert len(flagged) == 3 and all("gn5i-c12g1.6xlarge" in f for f in flagged)
    assert not any(o.sku == "ecs.gn5i-c12g1.6xlarge" for o in res.offers)
    # the store-level integrity check refuses such a price too
    row = {"offer_id": "alicloud:cn-beijing:ecs.gn5i-c12g1.6xlarge", "usd_per_gpu_hour": 0.0058, "spot": False,
           "gpu_id": "p4", "gpu_count": 2, "gpu_exclusive": "true", "price_amount": 0.084}
    assert any("implausible" in r for r in check([row], None))


def test_slices_are_shared_and_unknown_accelerators_are_counted(china):
    res, _ = china["alicloud"]
    assert split_slice("A10*1/6") == ("A10", pytest.approx(1 / 6)) and split_slice("T4/4") == ("T4", 0.25)
    slices = [o for o in res.offers if o.sku.startswith("ecs.sgn7i-vws-m4.")]
    assert slices and all(o.gpu_exclusive == "shared" and o.gpu_count == pytest.approx(1 / 6) for o in slices)
    assert res.skip_reasons["FPGA (Xilinx VU9P): not a GPU"] == 17
    assert res.skip_reasons["Ascend-class NPU (A910X): not in the GPU catalog"] == 2
    h = [o for o in res.offers if o.sku.startswith("ecs.ebmgn8v")]
    assert h and {o.gpu_id for o in h} == {"h20-96gb"} and all(o.intra_node == "nvlink" for o in h)
    assert {o.gpu_id for o in res.offers if o.sku.startswith("ecs.gn9gc")} == {"l20n-72gb"}


def test_tencent_has_no_spot_and_zixiao_is_skipped(china):
    res, _ = china["tencentcloud"]
    assert res.offers and not any(o.spot for o in res.offers)
    assert res.skip_reasons["Tencent Zixiao inference chip: not in the GPU catalog"] == 40
    gt4 = [o for o in res.offers if o.sku == "GT4.41XLARGE948"]
    assert gt4 and all(o.gpu_id == "a100-40gb" and o.inter_node.gbps_per_node == 50 for o in gt4)
    assert all(o.region.startswith(("ap-", "eu-", "na-", "sa-")) for o in res.offers)


def test_cli_offers_from_the_embedded_snapshot():
    r = run_cli("offers", "--gpu", "a100-80gb", "--provider", "alicloud", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    gn7e = [o for o in data["offers"] if o["sku"].startswith("ecs.gn7e-")]
    assert gn7e and all(o["price"]["currency"] == "CNY" for o in gn7e)
    assert all(o["form_factor"] == "sxm" and o["intra_node"] in ("none", "nvlink") for o in gn7e)
    assert all(o["freshness"] == "stale" for o in gn7e)
