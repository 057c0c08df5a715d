"""`gpuquote plan` as a buyer reads it: on-demand, spot and purchases apart; rows with region, cents and units."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from gpuquote.plan.assumptions import egress_prices, load
from gpuquote.plan.pricing import data_loading_factor
from gpuquote.plan.rows import fmt_hours
from gpuquote.service.plan import plan_job

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures" / "plan"
JOBS = ROOT / "examples" / "jobs"
QUOTES = ROOT / "examples" / "quotes"


def _job(name: str, **changes) -> dict:
    d = yaml.safe_load((JOBS / name).read_text())
    d.update(changes)
    return {k: v for k, v in d.items() if v is not None}


def test_qlora_plan_has_on_demand_and_spot_sections_and_prints_on_demand_first(cli):
    res = cli("plan", str(JOBS / "qlora-7b.yaml"), "--json")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    od, spot = d["sections"]["on_demand"], d["sections"]["spot"]
    assert od and spot and d["sections"]["purchase"] == []
    assert not any(r["spot"] for r in od) and all(r["spot"] for r in spot)
    # each section is ranked by the objective (cost)
    for rows in (od, spot):
        costs = [r["total_cost_usd"] for r in rows]
        assert costs == sorted(costs)
    assert d["rows"][0]["spot"]  # `rows` keeps its meaning: the cheapest overall is a spot offer here...
    res = cli("plan", str(JOBS / "qlora-7b.yaml"), "--top", "3", env={"COLUMNS": "150"})
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[1] == "On demand"  # ...but the table starts with on-demand
    spot_head = next(i for i, x in enumerate(lines) if x.startswith("Spot: interruptible"))
    assert spot_head > 5 and "capacity for 1 GPU(s)" in lines[spot_head] and "not guaranteed" in lines[spot_head]
    first_row = next(x for x in lines[2:] if x.startswith("│"))
    assert od[0]["provider"] in first_row and od[0]["region"][:8] in first_row


@pytest.mark.parametrize("objective", ["cost", "time", "balanced"])
@pytest.mark.parametrize("catalog", [True, False])
def test_a_purchase_never_ranks_first_for_a_7b_qlora(objective, catalog):
    job = _job("qlora-7b.yaml", hardware=None)
    d = plan_job(job, quotes=[str(QUOTES / "a100-quotes.yaml")], include_catalog=catalog, objective=objective,
                 top=30)
    buy = d["sections"]["purchase"]
    assert [r["offer_id"] for r in buy] == ["q5-buy-hgx"] and buy[0]["purchase"]
    assert d["rows"] and not d["rows"][0]["purchase"]
    flags = [r["purchase"] for r in d["rows"]]
    assert flags == sorted(flags)  # every rental before any purchase
    assert not any(r["purchase"] for s in ("on_demand", "spot") for r in d["sections"][s])
    b = buy[0]["purchase_basis"]
    assert b["utilisation"] == 1.0 and b["years"] == 4
    # bought for this job alone, the server costs its whole TCO (~CNY 1.45M + power and hosting), not the share
    assert b["tco_usd"] > 200_000 > 1_000 > buy[0]["total_cost_usd"] == b["job_share_usd"]


def test_the_purchase_would_rank_first_if_it_were_ranked_as_a_rental():
    """The rule above is not vacuous: at its lifetime cost per hour the purchase beats every rental quote."""
    d = plan_job(_job("qlora-7b.yaml", hardware=None), quotes=[str(QUOTES / "a100-quotes.yaml")],
                 include_catalog=False, objective="balanced", top=30)
    b = d["sections"]["purchase"][0]
    score = lambda r: r["total_cost_usd"] * r["time_hours"]  # noqa: E731
    assert score(b) < min(score(r) for r in d["rows"] if not r["purchase"])
    assert not d["rows"][0]["purchase"]


def test_purchase_section_prints_its_basis(cli):
    res = cli("plan", str(JOBS / "lora-70b.yaml"), "--quotes", str(QUOTES / "a100-quotes.yaml"), "--no-catalog",
              env={"COLUMNS": "150"})
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.index("On demand") < out.index("Purchase: a server bought")
    assert "q5-buy-hgx: utilisation 100% over 4 years; bought for this job alone it costs" in out


def test_table_has_a_region_column_and_cents_below_100_usd(cli, tmp_path):
    jf = tmp_path / "short-job.yaml"
    jf.write_text(yaml.safe_dump({"kind": "compute", "flops": 1.0e16, "precision": "fp16"}))
    args = ["plan", str(jf), "--quotes", str(FIX / "forty-cents.yaml"), "--no-catalog"]
    res = cli(*args, "--json")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["rows"][0]["total_cost_usd"] == pytest.approx(0.40)  # one started hour at 0.40
    res = cli(*args, env={"COLUMNS": "150"})
    assert res.returncode == 0, res.stderr
    header = next(x for x in res.stdout.splitlines() if "Provider" in x)
    assert "Region" in header
    row = next(x for x in res.stdout.splitlines() if x.startswith("│") and "small-cloud" in x)
    assert "eu-west-9" in row and " 0.40 " in row
    assert d["rows"][0]["time_hours"] < 0.05 and " 0.0 " not in row  # a short run's hours are not printed as 0.0


def test_gpus_option_and_the_jobs_hardware_gpus_are_honoured(cli):
    free = plan_job(_job("lora-70b.yaml", hardware=None), top=10)
    assert {r["gpus"] for r in free["rows"]} != {16}  # searched, the count varies
    forced = plan_job(_job("lora-70b.yaml", hardware=None), gpus=16, top=10)
    assert forced["rows"] and {r["gpus"] for r in forced["rows"]} == {16}
    assert all(r["nodes"] * r["gpus_per_node"] == 16 for r in forced["rows"])
    assert any("--gpus 16" in a for a in forced["assumptions"])
    stated = plan_job(_job("lora-70b.yaml", hardware={"gpus": 16}), top=10)
    assert stated["rows"] and {r["gpus"] for r in stated["rows"]} == {16}
    assert any("hardware.gpus" in a and "16" in a for a in stated["assumptions"])
    two = plan_job(_job("lora-70b.yaml", hardware=None), nodes=2, gpu="h100", top=5)
    assert two["rows"] and {r["nodes"] for r in two["rows"]} == {2}
    res = cli("plan", str(JOBS / "lora-70b.yaml"), "--gpus", "16", "--top", "3", "--json")
    assert res.returncode == 0, res.stderr
    assert {r["gpus"] for r in json.loads(res.stdout)["rows"]} == {16}
    res = cli("plan", str(JOBS / "lora-70b.yaml"), "--gpus", "0")
    assert res.returncode == 2 and "--gpus" in res.stderr


def test_serving_rows_have_labelled_token_costs_and_cost_per_1k_requests(cli):
    job = yaml.safe_load((JOBS / "serve-8b-online.yaml").read_text())
    d = plan_job(str(JOBS / "serve-8b-online.yaml"), gpu="l40s", spot=False, top=3)
    r = d["rows"][0]
    requests = job["requests_per_s"] * 730 * 3600
    out_tok = requests * job["output_tokens"]
    all_tok = requests * (job["output_tokens"] + job["prompt_tokens"])
    assert r["usd_per_1k_requests"] == pytest.approx(r["total_cost_usd"] / requests * 1000, rel=1e-9)
    assert r["usd_per_million_output_tokens"] == pytest.approx(r["total_cost_usd"] / out_tok * 1e6, rel=1e-9)
    assert r["usd_per_million_tokens"] == pytest.approx(r["total_cost_usd"] / all_tok * 1e6, rel=1e-9)
    assert r["tokens_counted"] == "input + output"
    res = cli("plan", str(JOBS / "serve-8b-online.yaml"), "--gpu", "l40s", "--top", "2", env={"COLUMNS": "160"})
    header = next(x for x in res.stdout.splitlines() if "Provider" in x)
    assert "$/M in+out" in header and "$/M out" in header and "$/1k req" in header


def test_aws_egress_is_priced_from_the_data_file():
    aws = egress_prices()["aws"]
    assert aws["usd_per_gb"] > 0 and aws["source"].startswith("https://aws.amazon.com/")
    job = _job("pretrain-8b-100b-tokens.yaml", hardware=None)
    d = plan_job(job, provider="aws", spot=False, top=3)
    assert d["rows"]
    for r in d["rows"]:
        assert r["breakdown"]["egress_usd"] == pytest.approx(job["data"]["egress_gb"] * aws["usd_per_gb"])
        assert not any(w.startswith("egress not priced") for w in r["warnings"])
        assert any("public internet rate" in w and aws["source"] in w for w in r["warnings"])
        assert r["total_cost_usd"] == pytest.approx(sum(r["breakdown"].values()), rel=1e-12)
    other = plan_job(job, provider="verda", spot=False, top=1)["rows"]  # not in the file: still a warning
    assert other and any(w.startswith("egress not priced") for w in other[0]["warnings"])


def test_not_ranked_is_grouped_by_reason(cli):
    d = plan_job(str(JOBS / "infer-70b-batch.yaml"), top=3)
    fp8 = [g for g in d["excluded_groups"] if "fp8 needs FP8" in g["reason"]]
    assert len(fp8) == 1 and len(fp8[0]["gpus"]) >= 3  # one sentence for every GPU without FP8
    assert fp8[0]["count"] == sum(v for k, v in d["excluded"].items() if "fp8 needs FP8" in k)
    assert sum(g["count"] for g in d["excluded_groups"]) == sum(d["excluded"].values())
    res = cli("plan", str(JOBS / "infer-70b-batch.yaml"), "--top", "2")
    line = next(x for x in res.stdout.splitlines() if x.startswith("Not ranked"))
    assert line.count("fp8 needs FP8") == 1


def test_small_hours_are_never_printed_as_zero():
    assert fmt_hours(0.04) == "2 min" and fmt_hours(0.004) == "14 s" and fmt_hours(2.25) == "2.2 h"
    d = plan_job(str(JOBS / "qlora-7b.yaml"), spot=True, top=10)
    ws = [w for r in d["rows"] for w in r["warnings"] if w.startswith("spot:")]
    assert ws and not any("0.0 h" in w for w in ws)


def test_spot_discounts_over_80_percent_and_long_multinode_spot_runs_are_flagged():
    job = _job("pretrain-8b-100b-tokens.yaml", hardware=None)
    d = plan_job(job, gpus=32, top=10)
    spot = d["sections"]["spot"]
    with_ref = [r for r in spot if r.get("spot_discount_pct") is not None]
    assert with_ref
    for r in with_ref:
        flagged = any(w.startswith("spot discount") for w in r["warnings"])
        assert flagged == (r["spot_discount_pct"] > 80)
        assert r["spot_discount_pct"] == pytest.approx(100 * (1 - r["usd_per_gpu_hour"]
                                                              / r["on_demand_usd_per_gpu_hour"]))
    assert any(r["spot_discount_pct"] > 80 for r in with_ref)
    for r in spot:
        long_multi = r["nodes"] > 1 and r["time_hours"] > 24
        assert any(w.startswith("spot multi-node") for w in r["warnings"]) == long_multi
    assert any(r["nodes"] > 1 and r["time_hours"] > 24 for r in spot)


def test_checkpoint_write_speed_follows_the_offers_nvme():
    job = _job("pretrain-8b-100b-tokens.yaml", hardware=None, tokens=2.0e9)
    d = plan_job(job, quotes=[str(FIX / "spot-nvme.yaml")], include_catalog=False, gpus=8)
    by = {r["offer_id"]: r for r in d["rows"]}
    st = load()["storage"]
    assert by["fast-nvme"]["checkpoint_write_gbs"] == 12
    assert by["nvme-capacity-only"]["checkpoint_write_gbs"] == st["nvme_write_gbs_local"]
    assert by["no-nvme-stated"]["checkpoint_write_gbs"] == st["nvme_write_gbs_default"]
    w = {k: by[k]["spot_interruptions"]["checkpoint_write_hours"] for k in by}
    assert w["fast-nvme"] < w["nvme-capacity-only"] < w["no-nvme-stated"]
    t = {k: by[k]["time_hours"] for k in by}
    assert t["fast-nvme"] < t["nvme-capacity-only"] < t["no-nvme-stated"]


def test_data_loading_is_a_smooth_function_of_vcpus_per_gpu():
    A = load()
    c = np.array([0.25, 0.5, 0.99, 1.0, 1.01, 2.0, 4.0, 16.0, np.nan])
    f = data_loading_factor(c, A)
    assert np.all(np.diff(f[:-1]) < 0)  # more vCPUs per GPU: always a little faster, never a step
    assert f[1] == pytest.approx(2.0, abs=0.1)  # 0.5 vCPU per GPU about doubles the time
    assert 1.1 < f[3] < 1.3  # 1 vCPU per GPU is no longer free
    left, right = f[3] - f[2], f[4] - f[3]  # no kink at the threshold (max(1, c0/c) has slopes -1 and 0 there)
    assert abs(left - right) < 0.05 * abs(left)
    assert f[6] < 1.01 and f[-1] == 1.0  # 4 per GPU ~free; unknown vCPUs: not penalised


def test_upgrade_advice_names_b200_where_it_finishes_for_less():
    job = _job("pretrain-8b-100b-tokens.yaml", hardware=None)
    # on-demand only, B200 no longer finishes this job for less than H100 (7.1k vs 6.5k USD): spot and on-demand
    d = plan_job(job, gpu="a100-80gb-sxm4", top=3)
    by = {a["trigger"]: a for a in d["upgrade_advice"]}
    assert by["compute"]["gpu"].startswith("h100")
    b = by["b200"]
    assert b["gpu"].startswith("b200") and b["total_cost_usd"] < by["compute"]["total_cost_usd"]
    assert "B200" in b["advice"] and by["compute"]["gpu"] in b["advice"]
    on_h100 = plan_job(job, gpu="h100", top=3)  # compute-bound on H100: B200, if it is cheaper
    adv = [a for a in on_h100["upgrade_advice"] if a["gpu"].startswith("b200")]
    assert adv and adv[0]["total_cost_usd"] < on_h100["rows"][0]["total_cost_usd"]


def test_an_imported_quote_keeps_its_nvme_write_speed_in_the_store(cli):
    """`import quotes` stores nvme.write_gbs (schema 4), so a plan from the store uses it as a quote file does."""
    res = cli("import", "quotes", str(FIX / "spot-nvme.yaml"))
    assert res.returncode == 0, res.stderr
    offers = json.loads(cli("offers", "--gpu", "h100", "--region", "us-east-1", "--json", "--limit", "500").stdout)
    by_offer = {o["offer_id"]: o for o in offers["offers"]}
    assert by_offer["fast-nvme"]["nvme_write_gbs"] == 12
    assert by_offer["nvme-capacity-only"]["nvme_write_gbs"] is None
    import csv
    import io

    csv_out = cli("offers", "--gpu", "h100", "--region", "us-east-1", "--csv", "--limit", "500").stdout
    rows = {r["offer_id"]: r for r in csv.DictReader(io.StringIO(csv_out))}
    assert float(rows["fast-nvme"]["nvme_write_gbs"]) == 12 and rows["nvme-capacity-only"]["nvme_write_gbs"] == ""
    job = _job("pretrain-8b-100b-tokens.yaml", hardware=None, tokens=2.0e9)
    d = plan_job(job, gpus=8, region="us-east-1", top=200)
    by = {r["offer_id"]: r for r in d["rows"]}
    st = load()["storage"]
    assert by["fast-nvme"]["checkpoint_write_gbs"] == 12
    assert by["nvme-capacity-only"]["checkpoint_write_gbs"] == st["nvme_write_gbs_local"]


def test_a_schema_3_store_gains_the_nvme_write_column_on_first_read(tmp_path, monkeypatch):
    """A store written by the previous version (schema 3, no nvme_write_gbs) is migrated when first read."""
    import sqlite3

    from gpuquote.service.offers import list_offers

    db = tmp_path / "old.sqlite"
    from gpuquote.config import EMBEDDED_SNAPSHOT

    db.write_bytes(EMBEDDED_SNAPSHOT.read_bytes())
    with sqlite3.connect(db) as c:
        c.execute("ALTER TABLE offers DROP COLUMN nvme_write_gbs")
        c.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    monkeypatch.setenv("GPUQUOTE_DB", str(db))
    got = list_offers(gpu="h100", limit=3)
    assert len(got["offers"]) == 3 and all(o["nvme_write_gbs"] is None for o in got["offers"])
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "4"
        assert "nvme_write_gbs" in [r[1] for r in c.execute("PRAGMA table_info(offers)")]
