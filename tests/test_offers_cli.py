"""`gpuquote offers` and `gpuquote import skypilot` as a user runs them, against a real SQLite store."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest


def _json(res):
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_filters_compose_and_sort(cli):
    d = _json(cli("offers", "--gpu", "h100", "--min-gpus", "8", "--interconnect", "nvswitch", "--no-spot",
                  "--provider", "aws,azure", "--max-price-usd", "20", "--json"))
    assert d["offers"]
    prices = [o["usd_per_gpu_hour"] for o in d["offers"]]
    assert prices == sorted(prices)
    for o in d["offers"]:
        assert o["gpu_count"] >= 8 and o["intra_node"] == "nvswitch" and not o["spot"]
        assert o["provider"] in ("aws", "azure") and o["usd_per_gpu_hour"] <= 20
        assert o["gpu_id"].startswith("h100")
    by_provider = _json(cli("offers", "--gpu", "h100", "--sort", "provider", "--json"))["offers"]
    names = [o["provider"] for o in by_provider]
    assert names == sorted(names)


def test_region_prefix_and_spot(cli):
    d = _json(cli("offers", "--region", "us-east", "--spot", "--json"))
    assert d["offers"] and all(o["spot"] and o["region"].lower().startswith("us-east") for o in d["offers"])


def test_csv_output(cli):
    res = cli("offers", "--gpu", "a100-80gb-sxm4", "--csv")
    assert res.returncode == 0
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert rows and all(r["gpu_id"] == "a100-80gb-sxm4" for r in rows)
    assert {"usd_per_gpu_hour", "usd_per_node_hour", "fetched_at", "source"} <= set(rows[0])


def test_table_output_mentions_store(cli):
    res = cli("offers", "--gpu", "a100-80gb", env={"COLUMNS": "200"})
    assert res.returncode == 0 and "a100-80gb" in res.stdout and "embedded snapshot" in res.stdout


@pytest.mark.parametrize("args,field", [
    (["offers", "--gpu", "Z9000"], "gpu"),
    (["offers", "--interconnect", "infiniband"], "--interconnect"),
    (["offers", "--sort", "colour"], "--sort"),
    (["offers", "--min-gpus", "-1"], "--min-gpus"),
    (["import", "skypilot", "/nonexistent/catalog"], "skypilot"),
    (["import", "nosuchsource", "x"], "source"),
])
def test_bad_input_is_one_line_exit_2(cli, args, field, isolated_home):
    res = cli(*args)
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and field in lines[0], res.stderr
    assert not isolated_home.exists()  # nothing written


def test_corrupt_catalog_file_writes_nothing(cli, tmp_path, isolated_home):
    f = tmp_path / "aws" / "vms.csv"
    f.parent.mkdir()
    f.write_bytes(b"\x00\xff garbage \x00")
    res = cli("import", "skypilot", str(f))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert not isolated_home.exists()


def test_unreadable_database_path(cli, tmp_path):
    bad = tmp_path / "notadb.sqlite"
    bad.write_text("this is not sqlite")
    res = cli("offers", env={"GPUQUOTE_DB": str(bad)})
    assert res.returncode == 2 and "not a readable gpuquote database" in res.stderr
    assert bad.read_text() == "this is not sqlite"
    res = cli("offers", env={"GPUQUOTE_DB": str(tmp_path)})
    assert res.returncode == 2 and "directory" in res.stderr
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, 0o500)
    try:
        res = cli("import", "skypilot", "/dev/null", env={"GPUQUOTE_DB": str(ro / "sub" / "x.sqlite")})
        assert res.returncode == 2
    finally:
        os.chmod(ro, 0o700)


def test_import_then_offers_reads_the_user_store(cli, shared_dir, isolated_home):
    src = shared_dir / "data" / "skypilot-catalog" / "anycloud-mirror-2026-05-20" / "lambda" / "vms.csv"
    res = cli("import", "skypilot", str(src), "--json")
    d = _json(res)["results"][0]
    assert d["status"] == "good" and d["imported"] > 300 and d["source"] == "skypilot:lambda"
    assert (isolated_home / "gpuquote.sqlite").exists()
    out = _json(cli("offers", "--provider", "lambda", "--gpu", "h100", "--json"))
    assert out["store"].endswith("gpuquote.sqlite")
    assert out["offers"] and all(o["fetched_at"] > "2026-05-20" for o in out["offers"])  # the new snapshot
    # the first write copied the embedded snapshot: other providers are still there
    assert len(_json(cli("offers", "--gpu", "a100-80gb", "--json"))["providers"]) >= 6


def test_memory_and_form_factor_filters(cli):
    d = _json(cli("offers", "--gpu", "a100", "--memory", "80", "--form-factor", "sxm", "--json"))
    assert d["offers"] and {o["gpu_id"] for o in d["offers"]} == {"a100-80gb-sxm4"}
    res = cli("offers", "--form-factor", "nvl4")
    assert res.returncode == 2 and "--form-factor" in res.stderr


def test_offer_forms_constant_matches_the_model_and_the_fast_listing_skips_pydantic():
    import subprocess
    import sys
    import typing

    from gpuquote.offers.kinds import OFFER_FORMS
    from gpuquote.offers.model import OfferForm

    assert typing.get_args(OfferForm) == OFFER_FORMS
    code = ("import sys, runpy; sys.argv = ['gpuquote', 'offers', '--gpu', 'a100-80gb', '--limit', '3']\n"
            "try:\n    runpy.run_module('gpuquote', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "heavy = ('pydantic', 'typer', 'numpy', 'sqlalchemy', 'yaml', 'httpx', 'rich')\n"
            "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "a100" in r.stdout.lower()
    assert r.stderr.strip().splitlines()[-1] == "[]", r.stderr
