"""Upload a cfdot capture from the dashboard and see its cells on the grid (plans.md 3.6).

The real stack (``make run``'s processes, tests/support/stack.py): an operator opens
/foundations/, picks the capture's files, loads them into the live cluster and opens the
grid, which draws the capture's cells in their zones.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser import launch, screenshot
from playwright.sync_api import expect, sync_playwright
from stack import ADMIN_PASSWORD, LiveStack

pytestmark = [pytest.mark.browser, pytest.mark.processes]
CAPTURES = Path(__file__).resolve().parents[1] / "foundations" / "captures"


@pytest.fixture
def stack():
    live = LiveStack("foundation")
    try:
        live.start()
        yield live
    finally:
        live.stop()


def test_upload_a_capture_and_see_its_cells_plans_md_3_6(stack: LiveStack) -> None:
    errors: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(stack.url + "admin/login/?next=/foundations/")
        page.fill("#id_username", "admin")
        page.fill("#id_password", ADMIN_PASSWORD)
        page.click("input[type=submit]")
        page.wait_for_url(re.compile(r"/foundations/$"))
        expect(page.locator("nav a[aria-current=page]")).to_have_text("Foundations")
        # A bad capture first: its line and field are shown, nothing changes.
        bad = CAPTURES.parent / "bad-capture.jsonl"
        page.set_input_files('input[type="file"]', [str(CAPTURES / "cells.jsonl"), str(bad)])
        page.click("#foundation-form button[type=submit]")
        expect(page.locator("[data-error]")).to_have_text(
            'bad-capture.jsonl:2: presence: unknown value "SUSPICIOUS"', timeout=20_000)
        screenshot(page, "foundation-upload-error")
        page.set_input_files('input[type="file"]', sorted(str(f) for f in CAPTURES.glob("*.jsonl")))
        page.check('input[name="mode"][value="live"]')
        page.click("#foundation-form button[type=submit]")
        expect(page.locator("[data-result]")).to_contain_text("Loaded into the live cluster", timeout=30_000)
        expect(page.locator("[data-result]")).to_contain_text("3 cells in 3 zones")
        expect(page.locator("[data-result] .assumptions")).to_contain_text('zone "default"')
        screenshot(page, "foundation-upload-done")
        # The import moved the world epoch: the page reloads itself and keeps the answer.
        page.wait_for_timeout(1500)
        expect(page.locator("[data-result]")).to_contain_text("Loaded into the live cluster")
        page.click("[data-result] a")
        page.wait_for_url(re.compile(r"/grid/$|/$"))
        for cell_id in ("5c2b9f4e-8a71-4d3e-9b06-1f7e2a4c8d90", "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
                        "old-rep-cell"):
            expect(page.locator(f'[data-cell-id="{cell_id}"]').first).to_be_visible(timeout=15_000)
        for zone in ("z1", "z2", "default"):
            expect(page.locator(f'[data-zone="{zone}"]').first).to_be_attached()
        expect(page.locator('[data-instance^="d3f1a2b4-7c6e-4e8f-9a0b-1c2d3e4f5a6b"]').first).to_be_attached()
        screenshot(page, "foundation-grid")
        browser.close()
    # The refused upload's answer is a 400, which chromium logs once; nothing else.
    refused = [e for e in errors if "status of 400" in e]
    assert len(refused) == 1 and not [e for e in errors if e not in refused], errors
