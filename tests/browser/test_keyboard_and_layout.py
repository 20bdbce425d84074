"""Keyboard flows and the 768 px layout in a real browser (dashboard.md U2, M1, M2, G9)."""

from __future__ import annotations

import pytest
from live_browser import LiveBrowserCase
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def _world() -> None:
    from auction.services.clock import clock_reset
    from auction.services.scenarios import scenario_load
    from auction.services.sim import auctioneer_run

    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()


SIDEWAYS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


class KeyboardTests(LiveBrowserCase):
    def test_skip_link_panel_focus_keys_overlay_feed_rows_and_metrics_toggle(self) -> None:
        """U2: the skip link comes first; Enter moves focus into the panel and Esc back;
        "?" lists the keys; M2: a feed row opens the panel; M1: the metrics header
        collapses and remembers it."""
        self.run_as_worker(_world)
        context = self.browser.new_context(viewport={"width": 1280, "height": 900})
        page = self.open("/grid/", context)
        page.keyboard.press("Tab")
        skip = page.get_by_role("link", name="Skip to content")
        expect(skip).to_be_focused()
        expect(skip).to_be_visible()

        block = page.locator('#main .block[data-instance="lrp-a.0"]')
        block.focus()
        page.keyboard.press("Enter")
        expect(page.locator("#panel h2")).to_be_focused()
        assert "sel=instance%3Alrp-a.0" in page.url
        page.keyboard.press("Escape")
        expect(page.locator("#panel h2")).to_have_count(0)
        expect(block).to_be_focused()
        assert "sel=" not in page.url

        page.keyboard.press("?")
        expect(page.get_by_role("dialog", name="Keys")).to_be_visible()
        self.shot(page, "keys-overlay")
        page.keyboard.press("Escape")
        expect(page.get_by_role("dialog", name="Keys")).to_be_hidden()

        page.locator("#feed-details summary").click()
        row = page.locator('#feed-list .feed-row[data-open="instance:lrp-a.0"]').first
        row.focus()
        page.keyboard.press("Enter")
        expect(page.locator("#panel h2")).to_have_text("lrp-a index 0")
        page.keyboard.press("Escape")
        row.click()
        expect(page.locator("#panel h2")).to_have_text("lrp-a index 0")
        page.keyboard.press("Escape")

        tiles = page.locator("#metrics .metric:not(.metric-warn):not(.metric-crit)")
        expect(tiles.first).to_be_visible()
        page.get_by_role("button", name="Metrics ▾").click()
        expect(tiles.first).to_be_hidden()
        page.reload()
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        expect(page.locator("#metrics .metric:not(.metric-warn):not(.metric-crit)").first).to_be_hidden()
        page.get_by_role("button", name="Metrics ▸").click()
        expect(page.locator("#metrics .metric").first).to_be_visible()
        assert page.errors == [], page.errors
        context.close()

    def test_no_sideways_scroll_from_768_px(self) -> None:
        """U2/layout: every page fits 768 px wide (no horizontal scroll)."""
        self.run_as_worker(_world)
        context = self.browser.new_context(viewport={"width": 768, "height": 1000})
        for path in ("/grid/", "/lrps/", "/events/", "/auctions/", "/otto/", "/api/v1/docs/"):
            page = context.new_page()
            page.errors = []
            page.on("console", lambda m, page=page: page.errors.append(m.text) if m.type == "error" else None)
            page.goto(self.live_server_url + path)
            page.wait_for_load_state("networkidle")
            over = page.evaluate(SIDEWAYS)
            if over > 0:
                wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
                    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
                    .slice(0, 8).map(e => e.tagName + '.' + e.className + '#' + e.id)""")
                self.shot(page, f"768-{path.strip('/').replace('/', '-') or 'grid'}")
                raise AssertionError(f"{path} scrolls sideways by {over} px: {wide}")
            self.shot(page, f"768-{path.strip('/').replace('/', '-') or 'grid'}")
            page.close()
        context.close()

    def test_the_top_bar_is_one_row_at_1440_px_with_the_clock_paused(self) -> None:
        """U2/layout: at 1440 px, the clock paused, no link or the clock is broken over two
        lines and the bar is one row (it wrapped)."""
        self.run_as_worker(_world)
        context = self.browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.errors = []
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.goto(self.live_server_url + "/grid/")
        expect(page.locator("#sim-clock")).to_have_attribute("data-paused", "true")
        boxes = page.evaluate("""() => [...document.querySelectorAll('.topbar nav a, .topbar .clock')]
            .map(e => { const r = e.getBoundingClientRect(); return [e.textContent.trim(), r.top, r.height]; })""")
        line = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.topbar nav a')).lineHeight) || 20")
        assert all(height < 2 * line for _, _, height in boxes), boxes
        assert max(t for _, t, _ in boxes) - min(t for _, t, _ in boxes) < line, boxes
        self.shot(page, "1440-topbar-paused")
        assert page.errors == [], page.errors
        context.close()
