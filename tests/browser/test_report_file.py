"""The report card opened from disk in a real browser with the network blocked (plans.md 4).

No live server: the file is written by ``manage.py report`` and opened as ``file://``;
every request that is not ``file:`` is aborted and recorded, so a report that tried to
fetch anything fails here. The screenshot goes to docs/screenshots/report.png (README).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import launch
from django.core.management import call_command
from playwright.sync_api import Page, expect, sync_playwright

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "screenshots" / "report.png"
STRATEGIES = ["diego", "dea"]


def _open(page: Page, path: Path, blocked: list[str], errors: list[str]) -> None:
    page.route("**/*", lambda route: (route.continue_() if route.request.url.startswith("file:")
                                      else (blocked.append(route.request.url), route.abort())))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("requestfailed", lambda r: errors.append(f"failed: {r.url}"))
    page.goto(path.as_uri())


def test_report_renders_offline_on_desktop_phone_and_print_plans_md_4(tmp_path: Path) -> None:
    """plans.md 4.2, 4.5: every card and figure renders from file:// with the network
    blocked, no console error, no request leaves the file; no sideways scroll on a phone;
    print turns the grounds white."""
    report = tmp_path / "report.html"
    call_command("report", "az-loss", "--strategies", ",".join(STRATEGIES), "--until", "600",
                 "-o", str(report), stdout=open(tmp_path / "log", "w"))
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            blocked: list[str] = []
            errors: list[str] = []
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            _open(page, report, blocked, errors)
            cards = page.locator("article.card")
            expect(cards).to_have_count(len(STRATEGIES))
            for strategy in STRATEGIES:
                card = page.locator(f'article.card[data-strategy="{strategy}"]')
                expect(card).to_be_visible()
                figures = card.locator('svg[role="img"]')
                expect(figures).to_have_count(4)
                for figure in figures.all():
                    box = figure.bounding_box()
                    assert box is not None and box["width"] > 200 and box["height"] > 50, box
                # Every cell drawn: 12 cells of az-loss, each a bar.
                expect(card.locator("svg.cells rect.cellbar")).to_have_count(12)
            best = page.locator('tr[data-metric="distribution_final"] td.best')
            expect(best).to_have_count(1)
            expect(page.locator("#metrics")).to_contain_text("Quality metrics")
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
            assert errors == [] and blocked == [], (errors, blocked)

            phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
            _open(phone, report, blocked, errors)
            expect(phone.locator("article.card")).to_have_count(len(STRATEGIES))
            overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{overflow} px of sideways scroll on a phone"
            tops = [c.bounding_box()["y"] for c in phone.locator("article.card").all()]
            assert tops == sorted(tops) and tops[0] < tops[1]  # stacked, one column

            phone.emulate_media(media="print")
            background = phone.evaluate("getComputedStyle(document.body).backgroundColor")
            assert background == "rgb(255, 255, 255)", background
            assert errors == [] and blocked == [], (errors, blocked)
        finally:
            browser.close()
