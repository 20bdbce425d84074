"""Desired vs actual, metrics, feed and operator controls in a real browser, against the
app as `make run` starts it (real Redis, daphne, Celery worker and beat).

dashboard.md T6 (freshness), T7 (crash back-off), T9 (AZ loss and return), T11 (scale
3 → 5, audit entry, -1 rejected); the controls of C1/C2 and the feed of M2 are driven
by clicking, as an operator would.
"""

from __future__ import annotations

import re
import time

import pytest
from browser import launch, screenshot
from convergence import sign_in
from playwright.sync_api import Page, expect, sync_playwright
from stack import LiveStack

pytestmark = [pytest.mark.browser, pytest.mark.processes]


@pytest.fixture
def stack():
    live = LiveStack("lrps")
    try:
        live.start()
        yield live
    finally:
        live.stop()


def instance(page: Page, ident: str, presence: str = "ORDINARY"):  # type: ignore[no-untyped-def]
    return page.locator(f'tr[data-instance="{ident}"][data-presence="{presence}"]')


def chaos(page: Page) -> None:
    details = page.locator("details.chaos")
    if details.get_attribute("open") is None:
        page.locator("details.chaos > summary").click()


def status_says(page: Page, text: str) -> None:
    expect(page.locator("#control-status")).to_contain_text(text, timeout=10_000)


def row(status: dict, guid: str, index: int, presence: str = "ORDINARY") -> dict | None:
    return next((a for a in status["actual_lrps"] if a["process_guid"] == guid
                 and a["index"] == index and a["presence"] == presence), None)


def all_running(status: dict) -> bool:
    return sum(1 for a in status["actual_lrps"] if a["presence"] == "ORDINARY" and a["state"] == "RUNNING") == 5


def pause_a_pass_away(stack: LiveStack) -> None:
    """Pause the clock at least 17 sim-s before the next convergence pass, so a failure
    made now has its presence lapse (10-15 s) before that pass runs."""
    stack.cli("clock", "--pause")
    status = stack.status()
    room = status["next_convergence_at"] - status["now"]
    if room < 17:  # let the coming pass run first, so the next one is 30 s away
        step_to_the_next_pass(stack)


def step_to_the_next_pass(stack: LiveStack) -> None:
    """Step a paused clock just past the next convergence pass and wait for that pass."""
    status = stack.status()
    stack.cli("clock", "--step", str(status["next_convergence_at"] - status["now"] + 0.5))
    stack.wait_for(lambda s: any(p["at"] == status["next_convergence_at"] for p in s["passes"]),
                   what="the pass at " + str(status["next_convergence_at"]))


def test_t11_scale_from_the_dashboard_adds_two_blocks_and_an_audit_entry(stack: LiveStack) -> None:
    """dashboard.md T11, C2 (scale an app), AD4 (audit entry in the feed and /events/)."""
    stack.wait_for(all_running, what="the seed's 5 instances RUNNING")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        sign_in(page, stack, "grid/")
        chaos(page)
        page.select_option("select[name=process_guid]", "lrp-a")
        page.fill("input[name=instances]", "5")
        page.get_by_role("button", name="Scale").click()
        status_says(page, "lrp-a scaled to 5")
        for ident in ("lrp-a.3", "lrp-a.4"):
            expect(page.locator(f'[data-cell-id] [data-instance="{ident}"]')).to_have_count(1, timeout=20_000)
        screenshot(page, "t11-scaled-1")
        # The audit entry reaches the feed live, with who and what changed.
        page.locator("#feed-details > summary").click()
        expect(page.locator('#feed-list .feed-row[data-type="desired_lrp_update"]')).to_contain_text(
            "instances 3 → 5", timeout=10_000)
        expect(page.locator('#feed-list .feed-row[data-type="desired_lrp_update"]')).to_contain_text("by an operator")
        # M2: paused, the feed holds new rows back and says how many there are.
        page.get_by_role("button", name="Pause feed").click()
        page.locator("button[name=action][value=pause]").click()
        status_says(page, "clock paused")
        expect(page.locator("#feed-new")).to_have_text(re.compile(r"^[1-9]\d* new$"), timeout=10_000)
        expect(page.locator('#feed-list .feed-row[data-type="clock_pause"]')).to_have_count(0)
        screenshot(page, "t11-feed-paused")
        page.get_by_role("button", name="Resume feed").click()
        expect(page.locator('#feed-list .feed-row[data-type="clock_pause"]')).to_have_count(1)
        expect(page.locator("#feed-new")).to_be_hidden()
        # Filter by type: only the operator's actions stay visible.
        page.select_option("#feed-type", "control")
        expect(page.locator('#feed-list .feed-row[data-family="auction"]').first).to_be_hidden()
        expect(page.locator('#feed-list .feed-row[data-type="clock_pause"]')).to_be_visible()
        page.select_option("#feed-type", "")
        page.fill("input[name=instances]", "-1")
        page.get_by_role("button", name="Scale").click()
        expect(page.locator("#control-status [role=alert]")).to_contain_text("Invalid field: instances")
        screenshot(page, "t11-rejected-2")
        page.goto(stack.url + "events/?type=control")
        expect(page.locator('#events tr[data-type="desired_lrp_update"]')).to_have_count(1)
        browser.close()
    audit = stack.manage("shell", "--no-imports", "-c", "from auction.models import AuditEntry as A; "
                         "print([(a.action, a.target, a.user.username, a.source, a.diff['instances']) "
                         "for a in A.objects.filter(action='desired_lrp_update')])")
    assert audit.strip().splitlines()[-1] == "[('desired_lrp_update', 'lrp-a', 'admin', 'dashboard', [3, 5])]"
    assert row(stack.status(), "lrp-a", 5) is None  # -1 changed nothing


