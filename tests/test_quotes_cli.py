"""`gpuquote quote check` and `gpuquote tco` as a user runs them (real subprocess, real files)."""

from __future__ import annotations

import json
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "quotes"
YAML = str(EXAMPLES / "a100-quotes.yaml")


def test_quote_check_json_contract(cli):
    r = cli("quote", "check", YAML, "--json", "--utilisation", "0.8", "--rate", "CNY=0.14")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["utilisation"] == 0.8 and d["errors"] == []
    assert d["rates"]["CNY"] == {"currency": "CNY", "usd_per_unit": 0.14, "date": "override", "source": "--rate"}
    by = {q["id"]: q for q in d["quotes"]}
    q3 = by["q3-hgx-monthly"]
    for key in ("id", "usd_per_gpu_hour", "usd_per_node_hour", "price", "rate", "checklist", "comparable_with",
                "differs_from"):
        assert key in q3
    assert q3["usd_per_gpu_hour"] == 98000 * 0.14 / 730 / 0.8 / 8
    assert q3["price"] == {"amount": 98000.0, "currency": "CNY", "per": "month", "term_months": 12.0}
    assert [c["item"] for c in q3["checklist"]] == list(range(1, 11))
    assert all(set(c) >= {"item", "name", "status", "message"} for c in q3["checklist"])
    # q3 and q4 are both 8x A100 80GB SXM4 HGX terms, but 8 vs 16 cores and 128 vs 256 GB RAM per GPU and
    # InfiniBand vs RoCE: not like for like (offers.likeforlike); the two 1-GPU monthly servers are
    assert {d["name"] for d in q3["differs_from"]["q4-hgx-monthly"]} == {"cpu", "ram", "network"}
    assert "q2-cloud-b" in by["q1-cloud-a"]["comparable_with"] and "q9-vague" in q3["differs_from"]
    assert by["q6-usd-hourly"]["rate"]["date"] != "override"  # USD: identity rate, dated
    statuses = {c["name"]: c["status"] for c in by["q10-too-good"]["checklist"]}
    assert statuses["memory"] == statuses["intra_node"] == "mismatch"
    assert by["q8-mig-slice"]["comparable_with"] == []


def test_quote_check_table_and_chinese(cli):
    r = cli("quote", "check", YAML)
    assert r.returncode == 0, r.stderr
    assert "q10-too-good" in r.stdout and "NVSwitch" in r.stdout and "730 h" in r.stdout
    zh = cli("quote", "check", YAML, env={"GPUQUOTE_LANG": "zh-CN"})
    assert zh.returncode == 0 and "检查清单" in zh.stdout


def test_bad_quotes_one_line_each_good_ones_still_reported(cli):
    r = cli("quote", "check", str(EXAMPLES / "bad-quotes.yaml"), "--json")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 6
    for qid, field in [("negative-price", "price.amount"), ("text-price", "price.amount"),
                       ("bad-currency", "price.currency"), ("bad-per", "price.per"), ("unknown-gpu", "gpu"),
                       ("zero-gpus", "gpu_count")]:
        line = next(ln for ln in lines if f"'{qid}'" in ln)
        assert f"{field}: " in line and "accepted" in line
    d = json.loads(r.stdout)
    assert [q["id"] for q in d["quotes"]] == ["good-one"] and len(d["errors"]) == 6


def test_file_and_flag_errors_are_one_line_exit_2(cli, tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("quotes:\n  - id: a\n    price: {amount: 1\n")
    cases = [("quote", "check", str(bad)), ("quote", "check", YAML, "--utilisation", "0"),
             ("quote", "check", YAML, "--rate", "CNY"), ("quote", "check", str(tmp_path / "none.yaml")),
             ("tco", YAML, "--buy", "q3-hgx-monthly")]
    for args in cases:
        r = cli(*args)
        assert r.returncode == 2, args
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "YAML syntax error" in cli(*cases[0]).stderr
    assert "utilisation" in cli(*cases[1]).stderr
    assert "q5-buy-hgx" in cli(*cases[4]).stderr  # names the accepted purchase ids


def test_tco_buy_vs_rent(cli):
    r = cli("tco", "--buy", "q5-buy-hgx", "--rent", "q3-hgx-monthly", "--rent", "q6-usd-hourly", YAML, "--json",
            "-u", "0.7")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    (b,) = d["purchases"]
    assert b["tco"]["years"] == 4 and b["tco"]["utilisation"] == 0.7
    assert [s["utilisation"] for s in b["sweep"]] == [0.25, 0.5, 0.7, 0.75, 1.0]
    vs = {v["rent_id"]: v for v in b["vs"]}
    assert vs["q6-usd-hourly"]["buy_cheaper"] == "above"
    assert 0 < vs["q6-usd-hourly"]["break_even_utilisation"] < 1
    assert vs["q3-hgx-monthly"]["break_even_months"] > 0 and vs["q3-hgx-monthly"]["comparable"]
    table = cli("tco", "--buy", "q5-buy-hgx", YAML)
    assert table.returncode == 0 and "q7-eur-node-hourly" in table.stdout


def test_yaml_syntax_errors_are_said_in_the_readers_language(cli, tmp_path):
    bad = tmp_path / "tabs.yaml"
    bad.write_text("quotes:\n  - id: a\n    gpu: A100 80GB\n\tvendor: x\n", encoding="utf-8")
    en = cli("quote", "check", str(bad))
    assert en.returncode == 2 and en.stderr.count("\n") == 1
    assert "indent with spaces, not tabs" in en.stderr and "at line 4, column 1" in en.stderr
    zh = cli("quote", "check", str(bad), env={"GPUQUOTE_LANG": "zh-CN"})
    assert zh.returncode == 2 and "YAML 语法错误" in zh.stderr and "请用空格缩进" in zh.stderr
    assert "第 4 行，第 1 列" in zh.stderr and "indent" not in zh.stderr
    job = tmp_path / "job.yaml"
    job.write_text("model: llama-3-8b\nmethod: lora\n  tokens: 1e9\n", encoding="utf-8")
    zj = cli("plan", str(job), env={"GPUQUOTE_LANG": "zh-CN"})
    assert zj.returncode == 2 and "不是有效的 YAML/JSON" in zj.stderr and "检查这一行的缩进" in zj.stderr
