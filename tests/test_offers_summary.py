"""Summary by GPU, paging, the in-memory catalog (equal to SQL), packaged examples, typed OpenAPI, CSV views."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from gpuquote.service import columns
from gpuquote.service.offers import list_offers, summarize_offers

ROOT = Path(__file__).resolve().parents[1]

CASES = [{}, {"gpu": "a100-80gb"}, {"gpu": "h100", "sort": "provider", "descending": True, "limit": 30, "offset": 10},
         {"sort": "node_price", "limit": 50, "offset": 3200}, {"sort": "vcpus", "descending": True, "limit": 100},
         {"region": "us-east", "spot": False}, {"provider": "aws,gcp", "min_gpus": 8, "max_price_usd": 3},
         {"sort": "sku", "limit": 20, "offset": 7}, {"sort": "fetched", "descending": True, "limit": 40, "offset": 40},
         {"sort": "region"}, {"sort": "ram", "offset": 5}, {"memory_gib": 80, "form_factor": "sxm",
                                                            "interconnect": "nvswitch"}]


@pytest.fixture
def memory_catalog():
    columns.enable(True)
    yield
    columns.enable(False)


@pytest.mark.parametrize("args", CASES)
def test_in_memory_catalog_answers_exactly_like_sql(args):
    columns.enable(False)
    want = list_offers(**args, facets=True)
    columns.enable(True)
    try:
        got = list_offers(**args, facets=True)
    finally:
        columns.enable(False)
    assert got == want


def test_offset_pages_through_the_sorted_result_without_gaps():
    whole = list_offers(gpu="a100", sort="price")["offers"]
    pages = [list_offers(gpu="a100", sort="price", limit=25, offset=o)["offers"] for o in range(0, len(whole), 25)]
    assert [o["offer_id"] for p in pages for o in p] == [o["offer_id"] for o in whole]
    p2 = list_offers(gpu="a100", limit=25, offset=25)
    assert p2["count"] == len(whole) and p2["offset"] == 25


def test_summary_rows_agree_with_the_offers_they_summarise():
    s = summarize_offers(gpu="a100")
    offers = list_offers(gpu="a100")["offers"]
    assert sum(r["offers"] for r in s["gpus"]) == s["count"] == len(offers)
    row = next(r for r in s["gpus"] if r["gpu_id"] == "a100-80gb-sxm4")
    mine = [o for o in offers if o["gpu_id"] == "a100-80gb-sxm4"]
    od = sorted(o["usd_per_gpu_hour"] for o in mine if not o["spot"] and o["usd_per_gpu_hour"] is not None)
    assert row["cheapest_on_demand_usd"] == od[0] and row["offers"] == len(mine)
    assert row["memory_gib"] == 80 and row["form_factor"] == "sxm"
    assert row["providers"] == len({o["provider"] for o in mine})
    assert row["freshest_fetched_at"] == max(o["fetched_at"] for o in mine)


def test_cli_summary_json_and_csv(cli):
    res = cli("offers", "--summary", "--gpu", "h100", "--json")
    assert res.returncode == 0, res.stderr
    import json

    body = json.loads(res.stdout)
    assert body == summarize_offers(gpu="h100")
    res = cli("offers", "--summary", "--csv")
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert len(rows) == len(summarize_offers()["gpus"]) and "cheapest_spot_usd" in rows[0]
    res = cli("offers", "--gpu", "a100", "--offset", "5", "--limit", "3", "--json")
    assert [o["offer_id"] for o in json.loads(res.stdout)["offers"]] == \
        [o["offer_id"] for o in list_offers(gpu="a100")["offers"][5:8]]


def test_bad_offset_is_one_line_naming_the_field(cli):
    res = cli("offers", "--offset", "-1")
    assert res.returncode == 2 and "offset" in res.stderr


def test_the_checkout_examples_are_the_packaged_ones():
    """src/gpuquote/examples/ is what an install ships (importlib.resources); examples/ is a link to it, so the
    paths the README and tests name can never drift from what `pip install .` carries."""
    import tomllib
    from importlib.resources import files

    pkg = ROOT / "src" / "gpuquote" / "examples"
    assert (ROOT / "examples").is_symlink() and (ROOT / "examples").resolve() == pkg.resolve()
    shipped = files("gpuquote") / "examples" / "jobs"
    assert {p.name for p in shipped.iterdir()} >= {"qlora-7b.yaml", "lora-70b.yaml", "bloom-176b.yaml"}
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "examples/*/*" in data["tool"]["setuptools"]["package-data"]["gpuquote"]


fastapi = pytest.importorskip("fastapi")


@pytest.fixture
def client(monkeypatch):
    from fastapi.testclient import TestClient

    from gpuquote.web.app import create_app

    monkeypatch.delenv("GPUQUOTE_EXAMPLES", raising=False)
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c
    columns.enable(False)


def test_examples_come_from_the_package_and_plan_runs_one(client, monkeypatch, tmp_path):
    from importlib.resources import files

    from gpuquote.web import common

    assert common.examples_dir() is None, "without GPUQUOTE_EXAMPLES the package's own files answer"
    assert common.examples() == common._read_examples(files("gpuquote") / "examples")
    body = client.get("/api/examples").json()
    assert {e["id"] for e in body["jobs"]} >= {"qlora-7b", "lora-70b"}
    assert {e["id"] for e in body["quotes"]} >= {"a100-quotes.yaml"}
    r = client.post("/api/plan", json={"example": "qlora-7b"})
    assert r.status_code == 200 and r.json()["rows"]


def test_openapi_types_every_200_body(client):
    spec = client.get("/openapi.json").json()
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            content = op["responses"]["200"].get("content", {})
            for media, c in content.items():
                assert c.get("schema", {}).get("type") != "string", f"{method} {path} {media}"
                assert "$ref" in c["schema"], f"{method} {path}: 200 has no model"


def test_summary_api_equals_cli_and_csv_views(client):
    r = client.get("/api/offers/summary", params={"gpu": "a100"})
    assert r.status_code == 200 and r.json() == summarize_offers(gpu="a100")
    s = client.get("/api/offers/summary", params={"format": "csv"})
    assert s.headers["content-type"].startswith("text/csv")
    assert s.text.count("\n") == len(summarize_offers()["gpus"]) + 1
    whole = client.get("/api/offers", params={"format": "csv", "spot": "false"})
    assert whole.text.count("\n") == list_offers(spot=False)["count"] + 1, "no 200-row cap on exports"
    q = (ROOT / "examples" / "quotes" / "a100-quotes.yaml").read_text()
    for path, body in (("/api/quote-check", {"quotes_text": q}), ("/api/tco", {"quotes_text": q}),
                       ("/api/plan", {"example": "qlora-7b"})):
        r = client.post(path, params={"format": "csv"}, json=body)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv"), (path, r.text[:200])
        assert len(list(csv.reader(io.StringIO(r.text)))) >= 2
    for path in ("/api/gpus", "/api/history?gpu=a100-80gb"):
        r = client.get(path + ("&" if "?" in path else "?") + "format=csv")
        assert r.status_code == 200 and r.text.count("\n") >= 2, path


def test_old_and_new_request_names_give_the_same_answer(client):
    q = (ROOT / "examples" / "quotes" / "a100-quotes.yaml").read_text()
    a = client.post("/api/quote-check", json={"text": q, "format": "yaml"})
    b = client.post("/api/quote-check", json={"quotes_text": q, "quotes_format": "yaml"})
    assert a.status_code == b.status_code == 200 and a.json() == b.json()


def test_json_and_static_files_are_gzipped(client):
    r = client.get("/api/offers", headers={"accept-encoding": "gzip"})
    assert r.headers.get("content-encoding") == "gzip"
    js = client.get("/static/vendor/plotly.min.js", headers={"accept-encoding": "gzip"})
    if js.status_code == 200:
        assert js.headers.get("content-encoding") == "gzip" and int(js.headers["content-length"]) < 2_000_000
    page = client.get("/offers")
    assert "plotly.min.js" not in page.text, "the chart library loads only where a chart is drawn"


def test_plan_permalink_reruns_the_same_request(client):
    r = client.post("/plan", data={"example": "qlora-7b", "job_yaml": "", "gpu": "h100", "top": "5"})
    assert r.status_code == 200, r.text[-500:]
    import re

    link = re.search(r'id="plan-permalink" data-permalink="([^"]+)"', r.text).group(1).replace("&amp;", "&")
    assert "gpu=h100" in link and "run=1" in link
    again = client.get(link)
    ids = re.findall(r'<tr class="[^"]*" data-offer-id="([^"]+)"', r.text)
    assert ids and re.findall(r'<tr class="[^"]*" data-offer-id="([^"]+)"', again.text) == ids


@pytest.mark.parametrize("args", CASES[:6])
def test_fast_offers_json_is_byte_identical_to_dumps(args, memory_catalog):
    from gpuquote.service.columns import offers_json
    from gpuquote.service.encoding import dumps

    data = list_offers(**args)
    assert offers_json(data) == dumps(data).encode()
    assert offers_json(data) == offers_json(list_offers(**args)), "the row cache answers the same bytes"
    lazy = list_offers(**args, rows=False)  # the API's path: no row dicts built, the same bytes
    assert len(lazy["offers"]) == 0 and offers_json(lazy) == dumps(data).encode()
    assert lazy["offers"].materialize() == data["offers"]


@pytest.mark.parametrize("ex,kw", [("qlora-7b", {}), ("lora-70b", {"gpu": "h100", "top": 5}),
                                   ("serve-8b-online", {"region": "us", "spot": False}),
                                   # offers tied on cost and time: both paths read the rows in pk order
                                   ("qlora-7b", {"gpu": "a100-80gb", "top": 10}),
                                   ("serve-8b-online", {"gpu": "a100-80gb", "top": 22}),
                                   ("pretrain-8b-100b-tokens", {"gpu": "a100", "top": 14})])
def test_plans_from_the_in_memory_catalog_equal_plans_from_sql(ex, kw):
    from gpuquote.service.plan import plan_job
    from gpuquote.web.common import parse_job

    job = parse_job(None, None, ex)
    columns.enable(False)
    want = plan_job(job, **kw)
    columns.enable(True)
    try:
        got = plan_job(job, **kw)
        again = plan_job(job, **kw)  # the cached table answers the same
    finally:
        columns.enable(False)
    assert got == want and again == want


def test_bad_history_value_is_shown_in_the_page_in_its_language(client):
    r = client.get("/history", params={"gpu": "not-a-gpu-xyz", "lang": "zh-CN"})
    assert r.status_code == 400 and 'data-field="gpu"' in r.text
    assert "输入有误" in r.text and 'value="not-a-gpu-xyz"' in r.text, "the input is kept"
    assert '<html lang="zh-CN">' in r.text


def test_cached_answers_stay_decodable_under_gzip(client):
    """The response cache replays headers; gzip (outside it) must not find its own header already there."""
    for _ in range(3):
        r = client.get("/api/offers/summary", params={"gpu": "h100"}, headers={"accept-encoding": "gzip"})
        assert r.status_code == 200 and r.json()["gpus"]
        plain = client.get("/api/offers/summary", params={"gpu": "h100"}, headers={"accept-encoding": "identity"})
        assert plain.headers.get("content-encoding") is None and plain.json() == r.json()


FP8_JOB = """kind: train
model: llama-3.1-8b
method: lora
precision: fp8
lora_rank: 16
seq_len: 4096
micro_batch: 1
global_batch_tokens: 262144
tokens: 1.0e8
"""


@pytest.mark.parametrize("gpu", ["", "h100"])
def test_plan_page_accepts_what_the_api_accepts(client, gpu):
    """An FP8 job with no hardware section, with no GPU or a family as the filter: ranked, as /api/plan ranks it."""
    import re

    api = client.post("/api/plan", json={"job_yaml": FP8_JOB, **({"gpu": gpu} if gpu else {})})
    assert api.status_code == 200 and api.json()["rows"]
    page = client.post("/plan", data={"job_yaml": FP8_JOB, "gpu": gpu})
    assert page.status_code == 200, re.findall(r'role="alert"[^>]*>(.*?)</div>', page.text, re.S)
    ids = re.findall(r'<tr class="[^"]*" data-offer-id="([^"]+)"', page.text)
    assert ids == [r["offer_id"] for r in api.json()["rows"]]
    assert 'id="plan-estimate"' in page.text, "the sizing uses the plan's GPU, never a hidden default"


@pytest.mark.parametrize("argv", [
    ["offers", "--gpu", "a100-80gb"], ["offers", "--gpu=h100", "--no-spot", "--limit", "5", "--json"],
    ["offers", "--provider", "aws", "--provider", "gcp", "--sort", "provider", "--desc", "--csv"],
    ["offers", "--summary", "--memory", "80"], ["offers", "--offset", "-1"], ["offers", "--interconnect", "ib"]])
def test_the_typer_free_start_answers_exactly_like_typer(argv, capsys):
    """cli/fast.py takes plain `offers` option lists; Typer parses the same argv to the same output."""
    from gpuquote.cli import build_app, main
    from gpuquote.cli.fast import parse_offers

    assert parse_offers(argv) is not None

    def run(fn) -> tuple[int, str, str]:
        try:
            fn()
            code = 0
        except SystemExit as e:
            code = e.code or 0
        out = capsys.readouterr()
        return code, out.out, out.err

    fast = run(lambda: main(argv))
    slow = run(lambda: main_via_typer(build_app(), argv))
    assert fast == slow


def main_via_typer(app, argv):
    from gpuquote.cli import fast as fast_mod
    from gpuquote.cli import main

    orig = fast_mod.try_offers
    fast_mod.try_offers = lambda a: False
    try:
        main(argv)
    finally:
        fast_mod.try_offers = orig


def test_options_the_fast_start_does_not_know_go_to_typer():
    from gpuquote.cli.fast import parse_offers
    from gpuquote.cli.offers_cmd import FLAGS, OPTIONS

    for argv in (["offers", "--help"], ["offers", "--gpu"], ["offers", "--limit", "x"], ["plan", "job.yaml"],
                 ["offers", "--sort", "price", "--sort", "gpu"]):
        assert parse_offers(argv) is None, argv
    import typer.main

    from gpuquote.cli import build_app

    offers = typer.main.get_command(build_app()).commands["offers"]
    names = {o for p in offers.params for o in (*p.opts, *getattr(p, "secondary_opts", []))}
    assert names == set(OPTIONS) | set(FLAGS), "fast.py and the typer command take the same options"


def test_offers_page_keeps_the_input_on_a_bad_value(client):
    r = client.get("/offers", params={"gpu": "a100", "region": "us-east", "provider": "aws", "max_price_usd": "-3",
                                      "lang": "zh-CN"})
    assert r.status_code == 400 and 'data-field="max_price_usd"' in r.text and "输入有误" in r.text
    for kept in ('value="a100"', 'value="us-east"', 'value="aws"', 'value="-3"'):
        assert kept in r.text, kept


def test_plan_page_takes_the_api_options_and_its_permalink_keeps_them(client):
    import re

    q = (ROOT / "examples" / "quotes" / "a100-quotes.yaml").read_text()
    body = {"example": "lora-70b", "quotes_text": q, "include_catalog": False, "rates": {"CNY": 0.15},
            "interruption_rate": 0.05}
    api = client.post("/api/plan", json=body)
    assert api.status_code == 200, api.text[:300]
    form = {"example": "lora-70b", "job_yaml": "", "quotes_yaml": q, "include_catalog": "false",
            "rates": "CNY=0.15", "interruption_rate": "0.05"}
    page = client.post("/plan", data=form)
    assert page.status_code == 200, re.findall(r'role="alert"[^>]*>(.*?)</div>', page.text, re.S)
    ids = re.findall(r'<tr class="[^"]*" data-offer-id="([^"]+)"', page.text)
    assert ids == [r["offer_id"] for r in api.json()["rows"]] and all(i.startswith("q") for i in ids)
    link = re.search(r'data-permalink="([^"]+)"', page.text).group(1).replace("&amp;", "&")
    assert "include_catalog=false" in link and "rates=CNY" in link
    assert re.findall(r'<tr class="[^"]*" data-offer-id="([^"]+)"', client.get(link).text) == ids


@pytest.mark.parametrize("ex,first,then", [
    ("lora-70b", {"budget_usd": 1e7}, {"budget_usd": 500.0}),
    ("qlora-7b", {"gpu": "a100"}, {"gpu": "a100", "deadline_hours": 2.0, "objective": "time"}),
    ("pretrain-8b-100b-tokens", {"top": 3}, {"objective": "balanced", "budget_usd": 2000.0, "top": 12}),
    ("serve-8b-online", {}, {"spot": True, "top": 4}),
])
def test_plans_reusing_the_servers_remembered_work_equal_fresh_sql_plans(ex, first, then):
    """The server keeps priced matrices, upgrade advice and checklist warnings per cached table; a plan with
    another budget, deadline, objective or top must still equal the plan the SQL path makes from scratch."""
    from gpuquote.service.plan import plan_job
    from gpuquote.web.common import parse_job

    job = parse_job(None, None, ex)
    columns.enable(True)
    try:
        plan_job(job, **first)  # fills the caches the next plan reuses
        got = plan_job(job, **then)
    finally:
        columns.enable(False)
    want = plan_job(job, **then)
    got.pop("store"), want.pop("store")
    assert got == want


def test_a_plan_in_another_currency_leaves_the_remembered_rows_untouched():
    """Rows are remembered per cached table and handed out as copies: CNY twins added to one answer must not
    appear in the next (web API: currency=CNY, then no currency)."""
    from gpuquote.web.api import PlanRequest, run_plan

    body = {"example": "lora-70b", "top": 9}
    want = run_plan(PlanRequest(**body))  # SQL path
    columns.enable(True)
    try:
        run_plan(PlanRequest(**body))
        cny = run_plan(PlanRequest(**body, currency="CNY"))
        after = run_plan(PlanRequest(**body))
    finally:
        columns.enable(False)
    assert any(k.endswith("_cny") for k in cny["rows"][0])
    assert not any(k.endswith("_cny") for r in after["rows"] for k in r)
    want.pop("store"), after.pop("store")
    assert after == want