def test_t7_crashes_one_and_two_restart_at_once_the_third_waits_30_s(stack: LiveStack) -> None:
    """dashboard.md T7, C3, D2; bbs.md 3: n = 1, 2 restart at once; n = 3 CRASHED for B(3) = 30 s."""
    stack.wait_for(all_running, what="the seed's 5 instances RUNNING")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        sign_in(page, stack, "lrps/")
        page.get_by_role("button", name="Instances of lrp-a").click()
        line = instance(page, "lrp-a.0")
        expect(line).to_be_visible()
        chaos(page)
        for n in (1, 2):
            expect(line).to_have_attribute("data-state", "RUNNING", timeout=20_000)
            page.fill("input[name=instance]", "lrp-a.0")
            page.get_by_role("button", name="Crash instance").click()
            status_says(page, "lrp-a.0 crashed")
            # Restarted in the same call: never CRASHED, back to RUNNING with count n.
            expect(line.locator("td").nth(6)).to_have_text(str(n), timeout=10_000)
            expect(line).not_to_have_attribute("data-state", "CRASHED")
            expect(line).to_have_attribute("data-state", "RUNNING", timeout=20_000)
            screenshot(page, f"t7-crash-{n}")
        # The third crash: pause first so the 30 s back-off reads exactly.
        page.locator("button[name=action][value=pause]").click()
        status_says(page, "clock paused")
        page.fill("input[name=instance]", "lrp-a.0")
        page.get_by_role("button", name="Crash instance").click()
        expect(line).to_have_attribute("data-state", "CRASHED", timeout=10_000)
        expect(line.locator('[data-col="restart"]')).to_have_text("in 30 s, next pass")
        expect(page.locator('#lrp-lrp-a [data-col="status"]')).to_contain_text("crashing")
        screenshot(page, "t7-crash-3-backoff")
        # Running again, the back-off ends and a pass restarts it.
        page.locator("button[name=action][value=resume]").click()
        page.select_option("select[name=speed]", "16")
        page.get_by_role("button", name="Set speed").click()
        expect(line).not_to_have_attribute("data-state", "CRASHED", timeout=60_000)
        screenshot(page, "t7-restarted")
        browser.close()


def test_t6_extras_are_held_while_the_domain_is_stale_and_retired_after_a_bump(stack: LiveStack) -> None:
    """dashboard.md T6, D3; bbs.md 4.4, 5: "1 extra, held: cf-apps stale"; a bump retires it."""
    stack.wait_for(all_running, what="the seed's 5 instances RUNNING")
    pause_a_pass_away(stack)
    victim = row(stack.status(), "lrp-a", 2)["cell_id"]
    stack.cli("fail-cell", victim)
    stack.cli("clock", "--step", "16")  # its presence lapses 10-15 s after the failure
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        sign_in(page, stack, "lrps/")
        chaos(page)
        page.select_option("select[name=process_guid]", "lrp-a")
        page.fill("input[name=instances]", "2")
        page.get_by_role("button", name="Scale").click()
        status_says(page, "lrp-a scaled to 2")
        # The stop cannot reach lrp-a.2's cell: it stays, an extra.
        lrp_a = page.locator("#lrp-lrp-a")
        expect(lrp_a.locator('[data-col="extra"]')).to_have_text("2", timeout=10_000)
        page.get_by_role("button", name="Expire cf-apps now").click()
        status_says(page, "cf-apps expired now")
        expect(lrp_a.locator('[data-col="extra"]')).to_contain_text("1 extra, held: cf-apps stale", timeout=10_000)
        expect(page.locator('#domains tr[data-domain="cf-apps"]')).to_contain_text("stale")
        expect(page.locator(".banner")).to_have_text(re.compile(
            "Extras are retired only while their domain is fresh; missing instances are created regardless."))
        screenshot(page, "t6-held-1")
        # 8x from here: the two passes this test waits for come every 3.75 wall-s, not 30.
        stack.cli("clock", "--speed", "8")
        page.locator("button[name=action][value=resume]").click()
        passes_before = len(stack.status()["passes"])
        stack.wait_for(lambda s: len(s["passes"]) >= passes_before + 1, timeout=60, what="a pass while stale")
        # The pass suspected lrp-a.2 and replaced it, but retired nothing.
        expect(lrp_a.locator('[data-col="extra"]')).to_contain_text("held: cf-apps stale", timeout=10_000)
        assert row(stack.status(), "lrp-a", 2) is not None
        screenshot(page, "t6-held-after-pass-2")
        page.get_by_role("button", name="Bump cf-apps for 120 s").click()
        status_says(page, "cf-apps bumped")
        expect(page.locator('#domains tr[data-domain="cf-apps"]')).to_contain_text("fresh", timeout=10_000)
        # The next pass retires the extra.
        expect(instance(page, "lrp-a.2")).to_have_count(0, timeout=60_000)
        expect(lrp_a.locator('[data-col="extra"]')).to_have_text("—")
        screenshot(page, "t6-retired-3")
        browser.close()
    assert any("lrp-a.2" in p["lrp"]["retire"] for p in stack.status()["passes"])


