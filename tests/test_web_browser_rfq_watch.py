"""The RFQ and Watches pages end to end in headless Chromium against a real server on 127.0.0.1."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.browser, pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

CHROMIUM = os.environ.get("GPUQUOTE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip("no chromium binary found (CI installs Debian's chromium: apt-get install -y chromium)",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")


@pytest.fixture(scope="module")
def server():
    from gpuquote.web.live import serve_in_thread

    with serve_in_thread() as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu",
                                                               "--disable-background-networking"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US", accept_downloads=True)
    pg = ctx.new_page()
    pg.set_default_timeout(15000)
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    pg.errors = errors
    yield pg
    ctx.close()


def test_rfq_page_writes_the_document_and_downloads_both_formats(server, page):
    pg = page
    pg.goto(server + "/rfq?example=qlora-7b")
    assert "model: llama-2-7b" in pg.input_value("#rfq-job")
    pg.goto(server + "/rfq")
    assert "llama-3.1-70b" in pg.input_value("#rfq-job")
    with pg.expect_navigation():
        pg.click("#rfq-submit")
    assert pg.locator("#rfq-questions li").count() == 10
    assert pg.locator("#rfq-spec tr[data-key=ram] td").nth(1).inner_text() == ">= 640 GiB per node"
    with pg.expect_download() as dl:
        pg.click("#rfq-download-yaml")
    text = Path(dl.value.path()).read_text(encoding="utf-8")
    q = yaml.safe_load(text)["quotes"][0]
    assert q["gpu"] == "a100-80gb-sxm4" and q["price"]["amount"] is None
    with pg.expect_download() as dl:
        pg.click("#rfq-download-md")
    assert Path(dl.value.path()).read_text(encoding="utf-8").startswith("# Request for quotes")
    assert pg.errors == []


def test_watches_page_add_remove_in_chinese(server, page):
    pg = page
    pg.goto(server + "/watches?lang=zh-CN")
    assert pg.inner_text("nav a[data-nav=watches]") == "价格监控"
    pg.fill("#watch-form input[name=name]", "browser-a100")
    pg.fill("#watch-form input[name=gpu]", "a100-80gb")
    pg.fill("#watch-form input[name=below]", "1.2")
    with pg.expect_navigation():
        pg.click("#watch-submit")
    row = pg.locator("tr[data-watch=browser-a100]")
    assert row.count() == 1 and "a100-80gb" in row.inner_text()
    assert "browser-a100" in pg.inner_text("#watch-added")
    with pg.expect_navigation():
        pg.click("button[data-remove=browser-a100]")
    assert pg.locator("tr[data-watch=browser-a100]").count() == 0
    assert pg.errors == []
