"""The RFQ and Watches pages and their JSON twins (/api/rfq, /api/watches), in English and Chinese."""

from __future__ import annotations

import json

import pytest
import yaml

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.db_backends
LORA = ROOT / "examples" / "jobs" / "lora-70b.yaml"


@pytest.fixture
def client():
    from gpuquote.web.app import create_app

    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


def test_api_rfq_equals_the_cli_json(client, cli):
    body = client.post("/api/rfq", json={"example": "lora-70b", "lang": "zh-CN"})
    assert body.status_code == 200, body.text
    got = body.json()
    want = json.loads(cli("rfq", str(LORA), "--lang", "zh-CN", "--format", "json").stdout)
    assert got == want


def test_api_rfq_documents_download(client):
    md = client.post("/api/rfq", json={"example": "lora-70b", "format": "md"})
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    assert "attachment" in md.headers["content-disposition"] and md.text.startswith("# Request for quotes")
    y = client.post("/api/rfq", json={"example": "lora-70b", "format": "yaml"})
    assert y.status_code == 200 and y.headers["content-type"].startswith("application/yaml")
    assert yaml.safe_load(y.text)["quotes"][0]["gpu"] == "a100-80gb-sxm4"
    bad = client.post("/api/rfq", json={"example": "lora-70b", "format": "pdf"})
    assert bad.status_code == 422 and bad.json()["field"] == "format"


def test_rfq_page_in_both_languages_and_downloads(client):
    page = client.get("/rfq")
    assert page.status_code == 200 and 'id="rfq-form"' in page.text and 'href="/rfq"' in page.text
    zh = client.post("/rfq", data={"job_yaml": LORA.read_text(encoding="utf-8"), "format": "html"},
                     params={"lang": "zh-CN"})
    assert zh.status_code == 200
    assert '<html lang="zh-CN">' in zh.text and "询价单" in zh.text
    assert zh.text.count("<li data-item=") == 10 and "640 GiB" in zh.text
    md = client.post("/rfq", data={"example": "lora-70b", "format": "md"})
    assert md.headers["content-type"].startswith("text/markdown") and "## 配置要求" in md.text  # the cookie keeps zh-CN
    y = client.post("/rfq", data={"example": "lora-70b", "format": "yaml"})
    assert y.headers["content-type"].startswith("application/yaml") and "amount: null" in y.text
    bad = client.post("/rfq", data={"job_yaml": "kind: train\nmodel: nope-1b\n"})
    assert bad.status_code == 400 and 'data-field="model"' in bad.text


def test_api_watches_add_list_remove_equal_the_cli(client, cli):
    r = client.post("/api/watches", json={"name": "web-a100", "kind": "offers", "filters": {"gpu": "a100-80gb"},
                                          "below": 1.0, "notify": "webhook:https://hooks.example.org/x"})
    assert r.status_code == 200, r.text
    assert r.json()["watch"]["name"] == "web-a100"
    listed = client.get("/api/watches").json()
    assert listed == json.loads(cli("watch", "list", "--json").stdout)
    assert [w["name"] for w in listed["watches"]] == ["web-a100"]
    one = client.get("/api/watches/web-a100").json()
    assert one["events"][0]["event"] == "baseline"
    plan = client.post("/api/watches", json={"name": "web-plan", "kind": "plan", "example": "lora-70b",
                                             "below": 50, "currency": "EUR"})
    assert plan.status_code == 200, plan.text
    assert plan.json()["watch"]["job"] == "llama-3.1-70b"
    assert client.delete("/api/watches/web-a100").status_code == 200
    assert [w["name"] for w in client.get("/api/watches").json()["watches"]] == ["web-plan"]
    assert client.delete("/api/watches/web-a100").json()["field"] == "name"


@pytest.mark.parametrize("body, field", [
    ({"name": "x", "kind": "offers", "filters": {"colour": "red"}, "below": 1}, "filters"),
    ({"name": "x", "kind": "offers", "filters": {"gpu": "a100"}, "below": -1}, "below"),
    ({"name": "x", "kind": "offers", "filters": {"gpu": "a100"}, "below": 1, "notify": "webhook:file:///etc"},
     "notify"),
    ({"name": "x", "kind": "offers", "filters": {"gpu": "a100"}, "below": 1, "colour": "red"}, "colour"),
    ({"name": "bad name!", "kind": "offers", "filters": {}, "below": 1}, "name"),
])
def test_api_watch_bad_input_names_the_field_and_stores_nothing(client, body, field):
    r = client.post("/api/watches", json=body)
    assert 400 <= r.status_code < 500 and r.json()["field"] == field, r.text
    assert client.get("/api/watches").json()["count"] == 0


def test_watches_page_add_and_remove(client):
    page = client.get("/watches", params={"lang": "zh-CN"})
    assert page.status_code == 200 and "价格监控" in page.text and 'id="watch-none"' in page.text
    added = client.post("/watches", data={"name": "page-a100", "kind": "offers", "gpu": "a100-80gb", "below": "1",
                                          "currency": "USD", "notify": "stdout"}, follow_redirects=True)
    assert added.status_code == 200 and 'data-watch="page-a100"' in added.text and 'id="watch-added"' in added.text
    assert client.get("/watches", params={"format": "json"}).json()["count"] == 1
    bad = client.post("/watches", data={"name": "neg", "kind": "offers", "gpu": "a100", "below": "-5"})
    assert bad.status_code == 400 and 'data-field="below"' in bad.text
    gone = client.post("/watches/remove", data={"name": "page-a100"}, follow_redirects=True)
    assert gone.status_code == 200 and 'data-watch="page-a100"' not in gone.text
    en = client.get("/watches", params={"lang": "en"})
    assert "Watches" in en.text and 'href="/watches"' in en.text
