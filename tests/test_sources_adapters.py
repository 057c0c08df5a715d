"""Every registered live source: its recorded responses import through the real CLI, and its fetch
replays them through httpx.MockTransport (no network), with retries, offline errors and key hygiene."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import httpx
import pytest

from gpuquote.service.refresh import import_source, refresh
from gpuquote.sources import registry
from gpuquote.store import write_engine  # noqa: E402

FIX = Path(__file__).parent / "fixtures"
CNY = 0.15031079  # data/fx_rates.json USD per CNY (2026-10-30): CNY offers are converted at the dated rate

# source -> offers that must come out of tests/fixtures/<source>/:
# (offer_id, gpu_id, gpu_count, form_factor, intra_node, usd_per_gpu_hour)
EXPECTED: dict[str, list[tuple]] = {
    "azure": [
        ("azure:eastus:Standard_ND96amsr_A100_v4", "a100-80gb-sxm4", 8, "sxm", "nvswitch", 32.77 / 8),
        ("azure:eastus:Standard_NC24ads_A100_v4", "a100-80gb-pcie", 1, "pcie", "none", 3.673),
        ("azure:eastus:Standard_NC24ads_A100_v4:spot", "a100-80gb-pcie", 1, "pcie", "none", 0.7346),
        ("azure:westus2:Standard_ND96asr_v4", "a100-40gb-sxm4", 8, "sxm", "nvswitch", 27.197 / 8),
        ("azure:southcentralus:Standard_NC40ads_H100_v5", "h100-nvl-94gb", 1, "pcie", "none", 6.98),
    ],
    "aws": [
        ("aws:us-east-1:p4d.24xlarge", "a100-40gb-sxm4", 8, "sxm", "nvswitch", 32.7726 / 8),
        ("aws:us-east-1:p4de.24xlarge", "a100-80gb-sxm4", 8, "sxm", "nvswitch", 40.96575 / 8),
        ("aws:us-west-2:p5.48xlarge", "h100-80gb-sxm5", 8, "sxm", "nvswitch", 98.32 / 8),
        ("aws:us-east-1:g5.12xlarge", "a10g", 4, "pcie", "pcie", 5.672 / 4),
    ],
    "gcp": [  # machine price rebuilt from GPU + vCPU + RAM (+ local SSD) SKUs
        ("gcp:us-central1:a2-highgpu-1g", "a100-40gb-sxm4", 1, "sxm", "none", 2.933908 + 12 * 0.031611 + 85 * 0.004237),
        ("gcp:us-central1:a2-ultragpu-8g", "a100-80gb-sxm4", 8, "sxm", "nvswitch",
         (8 * 3.92808 + 96 * 0.031611 + 1360 * 0.004237 + 3000 * 0.08 / 730) / 8),
        ("gcp:us-central1:g2-standard-4", "l4", 1, "pcie", "none", 0.5601 + 4 * 0.024988 + 16 * 0.002927),
    ],
    "vast": [
        ("vast:NO:8x H100 SXM #12345678", "h100-80gb-sxm5", 8, "sxm", "nvswitch", 16.01 / 8),
        ("vast:CA:1x H100 PCIE #12345679", "h100-80gb-pcie", 1, "pcie", "none", 2.41),
        ("vast:US:4x A100 SXM4 #12345680", "a100-80gb-sxm4", 4, "sxm", "nvlink", 4.81 / 4),
        ("vast:US:2x A100 PCIE #12345681", "a100-40gb-pcie", 2, "pcie", "pcie", 1.61 / 2),
    ],
    "runpod": [
        ("runpod:unknown:NVIDIA A100-SXM4-80GB x1 (secure)", "a100-80gb-sxm4", 1, "sxm", "none", 1.89),
        ("runpod:unknown:NVIDIA A100 80GB PCIe x4 (community)", "a100-80gb-pcie", 4, "pcie", "unknown", 1.19),
        ("runpod:unknown:NVIDIA H100 80GB HBM3 x8 (secure)", "h100-80gb-sxm5", 8, "sxm", "nvswitch", 2.99),
    ],
    "lambda": [
        ("lambda:us-east-1:gpu_8x_h100_sxm5", "h100-80gb-sxm5", 8, "sxm", "nvswitch", 23.92 / 8),
        ("lambda:us-west-1:gpu_1x_h100_pcie", "h100-80gb-pcie", 1, "pcie", "none", 2.49),
        ("lambda:unknown:gpu_8x_a100_80gb_sxm4", "a100-80gb-sxm4", 8, "sxm", "nvswitch", 14.32 / 8),
    ],
    "skypilot": [
        ("aws:us-east-1:p4de.24xlarge", "a100-80gb-sxm4", 8, "sxm", "nvswitch", None),
        ("vast:Texas, US, NA:1x-H100_SXM-32-65536", "h100-80gb-sxm5", 1, "sxm", "none", 1.87),
    ],
    "shadeform": [
        ("shadeform:us-east-1:aws/p4de.24xlarge", "a100-80gb-sxm4", 8, "sxm", "nvswitch", 40.96 / 8),
        ("shadeform:CANADA-1:hyperstack/n3-H100x8", "h100-80gb-sxm5", 8, "sxm", "nvswitch", 19.20 / 8),
        ("shadeform:us-central-2:massedcompute/gpu_2x_a6000", "rtx-a6000", 2, "pcie", "pcie", 0.55),
    ],
    "alicloud": [  # prices kept in CNY; USD per GPU-hour from the dated rate
        ("alicloud:cn-beijing:ecs.gn7e-c16g1.32xlarge", "a100-80gb-sxm4", 8, "sxm", "nvlink", 297.54 * CNY / 8),
        ("alicloud:cn-beijing:ecs.gn7e-c16g1.4xlarge", "a100-80gb-sxm4", 1, "sxm", "none", 37.25 * CNY),
        ("alicloud:cn-wulanchabu:ecs.ebmgn8v.48xlarge", "h20-96gb", 8, "sxm", "nvlink", 422.25 * CNY / 8),
        ("alicloud:cn-hangzhou:ecs.sgn7i-vws-m4.2xlarge", "a10", 1 / 6, "pcie", "none", 4.62 * CNY * 6),
    ],
    "tencentcloud": [
        ("tencentcloud:ap-guangzhou:GT4.41XLARGE948@ap-guangzhou-6", "a100-40gb", 8, "unknown", "nvlink",
         237.56 * CNY / 8),
        ("tencentcloud:ap-guangzhou:GN7.2XLARGE32@ap-guangzhou-6", "t4", 1, "pcie", "none", 7.85 * CNY),
    ],
}


def _recorded(source: str, dest: Path) -> Path:
    """The documentation-based fixtures of a source (not the real-* samples, tested in test_sources_real.py)."""
    src = FIX / source
    for f in src.rglob("*"):
        if f.is_file() and not f.name.startswith("real-") and f.suffix != ".md":
            (dest / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            (dest / f.relative_to(src)).write_bytes(f.read_bytes())
    return dest


def _offers(home: Path) -> dict[str, dict]:
    con = sqlite3.connect(home / "gpuquote.sqlite")
    con.row_factory = sqlite3.Row
    rows = con.execute("SELECT o.* FROM offers o JOIN current c ON c.snapshot_id = o.snapshot_id").fetchall()
    con.close()
    return {r["offer_id"]: dict(r) for r in rows}


def test_every_registered_adapter_has_fixtures_and_expectations():
    assert set(registry.names()) == set(EXPECTED), "each registered adapter needs fixtures and a row in EXPECTED"
    for name in registry.names():
        files = [p for p in (FIX / name).rglob("*") if p.is_file()]
        assert files, f"tests/fixtures/{name}/ has no recorded response"
        assert EXPECTED[name], f"no expectations for {name}"


@pytest.mark.parametrize("source", sorted(EXPECTED))
def test_cli_import_of_recorded_response(source, cli, isolated_home, tmp_path):
    # an empty store (not seeded from the embedded snapshot): the fixture is the source's first snapshot
    write_engine(seed=False).dispose()
    r = cli("import", source, str(_recorded(source, tmp_path / source)), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "good" and out["imported"] > 0
    offers = _offers(isolated_home)
    for oid, gpu, count, form, intra, usd in EXPECTED[source]:
        assert oid in offers, f"{oid} missing; have {sorted(offers)[:8]}"
        o = offers[oid]
        assert (o["gpu_id"], o["gpu_count"], o["form_factor"], o["intra_node"]) == (gpu, count, form, intra)
        if usd is not None:
            assert o["usd_per_gpu_hour"] == pytest.approx(usd, rel=1e-4)
        assert o["fetched_at"]


def _fixture_handler(source: str, seen: list[httpx.Request]):
    """A MockTransport handler that answers each adapter's real requests with the recorded pages."""
    d = FIX / source

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        url = str(req.url)
        if source == "azure":
            name = "page-0002.json" if "skip" in url else "page-0001.json"
            return httpx.Response(200, content=(d / name).read_bytes())
        if source == "gcp":
            name = "skus-page-2.json" if "pageToken" in url else "skus-page-1.json"
            return httpx.Response(200, content=(d / name).read_bytes())
        if source == "aws":
            region = req.url.path.split("/")[-2]
            f = d / f"{region}-index.csv"
            return httpx.Response(200, content=f.read_bytes()) if f.exists() else httpx.Response(404)
        if source == "skypilot":
            cloud = req.url.path.split("/")[-2]
            f = d / cloud / "vms.csv"
            return httpx.Response(200, content=f.read_bytes()) if f.exists() else httpx.Response(404)
        if source == "alicloud":
            name = "instanceTypeDefinition.js" if url.endswith(".js") else "instancePrice.json"
            return httpx.Response(200, content=(d / name).read_bytes())
        if source == "tencentcloud":
            name = "regions.json" if "queryCvmRegion" in url else "zones-ap-guangzhou.json"
            return httpx.Response(200, content=(d / name).read_bytes())
        first = sorted(p for p in d.iterdir() if p.is_file() and not p.name.startswith("real-") and p.suffix != ".md")
        return httpx.Response(200, content=first[0].read_bytes())

    return handler


