"""Alibaba/Tencent live adapters: request signing against the clouds' documented examples, and the credentialed
paths (DescribePrice, InquiryPriceRunInstances) replayed through httpx.MockTransport (no network)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx

from gpuquote.sources import alicloud, tencentcloud
from gpuquote.sources.http import Http

FIX = Path(__file__).parent / "fixtures"
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def test_alibaba_rpc_signature_matches_the_documented_example():
    # Alibaba's "Sign RPC API requests" example: AccessKeySecret testsecret -> OLeaidS1JvxuMvnyHOwuJ+uX5qY=
    params = {"Timestamp": "2016-02-23T12:46:24Z", "Format": "XML", "AccessKeyId": "testid",
              "Action": "DescribeRegions", "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0",
              "SignatureNonce": "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf", "Version": "2014-05-26"}
    assert alicloud.sign_rpc(params, "testsecret") == "OLeaidS1JvxuMvnyHOwuJ+uX5qY="
    assert alicloud.percent_encode("a b*c~") == "a%20b%2Ac~"


def test_tencent_tc3_signature_matches_the_documented_example():
    # Tencent's "Signature v3" worked example (its masked keys are the literal inputs of the published value)
    payload = '{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}'
    h = tencentcloud.tc3_headers("DescribeInstances", payload, secret_id="AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******",
                                 secret_key="Gu5t9xGARNpq86cd98joQYCN3*******", region="ap-guangzhou",
                                 timestamp=1551113065)
    assert h["Authorization"] == (
        "TC3-HMAC-SHA256 Credential=AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******/2019-02-25/cvm/tc3_request, "
        "SignedHeaders=content-type;host, Signature=2230eefd229f582d8b1b891af7107b91597240707d778ab3738f756258d7652c")
    assert h["X-TC-Action"] == "DescribeInstances" and h["X-TC-Region"] == "ap-guangzhou"


def test_alibaba_describe_price_path_with_keys(monkeypatch):
    seen = []
    secret = "SECRET-ali-KEY-123"

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        if str(req.url).endswith(".js"):
            return httpx.Response(200, content=(FIX / "alicloud" / "instanceTypeDefinition.js").read_bytes())
        assert req.url.host == "ecs.aliyuncs.com"
        q = dict(parse_qsl(urlsplit(str(req.url)).query))
        sig = q.pop("Signature")
        assert sig == alicloud.sign_rpc(q, secret)  # the request carries its own valid signature
        assert q["Action"] == "DescribePrice" and q["SystemDisk.Size"] == "40" and q["AccessKeyId"] == "AKID-ali"
        if q["InstanceType"] != "ecs.gn7e-c16g1.32xlarge":
            return httpx.Response(400, json={"Code": "InvalidInstanceType.NotSupported"})
        return httpx.Response(200, json={"PriceInfo": {"Price": {"Currency": "CNY", "OriginalPrice": 310.0,
                                                                 "DiscountPrice": 10.0, "TradePrice": 300.0}}})

    http = Http(httpx.Client(transport=httpx.MockTransport(handler)), "alicloud", sleep=lambda s: None, retries=0)
    env = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "AKID-ali", "ALIBABA_CLOUD_ACCESS_KEY_SECRET": secret,
           "GPUQUOTE_ALICLOUD_REGIONS": "cn-beijing"}
    raw = alicloud.fetch(http, env)
    assert not any(secret.encode() in b for _, _, b in raw)
    res = alicloud.parse(raw, NOW)[0]
    gn7e = [o for o in res.offers if o.sku == "ecs.gn7e-c16g1.32xlarge"]
    assert len(gn7e) == 1 and gn7e[0].price.amount == 300.0 and gn7e[0].price.currency == "CNY"
    assert "TradePrice" in gn7e[0].notes[0] and gn7e[0].region == "cn-beijing"


def test_alibaba_public_path_skips_windows_classic_fpga_and_flags_gn5i():
    raw = [(p.name, "", p.read_bytes()) for p in sorted((FIX / "alicloud").iterdir()) if p.suffix != ".md"]
    res = alicloud.parse(raw, NOW)[0]
    assert {o.sku for o in res.offers} == {"ecs.gn7e-c16g1.32xlarge", "ecs.gn7e-c16g1.4xlarge",
                                          "ecs.gn7i-c8g1.2xlarge", "ecs.sgn7i-vws-m4.2xlarge", "ecs.ebmgn8v.48xlarge"}
    assert res.provenance["flagged"] == ["alicloud:cn-beijing:ecs.gn5i-c12g1.6xlarge 0.084 CNY/h"]
    assert res.provenance["price_version"] == "2.0.211" and res.provenance["currency"] == "CNY"
    assert all(o.price.currency == "CNY" for o in res.offers)


def test_tencent_inquiry_path_with_keys():
    seen = []
    sid, skey = "AKID-tc", "SECRET-tc-KEY-123"

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        assert req.url.host == tencentcloud.API_HOST and "workbench" not in str(req.url)
        body = req.content.decode()
        ts = int(req.headers["X-TC-Timestamp"])
        want = tencentcloud.tc3_headers(req.headers["X-TC-Action"], body, secret_id=sid, secret_key=skey,
                                        region=req.headers.get("X-TC-Region"), timestamp=ts)
        assert req.headers["Authorization"] == want["Authorization"]
        if req.headers["X-TC-Action"] == "DescribeZoneInstanceConfigInfos":
            page = json.loads((FIX / "tencentcloud" / "zones-ap-guangzhou.json").read_text(encoding="utf-8"))
            return httpx.Response(200, json={"Response": page["data"]["Response"]})
        req_body = json.loads(body)
        assert req_body["ImageId"] == "img-r8qb077f" and req_body["InstanceChargeType"] == "POSTPAID_BY_HOUR"
        price = 230.0 if req_body["InstanceType"] == "GT4.41XLARGE948" else 7.5
        return httpx.Response(200, json={"Response": {"Price": {"InstancePrice": {"UnitPrice": price + 5,
                                                                                 "UnitPriceDiscount": price}}}})

    http = Http(httpx.Client(transport=httpx.MockTransport(handler)), "tencentcloud", sleep=lambda s: None)
    env = {"TENCENTCLOUD_SECRET_ID": sid, "TENCENTCLOUD_SECRET_KEY": skey, "TENCENTCLOUD_IMAGE_ID": "img-r8qb077f",
           "GPUQUOTE_TENCENT_REGIONS": "ap-guangzhou"}
    raw = tencentcloud.fetch(http, env)
    assert not any(skey.encode() in b for _, _, b in raw)
    assert [r.headers["X-TC-Action"] for r in seen].count("InquiryPriceRunInstances") == 4  # the 4 GPU items
    res = tencentcloud.parse(raw, NOW)[0]
    gt4 = [o for o in res.offers if o.sku == "GT4.41XLARGE948"]
    assert gt4 and gt4[0].price.amount == 230.0 and "InquiryPriceRunInstances" in gt4[0].notes[0]
    sold_out = [o for o in res.offers if o.sku == "GN10Xp.20XLARGE320"]
    assert sold_out and sold_out[0].available is False


def test_tencent_vgpu_slice_is_shared():
    from gpuquote.sources.base import ParseResult

    item = {"Zone": "ap-guangzhou-3", "InstanceType": "GN7.LARGE20", "InstanceFamily": "GN7", "GpuCount": 0.25,
            "Cpu": 4, "Memory": 20, "Status": "SELL", "Price": {"UnitPriceDiscount": 2.1, "ChargeUnit": "HOUR"}}
    o = tencentcloud.item_offer(item, ParseResult(source="tencentcloud"), NOW)
    assert o.gpu_exclusive == "shared" and o.gpu_count == 0.25 and o.intra_node == "none"


def test_import_accepts_the_community_vms_csv(shared_dir):
    from gpuquote.service.refresh import import_source
    from gpuquote.store import write_engine

    write_engine(seed=False).dispose()
    out = import_source("tencentcloud", shared_dir / "data" / "china" / "tencentcloud" / "vms.csv", fetched_at=NOW)
    assert out["imported"] == 250 and out["status"] == "good"
    assert out["skip_reasons"]["Tencent Zixiao inference chip: not in the GPU catalog"] == 40
