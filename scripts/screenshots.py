"""Regenerate docs/screenshots/*.png: every page, in headless Chromium, against the embedded snapshot.

Run: python scripts/screenshots.py [--chromium /usr/bin/chromium] [--out docs/screenshots]
Pages whose service is not in this build (e.g. the plan ranking) are shot as they are, with their notice.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    args = ap.parse_args()
    os.environ["GPUQUOTE_HOME"] = tempfile.mkdtemp(prefix="gpuquote-shots-")
    os.environ.pop("GPUQUOTE_DB", None)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    from gpuquote.web.live import serve_in_thread

    with serve_in_thread() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

        def shot(name: str, full: bool = False) -> None:
            page.wait_for_timeout(300)
            page.screenshot(path=str(out / f"{name}.png"), full_page=full)
            print(f"wrote {out / (name + '.png')}")

        page.goto(base + "/offers")
        shot("offers-summary")
        page.goto(base + "/offers?gpu=a100&memory_gib=80&form_factor=sxm&limit=40")
        shot("offers")
        page.goto(base + "/plan?example=qlora-7b")
        page.click("#plan-submit")
        page.wait_for_load_state()
        if page.locator("#plan-chart").count():
            page.wait_for_selector("#plan-chart[data-rendered='1']")
        shot("plan", full=True)
        page.goto(base + "/quote-check")
        page.click("#qc-submit")
        page.wait_for_load_state()
        shot("quote-check", full=True)
        page.goto(base + "/tco")
        page.click("#tco-submit")
        page.wait_for_load_state()
        if page.locator("#tco-chart").count():
            page.wait_for_selector("#tco-chart[data-rendered='1']")
        page.locator("#tco-chart").scroll_into_view_if_needed() if page.locator("#tco-chart").count() else None
        shot("tco", full=True)
        page.goto(base + "/gpus?ids=a100-40gb-sxm4,a100-80gb-pcie,a100-80gb-sxm4,h100-80gb-sxm5,h200-141gb-sxm")
        shot("gpus")
        page.goto(base + "/history?gpu=a100-80gb")
        page.wait_for_selector("#history-chart[data-rendered='1']")
        shot("history")
        page.goto(base + "/offers?gpu=h100&min_gpus=8&lang=zh-CN")
        shot("offers-zh-CN")
        phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        phone.goto(base + "/offers?gpu=h100&lang=en")
        phone.wait_for_timeout(300)
        phone.screenshot(path=str(out / "offers-phone.png"))
        print(f"wrote {out / 'offers-phone.png'}")
        browser.close()
        if errors:
            raise SystemExit(f"console errors: {errors}")


if __name__ == "__main__":
    main()