ENV = {"GPUQUOTE_GCP_API_KEY": "SECRET-gcp-KEY-123", "LAMBDA_API_KEY": "SECRET-lambda-KEY-123",
       "SHADEFORM_API_KEY": "SECRET-shade-KEY-123", "GPUQUOTE_AWS_REGIONS": "us-east-1"}


@pytest.mark.parametrize("source", sorted(EXPECTED))
def test_fetch_replays_recorded_responses(source, isolated_home, tmp_path):
    write_engine(seed=False).dispose()
    seen: list[httpx.Request] = []
    client = httpx.Client(transport=httpx.MockTransport(_fixture_handler(source, seen)))
    res = refresh([source], env=ENV, client=client, sleep=lambda s: None)
    assert res and all(r["status"] == "good" for r in res), res
    assert sum(r["imported"] for r in res) > 0
    # fetched and imported-from-file parse the same bytes the same way (aws: only the region served)
    if source not in ("aws",):
        ref = import_source(source, _recorded(source, tmp_path / source))
        assert sum(r["imported"] for r in res) == ref["imported"]
    if source == "azure":
        assert len(seen) == 2 and "filter" in str(seen[0].url)  # followed NextPageLink
    if source == "gcp":
        assert len(seen) == 2 and seen[0].url.params["key"] == ENV["GPUQUOTE_GCP_API_KEY"]
    if source == "lambda":
        assert seen[0].headers["authorization"] == f"Bearer {ENV['LAMBDA_API_KEY']}"
    if source == "shadeform":
        assert seen[0].headers["x-api-key"] == ENV["SHADEFORM_API_KEY"]
    if source in ("vast", "runpod"):
        assert seen[0].method == "POST" and "authorization" not in seen[0].headers
    # API keys are never stored: not in the database file, raw archive or provenance
    blob = (isolated_home / "gpuquote.sqlite").read_bytes()
    for key in ("SECRET-gcp-KEY-123", "SECRET-lambda-KEY-123", "SECRET-shade-KEY-123"):
        assert key.encode() not in blob


