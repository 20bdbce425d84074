"""The auction sequence and "why here" in a real browser (dashboard.md 11: T3, T4, T5).

Harness (dashboard.md 11): ChannelsLiveServerTestCase forks daphne over
the file SQLite test database; the test process loads scenarios and runs auctions through
the services, then drives Debian's chromium with Playwright.
"""

from __future__ import annotations

import re

import pytest
from live_browser import BrowserPageCase
from playwright.sync_api import expect

from auction.models import AuctionRun
from auction.services.clock import clock_reset
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run

pytestmark = pytest.mark.browser

SEED_LANES = [["lrp-b.0", "lrp-a.0"], ["task-c", "task-d"], ["lrp-b.1", "lrp-a.1", "lrp-a.2"]]
MISMATCH_ERRORS = {
    "windows-app.0": "found no compatible cell for required rootfs",
    "smb-app.0": "found no compatible cell with required volume drivers",
    "iso-c-app.0": 'found no compatible cell with placement tag "iso-c"',
    "huge-app.0": "insufficient resources: memory",
}


class AuctionPagesInBrowser(BrowserPageCase):

    def seed(self, scenario: str) -> AuctionRun:
        scenario_load(scenario)
        clock_reset(0.0, paused=True)
        auctioneer_run()
        return AuctionRun.objects.get()

    def open(self, path: str) -> None:
        self.page.goto(self.live_server_url + path)
        expect(self.page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)

    def state(self):  # type: ignore[no-untyped-def]
        return self.page.locator("#replay .replay-state")

    def test_t3_why_here_parts_sum_to_the_total(self) -> None:
        """dashboard.md T3 (G9, G10): click lrp-b.0 on the grid; parts sum to the total
        within 1e-6; at least one runner-up, each with its deciding term; a replay link."""
        run = self.seed("seed-example")
        self.open("/grid/")
        block = self.page.locator('[data-cell-id] [data-instance="lrp-b.0"]')
        block.click()
        why = self.page.locator("#panel .why-here")
        expect(why).to_be_visible()
        self.shot("t3-why")
        parts = {
            cell.get_attribute("data-part"): float(cell.get_attribute("data-value"))
            for cell in why.locator("td[data-part]").all()
        }
        total = parts.pop("total")
        assert set(parts) == {"resource", "starting", "locality", "bin-pack"}
        assert abs(sum(parts.values()) - total) <= 1e-6
        assert total == run.scores["lrp-b.0"]
        runners = why.locator(".runners-up li")
        assert runners.count() >= 1
        assert all(text.strip() for text in why.locator(".runners-up .deciding").all_inner_texts())
        expect(why.locator("a.replay-link")).to_have_attribute("href", f"/auctions/{run.pk}/?step=1")
        # Esc closes the panel; Enter on a focused cell opens the cell's panel (G9 cell).
        self.page.keyboard.press("Escape")
        expect(why).to_have_count(0)
        self.page.locator('[data-cell-id="cell-1"]').focus()
        self.page.keyboard.press("Enter")
        expect(self.page.locator('#panel [data-panel="cell"]')).to_have_attribute("data-ident", "cell-1")
        block.click()
        expect(self.page.locator("#panel .why-here")).to_be_visible()
        self.page.locator("#panel a.replay-link").click()
        expect(self.state()).to_have_attribute("data-item", "lrp-b.0")
        self.shot("t3-why")
        assert self.errors == []

    def test_t4_stepping_the_seed_sequence(self) -> None:
        """dashboard.md T4 (A2, A4): lanes as in A2; step 3 = task-c; back = lrp-a.0; ?step
        survives a reload; play runs to the commit and stops; keys drive every control."""
        run = self.seed("seed-example")
        self.open(f"/auctions/{run.pk}/")
        lanes = self.page.locator(".queue-strip .lane")
        expect(lanes).to_have_count(3)
        assert lanes.locator("h2").all_inner_texts() == ["1 First instances", "2 Tasks", "3 Remaining instances"]
        shown = [lane.locator("[data-ident]").evaluate_all("els => els.map(e => e.dataset.ident)")
                 for lane in lanes.all()]
        assert shown == SEED_LANES
        widths = {i: self.page.locator(f'[data-ident="{i}"]').bounding_box()["width"] for i in ("lrp-b.0", "lrp-a.0")}
        assert abs(widths["lrp-b.0"] - 2.5 * widths["lrp-a.0"]) <= 2  # width follows memory
        expect(self.state()).to_have_attribute("data-stage", "batch")
        self.shot("t4-sequence")

        for step in (1, 2, 3):
            self.page.keyboard.press("ArrowRight")
            expect(self.state()).to_have_attribute("data-step", str(step))
        expect(self.state()).to_have_attribute("data-item", "task-c")
        expect(self.page).to_have_url(re.compile(r"\?step=3$"))
        expect(self.page.locator("#step-view")).to_contain_text("tasks ignore zones")
        self.shot("t4-sequence")

        self.page.locator('[data-replay="back"]').click()
        expect(self.state()).to_have_attribute("data-item", "lrp-a.0")
        expect(self.page).to_have_url(re.compile(r"\?step=2$"))
        self.page.reload()
        expect(self.state()).to_have_attribute("data-item", "lrp-a.0")
        expect(self.page.locator('[data-ident="lrp-a.0"]')).to_have_attribute("aria-current", "step")
        self.shot("t4-sequence")

        # Browser Back restores the previous step (U1).
        self.page.keyboard.press("ArrowRight")
        expect(self.state()).to_have_attribute("data-item", "task-c")
        self.page.go_back()
        expect(self.state()).to_have_attribute("data-item", "lrp-a.0")

        self.page.keyboard.press("End")
        expect(self.state()).to_have_attribute("data-stage", "commit")
        self.shot("t4-sequence")
        self.page.keyboard.press("Home")
        expect(self.state()).to_have_attribute("data-stage", "batch")
        self.page.locator('[data-replay="speed"]').select_option("4")
        self.page.keyboard.press(" ")
        expect(self.page.locator('[data-replay="play"]')).to_have_attribute("aria-pressed", "true")
        expect(self.state()).to_have_attribute("data-stage", "commit", timeout=10_000)
        expect(self.page.locator('[data-replay="play"]')).to_have_attribute("aria-pressed", "false")
        expect(self.page.locator('[data-replay="speed"]')).to_have_value("4")
        self.shot("t4-sequence")
        assert self.errors == []

    def test_t5_mismatch_verdicts_and_exact_errors(self) -> None:
        """dashboard.md T5 (A5, A6, G9): each failed item shows its exact error string, the
        verdict that excluded each cell is named, and the panel of an unplaced item agrees."""
        run = self.seed("mismatch")
        assert run.failures == MISMATCH_ERRORS
        for ident, error in MISMATCH_ERRORS.items():
            self.open(f"/auctions/{run.pk}/?step={run.order.index(ident) + 1}")
            expect(self.state()).to_have_attribute("data-item", ident)
            code = self.page.locator("#step-view .item-outcome code.placement-error")
            expect(code).to_have_text(f'"{error}"')
            self.shot(f"t5-{ident.split('.')[0]}")
        # huge-app: memory for the cells that pass the filters, the filter for the others.
        self.open(f"/auctions/{run.pk}/?step={run.order.index('huge-app.0') + 1}")
        rows = self.page.locator("#step-view tr.cand")
        verdicts = {row.get_attribute("data-cell"): row.inner_text() for row in rows.all()}
        assert "lacks memory" in verdicts["cell-1"] and "lacks memory" in verdicts["cell-3"]
        assert "fails placement tags" in verdicts["cell-2"]
        assert "fails rootfs" in verdicts["cell-4"]
        lacking = self.page.locator("#step-view .lacking").inner_text()
        assert "memory: cell-1, cell-3" in lacking and "rootfs: cell-4" in lacking
        assert "placement tags: cell-2" in lacking
        self.shot("t5-huge")

        # The unplaced chip on the grid opens the panel with each cell's verdict now.
        self.open("/grid/")
        self.page.locator('#tray [data-instance="smb-app.0"]').click()
        unplaced = self.page.locator("#panel .unplaced")
        expect(unplaced.locator("code.placement-error")).to_have_text(
            '"found no compatible cell with required volume drivers"')
        cells = {r.get_attribute("data-cell"): r.inner_text() for r in unplaced.locator("tr[data-cell]").all()}
        assert "fails volume drivers" in cells["cell-1"] and "fails rootfs" in cells["cell-4"]
        # G9: a change that can fit, on the cell that passes every other filter.
        expect(unplaced.locator(".smallest-change")).to_contain_text("add volume driver smbdriver to cell-1")
        self.shot("t5-panel")
        assert self.errors == []
