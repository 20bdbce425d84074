"""The strategy comparison in a real browser (dashboard.md 11: T16; S1, S2, U1).

Harness (dashboard.md 11): ChannelsLiveServerTestCase forks daphne over
the file SQLite test database; the panes are in-memory worlds the page builds from its
URL, so the test only drives Debian's chromium through Playwright.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from live_browser import BrowserPageCase
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ALL = ["diego", "dea", "objective", "random"]


class ComparePageInBrowser(BrowserPageCase):
    viewport = {"width": 1600, "height": 1100}

    def open(self, path: str) -> None:
        self.page.goto(self.live_server_url + path)
        expect(self.page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)

    def panes(self) -> dict[str, tuple[int, float]]:
        out = {}
        for pane in self.page.locator("section.pane").all():
            out[pane.get_attribute("data-strategy")] = (
                int(pane.get_attribute("data-placed")), float(pane.get_attribute("data-distribution")))
        return out

    def test_t16_four_strategies_on_cold_start(self) -> None:
        """dashboard.md T16 (S1, S2): 4 strategies on cold-start: equal counts; random's
        distribution score > diego's; each pane has a dense grid, a tray and metrics with
        the best marked."""
        self.open("/compare/?strategies=diego,dea,objective,random&scenario=cold-start&t=60")
        panes = self.page.locator("section.pane")
        expect(panes).to_have_count(4)
        self.shot("t16-compare")
        values = self.panes()
        assert list(values) == ALL
        assert {placed for placed, _ in values.values()} == {200}, values
        assert values["random"][1] > values["diego"][1], values
        for strategy in ALL:
            pane = self.page.locator(f'section.pane[data-strategy="{strategy}"]')
            expect(pane.locator(".dense .dense-cell")).to_have_count(20)
            expect(pane.locator(".pane-tray")).to_contain_text("all work placed")
            expect(pane.locator('tr[data-metric="communications"]')).to_be_visible()
        diego_dist = self.page.locator('section.pane[data-strategy="diego"] tr[data-metric="distribution_final"]')
        expect(diego_dist.locator('[aria-label="best"]')).to_have_count(1)
        random_dist = self.page.locator('section.pane[data-strategy="random"] tr[data-metric="distribution_final"]')
        expect(random_dist.locator('[aria-label="best"]')).to_have_count(0)
        # Every cell bar of diego's pane holds 10 instances; random's do not all.
        diego_counts = {int(c) for c in self.page.locator(
            'section.pane[data-strategy="diego"] .dense-cell').evaluate_all(
            "els => els.map(e => e.dataset.instances)")}
        assert diego_counts == {10}
        assert self.errors == []

    def test_url_keeps_the_strategy_set_and_objective_errors_show(self) -> None:
        """dashboard.md S1, S2, U1: dropping a strategy updates the URL, which survives a
        reload; an edited objective shows `invalid objective: <reason>` in its pane."""
        self.open("/compare/?strategies=diego,dea,objective,random&scenario=cold-start&t=30")
        self.page.locator('input[name="strategies"][value="dea"]').uncheck()
        self.page.locator('textarea[name="objective.f"]').fill("r.available_memory_mb +")
        self.page.locator('button[type="submit"]').click()
        expect(self.page.locator("section.pane")).to_have_count(3)
        query = parse_qs(urlparse(self.page.url).query)
        assert query["strategies"] == ["diego", "objective", "random"]
        error = self.page.locator('section.pane[data-strategy="objective"] .pane-error')
        expect(error).to_contain_text("invalid objective: ")
        self.shot("t16-objective-error")
        self.page.reload()
        expect(self.page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        assert [p.get_attribute("data-strategy") for p in self.page.locator("section.pane").all()] == [
            "diego", "objective", "random"]
        expect(self.page.locator('section.pane[data-strategy="objective"] .pane-error')).to_contain_text(
            "invalid objective: ")
        # Step the comparison clock: every pane moves to the same instant.
        self.page.get_by_role("link", name="+30 s").click()
        expect(self.page.locator("[data-cmp-time]")).to_have_text("0:01:00.0")
        assert self.errors == []
