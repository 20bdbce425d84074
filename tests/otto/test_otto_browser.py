"""T8 (dashboard.md 11): the otto-market scenario on the real processes, watched in chromium.

Real Redis, daphne, Celery worker and beat (LiveStack), plus ``run_otto_orchestrators``
and ``run_otto_auctioneer`` as processes. Asserts the countdown runs and freezes while
paused (O2), bids arrive (O3), the lowest accepted cost wins (otto.md 5), and a winner
that never starts (cell-4, start_failure_rate 1) leads to attempt 2 (O4, otto.md 7).
"""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from browser import launch, screenshot
from playwright.sync_api import expect, sync_playwright
from stack import LiveStack

pytestmark = [pytest.mark.browser, pytest.mark.processes]


@pytest.fixture(scope="module")
def market():
    live = LiveStack("otto")
    # This test starts the Otto processes itself, after the scenario and the pause.
    live.env["DIEGO_OTTO"] = "0"
    try:
        live.start()
        live.manage("load_scenario", "otto-market")
        live.cli("clock", "--pause")  # nothing closes until the test has seen the open lane
        live.spawn("orchestrators", "manage.py", "run_otto_orchestrators", "--seed", "7")
        time.sleep(3)  # the fleet joins tasks.auction; the tasks wait in tasks.for_auction meanwhile
        live.spawn("otto", "manage.py", "run_otto_auctioneer")
        yield live
    finally:
        live.stop()


def _left(page) -> dict[str, float]:  # type: ignore[no-untyped-def]
    pairs = page.eval_on_selector_all(
        ".otto-countdown[data-left]", "els => els.map(e => [e.dataset.auction, Number(e.dataset.left)])")
    return dict(pairs)


def _same_keys(a: dict[str, float], b: dict[str, float]) -> tuple[dict[str, float], dict[str, float]]:
    keys = a.keys() & b.keys()
    return {k: a[k] for k in keys}, {k: b[k] for k in keys}


def test_t8_countdown_bids_award_and_reauction(market: LiveStack) -> None:
    """dashboard.md T8, O1-O5; otto.md 5 (lowest cost wins), 7 (a non-starter leads to attempt 2)."""
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(market.url + "otto/")
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)

        # Bids arrive live on open cards (O3); the clock is paused, so every auction stays open.
        expect(page.locator("#otto-lane-open .bid").first).to_be_visible(timeout=20_000)
        page.wait_for_function("document.querySelectorAll('.otto-countdown[data-left]').length > 0")

        # Paused: every countdown is frozen (O2).
        frozen = _left(page)
        time.sleep(1.0)
        before, after = _same_keys(frozen, _left(page))
        assert before and before == after, "a countdown moved while the clock was paused"
        screenshot(page, "otto-t8-1-open-bids-paused")

        # Running at 1x: the bars shrink.
        market.cli("clock", "--resume")
        expect(page.locator("#sim-clock")).to_have_attribute("data-paused", "false", timeout=5_000)
        first = _left(page)
        # A live frame may re-render a card at any moment; every bar must still run down
        # within a few seconds (a frozen one never would).
        deadline = time.monotonic() + 4.0
        while True:
            time.sleep(0.3)
            before, after = _same_keys(first, _left(page))
            if before and all(after[k] < before[k] for k in before) or time.monotonic() > deadline:
                break
        assert before and all(after[k] < before[k] for k in before), ("the countdown bars did not move",
                                                                      before, after)
        screenshot(page, "otto-t8-2-running")

        # Awards: the winner is the lowest accepted cost on its card (otto.md 5).
        winner = page.locator("#otto-lane-awarded .otto-card, #otto-lane-closed .otto-card.otto-started").first
        expect(winner).to_be_visible(timeout=30_000)
        auction_id = winner.get_attribute("data-auction")
        card = page.locator(f"#otto-{auction_id}")
        won_by = card.locator(".award .winner").inner_text()
        costs = {row.get_attribute("data-bidder"): float(row.get_attribute("data-cost"))
                 for row in card.locator(".bid-accepted, .bid-declined").all()}
        screenshot(page, "otto-t8-3-award")
        assert costs, "the awarded card shows no bids"
        assert costs[won_by] == min(costs.values()), (won_by, costs)

        # A non-starter (cell-4 never starts) loses the task: attempt 2 (O4).
        reauctioned = page.locator(".otto-card").filter(
            has=page.locator(".history li", has_text="cell-4 did not start by")).first
        expect(reauctioned).to_be_visible(timeout=45_000)
        assert int(reauctioned.get_attribute("data-attempt")) >= 2
        expect(reauctioned.locator(".history")).to_contain_text(": attempt 2")
        screenshot(page, "otto-t8-4-attempt-2")
        # The roster shows cell-4's start timeout (O5).
        expect(page.locator('#otto-roster tr[data-orchestrator="cell-4"] td').nth(6)).not_to_have_text("0")
        browser.close()
    # The JSON agrees with the page.
    with urllib.request.urlopen(f"{market.url}api/v1/auctions/{auction_id}", timeout=10) as response:
        detail = json.loads(response.read())["auction"]
    assert detail["winner"] == won_by or detail["attempt"] > 1
    assert [e for e in errors if "favicon" not in e] == []
