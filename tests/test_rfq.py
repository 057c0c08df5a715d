"""`gpuquote rfq`: the request for quotes, sized from the job, and its quote template round trip."""

from __future__ import annotations

import json
import re

import yaml

from conftest import ROOT

LORA = str(ROOT / "examples" / "jobs" / "lora-70b.yaml")
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_zh_cn_rfq_has_the_ten_checklist_questions_in_chinese_with_sized_values(cli):
    res = cli("rfq", LORA, "--lang", "zh-CN")
    assert res.returncode == 0, res.stderr
    md = res.stdout
    assert md.startswith("# 询价单")
    data = json.loads(cli("rfq", LORA, "--lang", "zh-CN", "--format", "json").stdout)
    from gpuquote.offers.checklist import CHECKLIST_ITEMS

    assert [(q["item"], q["name"]) for q in data["questions"]] == CHECKLIST_ITEMS
    section = md.split("## 请逐项确认")[1].split("\n## ")[0]
    lines = [ln for ln in section.splitlines() if re.match(r"^\d+\. ", ln)]
    assert [int(ln.split(".")[0]) for ln in lines] == list(range(1, 11))
    for ln, q in zip(lines, data["questions"], strict=True):
        assert ln == f"{q['item']}. {q['question']}"
        assert CJK.search(ln), ln
    # the sized values: the job's stated hardware (8x A100 80GB SXM4, one node) and the host sizing
    hw = data["hardware"]
    assert (hw["gpu"], hw["gpus"], hw["gpus_per_node"], hw["nodes"]) == ("a100-80gb-sxm4", 8, 8, 1)
    req = {r["key"]: r["value"] for r in data["requirements"]}
    assert "a100-80gb-sxm4" in lines[0] and "80 GiB" in lines[0]
    assert f"每节点 {hw['gpus_per_node']} 卡" in lines[2]
    assert f"{req['cpu']['cores']} 核" in lines[5]
    assert f"{req['ram']['ram_gib']} GiB" in lines[6]
    # RAM is at least the node's GPU memory (8 x 80 GiB), with the estimate's reason beside it
    assert req["ram"]["ram_gib"] >= 640
    ram_line = next(r for r in data["requirements"] if r["key"] == "ram")
    assert "640 GiB" in ram_line["reason"] and CJK.search(ram_line["reason"])
    # the estimate behind it: the memory per GPU the job needs is the estimate's
    est = json.loads(cli("estimate", LORA, "--json").stdout)
    assert abs(data["estimate"]["memory_per_gpu_gib"] - est["memory"]["total_per_gpu_gib"]) < 0.05
    assert abs(data["estimate"]["time_hours"] - est["time_hours"]) < 0.01


def test_yaml_template_passes_quote_check_once_a_price_is_filled_in(cli, tmp_path):
    res = cli("rfq", LORA, "--format", "yaml", "--lang", "en")
    assert res.returncode == 0, res.stderr
    template = tmp_path / "rfq.yaml"
    template.write_text(res.stdout, encoding="utf-8")
    # as sent, the price is the vendor's to fill: quote check refuses it, naming the field
    bad = cli("quote", "check", str(template))
    assert bad.returncode == 2 and "price.amount" in bad.stderr
    doc = yaml.safe_load(res.stdout)
    assert doc["quotes"][0]["price"]["amount"] is None
    filled = tmp_path / "answer.yaml"
    filled.write_text(res.stdout.replace("amount: null", "amount: 14.5", 1), encoding="utf-8")
    ok = cli("quote", "check", str(filled), "--json")
    assert ok.returncode == 0, ok.stderr
    q = json.loads(ok.stdout)["quotes"][0]
    status = {c["item"]: c["status"] for c in q["checklist"]}
    # everything the request pre-filled checks out; only the CPU model is left for the vendor
    assert status == {**{i: "ok" for i in range(1, 11)}, 6: "missing"}
    assert abs(q["usd_per_node_hour"] - 14.5) < 1e-9 and abs(q["usd_per_gpu_hour"] - 14.5 / 8) < 1e-9
    # and plan --quotes ranks the answer on the requested hardware in the RFQ's estimated time
    rfq = json.loads(cli("rfq", LORA, "--format", "json").stdout)
    plan = json.loads(cli("plan", LORA, "--quotes", str(filled), "--no-catalog", "--json").stdout)
    row = plan["rows"][0]
    assert row["offer_id"] == doc["quotes"][0]["id"]
    assert (row["gpus"], row["nodes"]) == (8, 1)
    assert abs(row["time_hours"] - rfq["estimate"]["time_hours"]) / rfq["estimate"]["time_hours"] < 0.01


def test_chinese_template_prices_in_cny_and_comments_in_chinese(cli):
    res = cli("rfq", LORA, "--format", "yaml", "--lang", "zh-CN")
    assert res.returncode == 0, res.stderr
    q = yaml.safe_load(res.stdout)["quotes"][0]
    assert q["price"]["currency"] == "CNY" and q["price"]["per"] == "hour"
    assert "供应商填写" in res.stdout


