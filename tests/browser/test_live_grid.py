"""The live grid in a real browser (dashboard.md 11: T1, T2, T14, T15)."""

from __future__ import annotations

import re
import time

import pytest
from live_browser import LiveBrowserCase
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
DIM = re.compile(r"\bdim\b")


def _seed(run_auction: bool = True) -> None:
    from auction.services.clock import clock_reset
    from auction.services.scenarios import scenario_load
    from auction.services.sim import auctioneer_run

    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    if run_auction:
        auctioneer_run()


def _cells(count: int, zones: int = 3) -> None:
    from auction.models import Cell, Zone

    made = [Zone.objects.create(name=f"z{n + 1}") for n in range(zones)]
    Cell.objects.bulk_create(
        Cell(cell_id=f"cell-{i}", zone=made[i % zones], index=i, memory_mb=4096) for i in range(count)
    )


class LiveGridTests(LiveBrowserCase):
    def test_t1_seed_example_grid(self) -> None:
        """T1 (dashboard.md G1-G4, G6): 2 zones, 4 cells, 7 items; lrp-b 2.5x lrp-a; tray empty."""
        self.run_as_worker(_seed)
        page = self.open("/grid/")
        expect(page.locator("section.zone")).to_have_count(2)
        expect(page.locator("[data-cell-id]")).to_have_count(4)
        expect(page.locator(".cell [data-instance], .cell [data-task]")).to_have_count(7)
        # Measured in one evaluation: a frame may swap the blocks between two calls.
        a, b = page.evaluate("""() => ['lrp-a.0', 'lrp-b.0'].map(k =>
            document.querySelector('[data-instance="' + k + '"]').getBoundingClientRect().width)""")
        assert abs(b - 2.5 * a) <= 2, (a, b)
        task = page.locator('[data-task="task-c"]')
        expect(task).to_have_class(re.compile(r"\bblock task st-running\b"))
        expect(task).to_have_text("T")
        expect(page.locator("#tray .all-placed")).to_have_text("all work placed")
        expect(page.locator(".zone-head").first).to_contain_text("largest free:")
        self.shot(page, "T1-grid-1")
        assert page.errors == [], page.errors
        page.close()

    def test_t2_placement_pushed_without_reload(self) -> None:
        """T2 (dashboard.md L1, L3): a worker places; the block appears within 2 s; no reload."""
        self.run_as_worker(_seed, False)
        page = self.open("/grid/")
        expect(page.locator("#tray .chip")).to_have_count(7)
        page.evaluate("window.__marker = 'kept'")
        from auction.services.sim import auctioneer_run

        started = time.monotonic()
        self.run_as_worker(auctioneer_run)
        expect(page.locator('.cell [data-instance="lrp-b.0"]')).to_have_count(1, timeout=2000)
        took = time.monotonic() - started
        expect(page.locator("#tray .all-placed")).to_be_visible()
        assert page.evaluate("window.__marker") == "kept"
        self.shot(page, "T2-push-1")
        assert took < 2.0
        page.close()

    def test_t14_modes_tiles_and_drill_down(self) -> None:
        """T14 (dashboard.md G8): 60 cells dense; 600 cells live tiles; a click drills down."""
        self.run_as_worker(_cells, 60)
        page = self.open("/grid/")
        expect(page.locator("#grid")).to_have_attribute("data-mode", "dense")
        # The socket's snapshot may swap the cells in just as we look: measure a settled one.
        bar = page.locator(".cell .mem-bar").first
        expect(bar).to_be_visible()
        box = bar.bounding_box()
        for _ in range(20):
            if box is not None:
                break
            page.wait_for_timeout(100)
            box = bar.bounding_box()
        assert box is not None and box["height"] <= 10, box
        expect(page.locator(".cell-head").first).to_be_hidden()
        self.shot(page, "T14-modes-1")
        page.close()

        from auction.models import Cell, Zone

        self.run_as_worker(lambda: (Cell.objects.all().delete(), Zone.objects.all().delete()))
        self.run_as_worker(_cells, 600)
        page = self.open("/grid/")
        expect(page.locator("#grid")).to_have_attribute("data-mode", "zones")
        expect(page.locator(".zone-tile")).to_have_count(3)
        expect(page.locator("#tile-z1")).to_contain_text("200 cells")
        from auction.services.cells import cell_fail

        self.run_as_worker(cell_fail, "cell-0")  # z1
        expect(page.locator("#tile-z1")).to_contain_text("1 missing", timeout=3000)
        self.shot(page, "T14-modes-2")
        page.locator("#tile-z2").click()
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        expect(page.locator("#grid")).to_have_attribute("data-mode", "dense")
        expect(page.locator("section.zone")).to_have_count(1)
        expect(page.locator("[data-cell-id]")).to_have_count(200)
        assert "zone=z2" in page.url
        self.shot(page, "T14-modes-3")
        page.close()

    def test_t15_filters_in_the_url_and_keyboard(self) -> None:
        """T15 (dashboard.md G7, U1, U2, U4): filters apply; Back restores; keys; aria-labels."""
        self.run_as_worker(_seed)
        page = self.open("/grid/?app=lrp-a")
        expect(page.locator('[data-instance="lrp-b.0"]')).to_have_class(DIM)
        expect(page.locator('[data-instance="lrp-a.0"]')).not_to_have_class(DIM)
        page.select_option('select[name="kind"]', "task")
        expect(page.locator('[data-instance="lrp-a.0"]')).to_have_class(DIM)
        expect(page.locator('[data-task="task-c"]')).to_have_class(DIM)  # app and kind both apply
        assert "kind=task" in page.url
        self.shot(page, "T15-url-1")
        page.go_back()
        expect(page.locator('select[name="kind"]')).to_have_value("")
        assert "kind=task" not in page.url and "app=lrp-a" in page.url
        label = page.locator('[data-instance="lrp-a.0"]').get_attribute("aria-label")
        assert label.startswith("lrp-a index 0, CLAIMED") and "MB, cell-" in label
        page.locator("[data-cell-id]").first.focus()
        page.keyboard.press("ArrowDown")
        focused = page.evaluate("document.activeElement.dataset.cellId")
        assert focused == page.locator("[data-cell-id]").nth(1).get_attribute("data-cell-id")
        page.keyboard.press("?")
        self.shot(page, "T15-url-2")
        page.close()


