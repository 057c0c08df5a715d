"""`gpuquote plan`: the lowest hourly price is not the cheapest way to finish a job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuquote.estimate import load_job
from gpuquote.plan import PlanOptions, plan
from gpuquote.service.plan import plan_job

FIX = Path(__file__).parent / "fixtures" / "plan"
JOBS = Path(__file__).resolve().parents[1] / "examples" / "jobs"

MULTINODE_JOB = {"kind": "train", "model": "llama-2-70b", "method": "full", "precision": "bf16",
                 "sharding": "zero3", "seq_len": 4096, "global_batch_tokens": 4.0e6, "tokens": 2.0e9}


def _job_without_hardware(name: str) -> dict:
    """An example job with its hardware section dropped (a stated hardware.gpus fixes the GPU count)."""
    import yaml

    d = yaml.safe_load((JOBS / name).read_text())
    d.pop("hardware", None)
    return d


def _by_id(rows):
    return {r["offer_id"]: r for r in rows}


def test_nvswitch_infiniband_beats_cheaper_pcie_25gbe_on_a_multinode_job():
    # pure FSDP (TP1 PP1 stated): full-shard all-gathers cross the network every micro-batch
    fsdp = {**MULTINODE_JOB, "tensor_parallel": 1, "pipeline_parallel": 1}
    d = plan_job(fsdp, quotes=[str(FIX / "multinode-quotes.yaml")], include_catalog=False)
    rows = d["rows"]
    assert [r["offer_id"] for r in rows] == ["hgx-sxm-ib", "pcie-25gbe"]
    sxm, pcie = rows
    assert sxm["nodes"] > 1 and pcie["nodes"] > 1
    assert pcie["usd_per_gpu_hour"] < sxm["usd_per_gpu_hour"]  # cheaper per hour...
    assert pcie["total_cost_usd"] > sxm["total_cost_usd"]  # ...dearer to finish
    assert pcie["time_hours"] > sxm["time_hours"]
    assert any("network-bound across nodes: 25 Gb/s ethernet" in w for w in pcie["warnings"])
    assert any("PCIe-only" in w for w in pcie["warnings"])
    assert not any("network-bound" in w for w in sxm["warnings"])
    # left free, the layout search keeps the thin network for pipeline sends: the gap shrinks
    free = _by_id(plan_job(MULTINODE_JOB, quotes=[str(FIX / "multinode-quotes.yaml")], include_catalog=False)["rows"])
    assert free["pcie-25gbe"]["time_hours"] / free["hgx-sxm-ib"]["time_hours"] < pcie["time_hours"] / sxm["time_hours"]
    assert free["pcie-25gbe"]["layout"]["pp"] > 1


def test_single_cheap_gpu_beats_an_8_gpu_node_for_7b_qlora():
    d = plan_job(_job_without_hardware("qlora-7b.yaml"), quotes=[str(FIX / "small-vs-node.yaml")],
                 include_catalog=False)
    assert d["rows"][0]["offer_id"] == "one-4090" and d["rows"][0]["gpus"] == 1
    node = _by_id(d["rows"])["hgx-node"]
    assert node["total_cost_usd"] > d["rows"][0]["total_cost_usd"] and node["time_hours"] < d["rows"][0]["time_hours"]
    assert node["pareto"] and d["rows"][0]["pareto"]  # both on the front: one is cheaper, one faster


@pytest.mark.parametrize("tokens,winner", [(2.0e7, "hourly"), (1.3e10, "monthly")])
def test_monthly_quotes_win_only_when_the_job_is_long_enough(tokens, winner):
    job = {"kind": "train", "model": "llama-2-7b", "method": "lora", "precision": "bf16", "seq_len": 2048,
           "micro_batch": 4, "tokens": tokens}
    d = plan_job(job, quotes=[str(FIX / "monthly-vs-hourly.yaml")], include_catalog=False,
                 rate=["CNY=0.15"])  # 7300 CNY = 1095 USD per month = 1.5 USD/h at full use
    rows = _by_id(d["rows"])
    assert d["rows"][0]["offer_id"] == winner, [(r["offer_id"], r["time_hours"], r["total_cost_usd"])
                                                 for r in d["rows"]]
    m = rows["monthly"]
    months = -(-m["time_hours"] // 730)
    assert m["total_cost_usd"] == pytest.approx(months * 7300 * 0.15, rel=1e-6)  # whole months are paid


def test_rows_are_self_consistent_on_the_embedded_catalog():
    d = plan_job(str(JOBS / "lora-70b.yaml"), top=25)
    tokens = load_job(str(JOBS / "lora-70b.yaml")).tokens
    assert d["rows"] and tokens
    for r in d["rows"]:
        assert r["total_cost_usd"] == pytest.approx(sum(r["breakdown"].values()), abs=0.011)
        compute = r["time_hours"] * r["gpus"] * r["usd_per_gpu_hour"]
        assert r["breakdown"]["compute_usd"] == pytest.approx(compute, rel=1e-4)
        overheads = sum(v for k, v in r["breakdown"].items() if k != "compute_usd")
        assert r["total_cost_usd"] == pytest.approx(compute + overheads, rel=1e-4, abs=0.011)
        tb = r["time_breakdown"]
        assert r["time_hours"] == pytest.approx(tb["estimate_hours"] + tb["data_loading_hours"]
                                                + tb["spot_overhead_hours"], rel=1e-6)
        assert r["usd_per_billion_tokens"] == pytest.approx(r["total_cost_usd"] / (tokens / 1e9), rel=1e-3)
    costs = [r["total_cost_usd"] for r in d["rows"]]
    assert costs == sorted(costs)
    front = [(p["total_cost_usd"], p["time_hours"]) for p in d["pareto_front"]]
    assert all(a[1] > b[1] for a, b in zip(front, front[1:], strict=False))  # cheaper <=> slower along the front


def test_spot_rows_pay_for_interruptions():
    d = plan_job(str(JOBS / "pretrain-8b-100b-tokens.yaml"), gpu="h100", spot=True, top=5)
    r = d["rows"][0]
    assert r["spot"] and r["spot_interruptions"]["time_factor"] > 1.0
    assert r["time_breakdown"]["spot_overhead_hours"] > 0
    assert r["spot_interruptions"]["checkpoint_interval_hours"] > 0
    higher = plan_job(str(JOBS / "pretrain-8b-100b-tokens.yaml"), gpu="h100", spot=True, top=5,
                      interruption_rate=0.2)["rows"][0]
    assert higher["time_hours"] > r["time_hours"]


def test_deadline_adds_nodes_and_nothing_fits_is_explained():
    PRETRAIN = _job_without_hardware("pretrain-8b-100b-tokens.yaml")  # noqa: N806 (its GPU count is searched)
    base = plan_job(PRETRAIN, gpu="h100-80gb-sxm5", spot=False, top=3)
    fastest_cheap = base["rows"][0]
    d = plan_job(PRETRAIN, gpu="h100-80gb-sxm5", spot=False,
                 deadline_hours=fastest_cheap["time_hours"] / 3, top=3)
    assert d["rows"] and all(r["time_hours"] <= fastest_cheap["time_hours"] / 3 for r in d["rows"])
    assert d["rows"][0]["gpus"] > fastest_cheap["gpus"]
    none = plan_job(PRETRAIN, gpu="h100-80gb-sxm5", deadline_hours=0.5)
    assert none["rows"] == [] and none["nothing_fits"]["constraint"] == "deadline"
    assert none["nothing_fits"]["closest"]["time_hours"] > 0.5
    poor = plan_job(PRETRAIN, gpu="h100-80gb-sxm5", budget_usd=10)
    assert poor["nothing_fits"]["constraint"] == "budget"


def test_upgrade_advice_for_a_compute_bound_a100_job():
    PRETRAIN = _job_without_hardware("pretrain-8b-100b-tokens.yaml")  # noqa: N806
    d = plan_job(PRETRAIN, gpu="a100-80gb-sxm4", spot=False, top=3)
    assert d["rows"][0]["bound"] == "compute"
    adv = [a for a in d["upgrade_advice"] if a["trigger"] == "compute"]
    assert adv and adv[0]["gpu"].startswith("h100") and adv[0]["time_hours"] > 0


def test_online_serving_is_priced_per_month_with_servers():
    d = plan_job(str(JOBS / "serve-8b-online.yaml"), gpu="l40s", spot=False, top=3)
    r = d["rows"][0]
    assert r["monthly_cost_usd"] == pytest.approx(r["total_cost_usd"], rel=1e-6)
    assert r["servers"] >= 1 and r["usd_per_million_tokens"] > 0


def test_offers_share_configurations():
    d = plan_job(str(JOBS / "qlora-7b.yaml"), top=1)
    assert 50 < d["configurations"] < d["candidates"] / 4  # one estimate per configuration, not per offer


def test_cli_plan_json_equals_service_and_bad_input(cli):
    res = cli("plan", str(JOBS / "qlora-7b.yaml"), "--quotes", str(FIX / "small-vs-node.yaml"), "--no-catalog",
              "--json")
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert d["rows"][0]["offer_id"] == "one-4090"
    res = cli("plan", str(JOBS / "qlora-7b.yaml"), "--objective", "cheapest")
    assert res.returncode == 2 and "--objective" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    res = cli("plan", str(JOBS / "pretrain-8b-100b-tokens.yaml"), "--gpu", "h100", "--deadline-hours", "0.1")
    assert res.returncode == 0 and "Nothing fits" in res.stdout


def test_plan_library_call_directly():
    job = load_job(str(JOBS / "qlora-7b.yaml"))
    assert plan(job, [], PlanOptions())["nothing_fits"]["constraint"] == "offers"


def test_compute_job_is_priced_per_exaflop():
    job = {"kind": "compute", "flops": 1.0e21, "precision": "fp64"}
    d = plan_job(job, quotes=[str(FIX / "small-vs-node.yaml")], include_catalog=False)
    assert d["rows"]
    for r in d["rows"]:
        assert r["usd_per_exaflop"] == pytest.approx(r["total_cost_usd"] / 1000.0, rel=1e-3)
    # FP64: the A100 (19.5 TFLOPS FP64 tensor) finishes far sooner than a GeForce card
    by = _by_id(d["rows"])
    assert by["hgx-node"]["time_hours"] < by["one-4090"]["time_hours"]


def test_columnar_catalog_read_plans_like_dict_rows():
    """service.plan reads the catalog as columns; planning the same offers as dict rows gives the same ranking."""
    from gpuquote.store import OfferFilter, embedded_reader, query_offers

    job = load_job(str(JOBS / "lora-70b.yaml"))
    rows, _ = query_offers(embedded_reader(), OfferFilter(gpu_ids=None))
    by_dicts = plan(job, rows, PlanOptions(top=8))
    by_columns = plan_job(str(JOBS / "lora-70b.yaml"), top=8)
    assert [r["offer_id"] for r in by_columns["rows"]] == [r["offer_id"] for r in by_dicts["rows"]]
    assert [r["total_cost_usd"] for r in by_columns["rows"]] == [r["total_cost_usd"] for r in by_dicts["rows"]]