def test_retries_429_and_5xx_with_backoff_then_succeeds():
    calls, sleeps = [], []
    body = (FIX / "lambda" / "instance-types.json").read_bytes()

    def handler(req):
        calls.append(req)
        if len(calls) == 1:
            return httpx.Response(429, headers={"Retry-After": "3"})
        if len(calls) == 2:
            return httpx.Response(503)
        return httpx.Response(200, content=body)

    res = refresh(["lambda"], env=ENV, client=httpx.Client(transport=httpx.MockTransport(handler)),
                  sleep=sleeps.append)
    assert res[0]["status"] == "good"
    assert len(calls) == 3 and sleeps == [3.0, 2.0]  # Retry-After honoured, then exponential backoff


def test_gives_up_after_retries_with_one_clear_line_and_no_key():
    sleeps = []
    res = refresh(["gcp"], env=ENV, client=httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(500))),
                  sleep=sleeps.append)
    assert res[0]["status"] == "error"
    assert "cloudbilling.googleapis.com answered HTTP 500" in res[0]["error"] and "5 attempt" in res[0]["error"]
    assert "SECRET" not in res[0]["error"] and "\n" not in res[0]["error"]
    assert sleeps == [1.0, 2.0, 4.0, 8.0]


def test_offline_is_a_clear_error_and_other_sources_still_run():
    def offline(req):
        raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution", request=req)

    res = refresh(["azure", "vast"], env={}, client=httpx.Client(transport=httpx.MockTransport(offline)),
                  sleep=lambda s: None)
    assert [r["status"] for r in res] == ["error", "error"]
    assert "cannot reach prices.azure.com (offline" in res[0]["error"]