class OutageTests(LiveBrowserCase):
    def test_l5_a_refused_fetch_is_no_page_error(self) -> None:
        """L5: while the server refuses the page's own fetches (the zone-loss chips asked
        again after a frame, a block's panel), the page logs htmx's send error and nothing
        uncaught; once the server answers, the chips and the panel load."""
        self.run_as_worker(_seed, False)
        page = self.open("/grid/")
        uncaught: list[str] = []
        page.on("pageerror", lambda exc: uncaught.append(str(exc)))
        refused: list[str] = []

        def refuse(route) -> None:  # type: ignore[no-untyped-def]
            refused.append(route.request.url)
            route.abort("connectionrefused")

        for pattern in ("**/plans/zone-loss/**", "**/panel/**"):
            page.route(pattern, refuse)
        from auction.services.sim import auctioneer_run

        self.run_as_worker(auctioneer_run)  # a frame: the chips ask again (plans.js)
        expect(page.locator('.cell [data-instance="lrp-b.0"]')).to_have_count(1, timeout=5000)
        page.locator('.cell [data-instance="lrp-a.0"]').click()
        page.wait_for_timeout(1000)
        assert any("zone-loss" in url for url in refused), refused
        assert any("htmx:sendError" in e for e in page.errors), page.errors
        assert uncaught == [], uncaught
        page.unroute_all()
        page.locator('.cell [data-instance="lrp-a.0"]').click()
        expect(page.locator("#panel h2")).to_have_text("lrp-a index 0")
        page.close()
