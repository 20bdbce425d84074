"""End to end: the app as `make run` starts it, in a real browser (issue: foundation).

Real processes (bundled Redis, daphne, Celery worker and beat under diego_web.supervise), Debian's
chromium through Playwright. dashboard.md L1 (snapshot first), L7 (clock frames, no
polling), C1 (clock bar), G1/G2 (zones and cells with their stable hooks).
"""

from __future__ import annotations

import time

import pytest
from browser import launch, screenshot
from playwright.sync_api import expect, sync_playwright
from stack import LiveStack, session_members

pytestmark = [pytest.mark.browser, pytest.mark.processes]


@pytest.fixture(scope="module")
def stack():
    live = LiveStack("e2e", otto=True)  # all of make run, Otto too
    try:
        live.startup_seconds = live.start()
        yield live
    finally:
        live.stop()


def test_clock_advances_live_over_the_websocket(stack: LiveStack) -> None:
    """dashboard.md C1, L1, L7: beat ticks the clock, the frame reaches the page."""
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(stack.url)
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)

        clock = page.locator("#sim-clock")
        seen = [float(clock.get_attribute("data-sim-now"))]
        deadline = time.monotonic() + 20
        # data-sim-now only changes when a server frame replaces the element.
        while len(seen) < 3 and time.monotonic() < deadline:
            value = float(clock.get_attribute("data-sim-now"))
            if value > seen[-1]:
                seen.append(value)
            time.sleep(0.1)
        screenshot(page, "foundation-grid")
        browser.close()
    assert len(seen) >= 3, f"the clock advanced fewer than twice: {seen}\n{stack.log()[-3000:]}"
    assert errors == [], errors
    # A clean start: nobody logs a connection error while Redis comes up.
    assert "ERROR" not in stack.log() and "Traceback" not in stack.log(), stack.log()[-3000:]


def test_grid_shows_the_seeded_cells_with_stable_hooks(stack: LiveStack) -> None:
    """dashboard.md G1, G2; scenario seed-example: 4 cells in 2 zones."""
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(stack.url)
        cells = page.locator("[data-cell-id]")
        expect(cells).to_have_count(4)
        zones = {cells.nth(i).get_attribute("data-zone") for i in range(4)}
        ids = {cells.nth(i).get_attribute("data-cell-id") for i in range(4)}
        browser.close()
    assert zones == {"z1", "z2"}
    assert ids == {"cell-1", "cell-2", "cell-3", "cell-4"}


def test_seeded_work_is_placed_and_shown_live(stack: LiveStack) -> None:
    """auction.md 1 + dashboard.md G3/G4: the seed's 7 items run on cells, pushed live."""
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(stack.url)
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        for ident in ("lrp-a.0", "lrp-a.1", "lrp-a.2", "lrp-b.0", "lrp-b.1"):
            expect(page.locator(f'[data-cell-id] [data-instance="{ident}"]')).to_have_attribute(
                "data-state", "RUNNING", timeout=20_000)
        expect(page.locator("[data-cell-id] [data-task]")).to_have_count(2)
        expect(page.locator("#tray")).to_contain_text("all work placed")
        screenshot(page, "grid-seed-placed")
        browser.close()


def test_admin_login_with_the_printed_account(stack: LiveStack) -> None:
    """The demo operator account exists and logs in (password from DIEGO_ADMIN_PASSWORD)."""
    assert "user admin" in stack.bootstrap_output
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.goto(stack.url + "admin/")
        page.fill("#id_username", "admin")
        page.fill("#id_password", "diego-test-admin")
        page.click("input[type=submit]")
        expect(page.locator("#site-name")).to_contain_text("diego-web")
        page.goto(stack.url + "admin/auction/desiredlrp/")
        expect(page.locator("#result_list")).to_contain_text("lrp-a")
        browser.close()


def test_ctrl_c_stops_every_process(stack: LiveStack) -> None:
    """`make run` contract: Ctrl-C leaves no process behind (runs last in this module)."""
    children = stack.child_pids()
    assert set(children) == {"redis", "web", "worker", "callbacks", "plans", "beat", "otto",
                             "orchestrators"}, stack.log()
    sessions = set(children.values()) | {stack.proc.pid}
    assert len(session_members(sessions)) >= 4  # the check below can see them
    stack.interrupt()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and session_members(sessions):
        time.sleep(0.1)
    assert session_members(sessions) == [], f"still running after Ctrl-C:\n{stack.log()[-2000:]}"