def test_auth_error_names_the_env_var():
    res = refresh(["lambda"], env=ENV, client=httpx.Client(transport=httpx.MockTransport(
        lambda r: httpx.Response(401, json={"error": {"code": "global/invalid-api-key"}}))), sleep=lambda s: None)
    assert res[0]["status"] == "error" and "HTTP 401" in res[0]["error"] and "LAMBDA_API_KEY" in res[0]["error"]


def test_missing_key_skips_by_default_and_errors_when_asked_for():
    def boom(req):
        raise AssertionError("no request may be sent without a key")

    client = httpx.Client(transport=httpx.MockTransport(boom))
    res = refresh(["lambda"], env={}, client=client)
    assert res[0]["status"] == "error" and "LAMBDA_API_KEY" in res[0]["error"]
    seen = []
    client = httpx.Client(transport=httpx.MockTransport(_fixture_handler("vast", seen)))
    res = {r["source"]: r for r in refresh(["vast", "gcp", "lambda", "shadeform"], env={}, client=client)}
    assert res["vast"]["status"] == "good"
    assert res["lambda"]["status"] == "error"  # named explicitly
    assert res["shadeform"]["status"] == "error" and "SHADEFORM_API_KEY" in res["shadeform"]["error"]


def test_refresh_all_skips_sources_without_keys(monkeypatch):
    from gpuquote.service import refresh as svc

    fetched = []
    monkeypatch.setattr(svc, "_refresh_one", lambda a, *args: fetched.append(a.name) or [])
    res = svc.refresh(None, env={})
    skipped = {r["source"] for r in res if r["status"] == "skipped"}
    assert skipped == {"gcp", "lambda", "shadeform"}
    assert set(fetched) == {"azure", "aws", "vast", "runpod", "skypilot", "alicloud", "tencentcloud"}


def test_unknown_source_is_bad_input(cli):
    r = cli("refresh", "--source", "nope")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "source" in r.stderr and "azure" in r.stderr
    r = cli("import", "azure", "/nonexistent/file.json")
    assert r.returncode == 2 and "no such file" in r.stderr


def test_not_json_is_one_line_exit_2(cli, tmp_path):
    bad = tmp_path / "page.json"
    bad.write_text("<html>rate limited</html>")
    r = cli("import", "azure", str(bad))
    assert r.returncode == 2 and "not a JSON response" in r.stderr and r.stderr.count("\n") == 1