def test_multi_node_job_asks_for_rdma_with_the_estimate_as_reason(cli):
    res = cli("rfq", str(ROOT / "examples" / "jobs" / "pretrain-8b-100b-tokens.yaml"), "--format", "json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["hardware"]["nodes"] > 1
    net = next(r for r in data["requirements"] if r["key"] == "network")
    assert net["value"]["kind"] == "ib" and net["value"]["gbps_per_node"] >= 100
    assert "Gbps" in net["reason"] and "100 GbE" in net["reason"]
    tmpl = data["quote_template"]
    assert tmpl["network"] == {"kind": "ib", "gbps_per_node": net["value"]["gbps_per_node"]}


def test_offload_job_sizes_ram_for_the_optimizer_states(cli, tmp_path):
    job = tmp_path / "offload.yaml"
    job.write_text("kind: train\nmodel: llama-3.1-8b\nmethod: full\nprecision: bf16\nsharding: zero3\n"
                   "offload: optimizer\ntokens: 1.0e8\nhardware: {gpu: a100-80gb-sxm4, gpus: 8, gpus_per_node: 8}\n",
                   encoding="utf-8")
    data = json.loads(cli("rfq", str(job), "--format", "json").stdout)
    ram = next(r for r in data["requirements"] if r["key"] == "ram")
    assert "CPU offload of optimizer states" in ram["reason"]
    # AdamW in mixed precision keeps 12 bytes per parameter (fp32 master + two moments): ~90 GiB for 8B
    assert ram["value"]["ram_gib"] >= 8.0e9 * 12 / 2**30


def test_gpu_flag_overrides_the_stated_hardware(cli):
    data = json.loads(cli("rfq", LORA, "--gpu", "h200-141gb-sxm", "--format", "json").stdout)
    assert data["hardware"]["gpu"] == "h200-141gb-sxm" and data["basis"]["source"] == "flags"


def test_bad_rfq_input_is_one_line_exit_2(cli):
    for args, needle in ((("--format", "pdf"), "md, yaml, json"), (("--lang", "fr"), "en, zh-CN"),
                         (("--currency", "XYZ"), "currency"), (("--gpus", "0"), "--gpus")):
        res = cli("rfq", LORA, *args)
        assert res.returncode == 2, (args, res.stderr)
        assert res.stderr.strip().count("\n") == 0 and needle in res.stderr, res.stderr


def test_rfq_strings_exist_in_both_catalogs():
    from gpuquote.i18n import catalog

    en, zh = catalog("en"), catalog("zh-CN")
    mine = {k for k in en if k.startswith(("rfq.", "watch.", "web.rfq.", "web.watch."))}
    assert mine and mine <= set(zh)
    for k in mine:
        assert re.findall(r"\{(\w+)\}", en[k]) == re.findall(r"\{(\w+)\}", zh[k]) or \
            set(re.findall(r"\{(\w+)\}", en[k])) == set(re.findall(r"\{(\w+)\}", zh[k])), k


def test_without_stated_hardware_the_plan_best_on_demand_configuration_is_requested(cli, tmp_path):
    job = tmp_path / "nohw.yaml"
    job.write_text("kind: train\nmodel: llama-3.1-8b\nmethod: lora\nprecision: bf16\ntokens: 2.0e8\n", encoding="utf-8")
    data = json.loads(cli("rfq", str(job), "--format", "json").stdout)
    plan = json.loads(cli("plan", str(job), "--no-spot", "--top", "1", "--json").stdout)["rows"][0]
    assert data["basis"]["source"] == "plan" and data["basis"]["offer_id"] == plan["offer_id"]
    hw = data["hardware"]
    assert (hw["gpu"], hw["gpus"], hw["gpus_per_node"]) == (plan["estimated_as"], plan["gpus"], plan["gpus_per_node"])
    assert plan["offer_id"] in data["basis"]["text"]


def test_online_serving_is_asked_by_the_month(cli, tmp_path):
    job = str(ROOT / "examples" / "jobs" / "serve-8b-online.yaml")
    data = json.loads(cli("rfq", job, "--format", "json").stdout)
    billing = next(r for r in data["requirements"] if r["key"] == "billing")
    assert billing["value"] == {"per": "month", "granularity": "hour", "term_months": 1}
    assert data["quote_template"]["price"] == {"amount": None, "currency": "USD", "per": "month", "term_months": 1}
    text = cli("rfq", job, "--format", "yaml").stdout.replace("amount: null", "amount: 5200", 1)
    answer = tmp_path / "serve.yaml"
    answer.write_text(text, encoding="utf-8")
    res = cli("quote", "check", str(answer), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["quotes"][0]["checklist"][9]["status"] == "ok"