def test_t9_fail_an_az_then_restore_it(stack: LiveStack) -> None:
    """dashboard.md T9, C2, C3, M1: missing, then suspects, then re-placed; LRPsMissing 0."""
    stack.wait_for(all_running, what="the seed's 5 instances RUNNING")
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        sign_in(page, stack, "lrps/")
        chaos(page)
        # Paused, so the suspects stay on screen: a replacement that starts ends its
        # suspect (bbs.md 6), and at speed that can happen within one frame of the pass.
        pause_a_pass_away(stack)
        page.select_option("select[name=zone]", "z2")
        page.get_by_role("button", name="Fail AZ").click()
        status_says(page, "zone z2 failed (2 cells)")
        stack.cli("clock", "--step", "16")  # z2's presences lapse 10-15 s after the failure
        step_to_the_next_pass(stack)
        # The first pass without z2's presences: suspects, and SuspectCells rises.
        expect(page.locator("#metric-SuspectCells")).to_have_attribute("data-value", "2", timeout=20_000)
        page.wait_for_function("""() => [...document.querySelectorAll('[data-lrp] [data-col="suspect"]')]
            .reduce((sum, cell) => sum + (parseInt(cell.textContent, 10) || 0), 0) >= 1""", timeout=20_000)
        screenshot(page, "t9-suspects-1")
        page.get_by_role("button", name="Restore AZ").click()
        status_says(page, "zone z2 restored (2 cells)")
        page.select_option("select[name=speed]", "8")
        page.get_by_role("button", name="Set speed").click()
        status_says(page, "speed 8×")
        page.locator("button[name=action][value=resume]").click()
        status_says(page, "clock running")
        expect(page.locator("#metric-SuspectCells")).to_have_attribute("data-value", "0", timeout=60_000)
        expect(page.locator("#metric-LRPsMissing")).to_have_attribute("data-value", "0")
        for guid in ("lrp-a", "lrp-b"):
            expect(page.locator(f'#lrp-{guid} [data-col="suspect"]')).to_have_text("0", timeout=60_000)
        screenshot(page, "t9-restored-2")
        page.locator("#feed-details > summary").click()
        expect(page.locator('#feed-list .feed-row[data-family="chaos"]').first).to_be_visible()
        browser.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all_running(stack.status()):
        time.sleep(1)
    assert all_running(stack.status())


def desired_instances(stack: LiveStack, guid: str) -> int:
    code = f"from auction.models import DesiredLRP; print(DesiredLRP.objects.get(process_guid={guid!r}).instances)"
    return int(stack.manage("shell", "-c", code).split()[-1])


def test_c7_a_big_scale_asks_first_and_shows_the_real_outcome(stack: LiveStack) -> None:
    """dashboard.md C7: scaling lrp-a from 3 to 100000 asks (10x, and past the cluster's
    memory); Cancel changes nothing; "Scale anyway" scales and says so."""
    stack.wait_for(all_running, what="the seed's 5 instances RUNNING")
    errors: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        sign_in(page, stack, "grid/")
        chaos(page)
        form = page.locator("form[data-chaos*='scale']")
        form.locator("select[data-choices=apps]").select_option("lrp-a")
        form.locator("input[name=instances]").fill("100000")
        form.locator("button[value=scale]").click()
        question = page.locator("#control-status .control-question")
        expect(question).to_contain_text("from 3 to 100000 instances")
        expect(question).to_contain_text("scale anyway?")
        screenshot(page, "c7-question")
        question.get_by_role("button", name="Cancel").click()
        expect(page.locator("#control-status")).to_contain_text("cancelled: nothing changed")
        assert desired_instances(stack, "lrp-a") == 3
        form.locator("button[value=scale]").click()
        page.locator("#control-status").get_by_role("button", name="Scale anyway").click()
        expect(page.locator("#control-status")).to_contain_text("lrp-a scaled to 100000", timeout=30_000)
        assert desired_instances(stack, "lrp-a") == 100000
        browser.close()
    assert errors == [], errors
