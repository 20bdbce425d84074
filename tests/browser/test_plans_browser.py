"""Plans in a real browser (plans.md 1.5, 1.6, 2.1, 2.2): an operator composes "fail zone
z2" on /plans/ with the composer, reads the diff against the baseline, asks how many more
of a size fit, applies a scale plan and watches the live cluster match the prediction.

Harness: ChannelsLiveServerTestCase forks daphne over the file SQLite test database; the
live cluster is seed-example run to 60 sim-s with its clock paused, so the test moves it
on itself (as the beat would) after Apply.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from live_browser import BrowserPageCase
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


class PlansInBrowser(BrowserPageCase):
    viewport = {"width": 1400, "height": 1000}

    def setUp(self) -> None:
        super().setUp()
        from auction.services.sim import simulate_in_database

        simulate_in_database("seed-example", 60.0)
        User.objects.create_superuser("admin", "admin@example.com", "pw-for-tests")
        self.console: list[str] = []
        self.page.on("console", lambda m: self.console.append(m.text) if m.type == "error" else None)
        self.page.goto(self.live_server_url + "/admin/login/?next=/plans/")
        self.page.fill("#id_username", "admin")
        self.page.fill("#id_password", "pw-for-tests")
        self.page.click("input[type=submit]")
        self.page.wait_for_url(re.compile(r"/plans/$"))
        expect(self.page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)

    def compose(self, kind: str, **fields: str) -> None:
        self.page.select_option("#change-kind", kind)
        box = self.page.locator(f'fieldset.change-fields[data-kind="{kind}"]')
        expect(box).to_be_visible()
        expect(self.page.locator("fieldset.change-fields:visible")).to_have_count(1)  # only its fields
        for name, value in fields.items():
            field = box.locator(f'[data-field="{name}"]')
            if field.evaluate("e => e.tagName") == "SELECT":
                field.select_option(value)
            else:
                field.fill(value)
        self.page.click("#change-add")

    def test_fail_zone_capacity_and_an_applied_scale_plan(self) -> None:
        page = self.page
        expect(page.locator('nav a[aria-current="page"]')).to_have_text("Plans")
        self.compose("fail_zone", zone="z2")
        expect(page.locator("#plan-changes")).to_have_value("fail_zone zone=z2")
        page.fill('input[name="horizon"]', "300")
        self.shot("plans-compose")
        page.click("#plan-run")
        page.wait_for_url(re.compile(r"/plans/\d+/$"))
        result = page.locator(".plan-result")
        expect(result).to_have_attribute("data-status", "done")
        # z1 alone cannot hold 3 x 2 GB and 2 x 5 GB: one instance never placed.
        expect(page.locator("[data-ttc]")).to_contain_text("never within the horizon")
        expect(page.locator("[data-unplaced]")).to_contain_text("1")
        expect(page.locator(".plan-warnings")).to_contain_text("never placed (insufficient resources: memory)")
        expect(page.locator('tr[data-app="lrp-a"]')).to_have_class(re.compile("changed"))
        expect(page.locator("#plan-zones")).to_contain_text("z2")
        expect(page.locator("a", has_text="Download report")).to_have_attribute("download", "")
        self.shot("plans-fail-zone-diff")

        page.goto(self.live_server_url + "/plans/")
        page.fill('.capacity-form input[name="memory_mb"]', "2048")
        page.click("#capacity-ask")
        fits = page.locator("#capacity-answer [data-fits]")
        expect(fits).to_be_visible()
        assert int(fits.inner_text()) > 0
        expect(page.locator("#capacity-answer")).to_contain_text("insufficient resources: memory")
        self.shot("plans-capacity")

        page.fill("#plan-changes", "")
        self.compose("scale", process_guid="lrp-a", instances="5")
        expect(page.locator("#plan-changes")).to_have_value("scale process_guid=lrp-a instances=5")
        page.fill('input[name="horizon"]', "120")
        page.click("#plan-run")
        page.wait_for_url(re.compile(r"/plans/\d+/$"))
        plan_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#plan-apply")
        expect(page.locator(".applied")).to_contain_text("applied at sim 60 s")
        expect(page.locator("#plan-beside")).to_be_visible()
        # The beat's part: the live cluster runs on to the plan's horizon.
        from auction.services.store import DbStore
        from auction.sim.driver import advance

        advance(DbStore(trigger_auctions=False), 60.0 + 120)
        expect(page.locator(".match")).to_have_text("live matches the prediction", timeout=15_000)
        expect(page.locator("h2", has_text="Prediction beside the live cluster")).to_contain_text("120 of 120 sim-s")
        self.shot("plans-applied-beside-live")
        from auction.models import AuditEntry, Plan

        assert Plan.objects.get(pk=plan_id).applied_at is not None
        assert AuditEntry.objects.filter(action="plan_apply", target=f"plan-{plan_id}").exists()

        page.goto(self.live_server_url + "/grid/")
        chips = page.locator("#zone-loss .zl-chip")
        expect(chips).to_have_count(2, timeout=10_000)
        expect(chips.first).to_contain_text("loss of z1")
        self.shot("plans-grid-zone-loss")
        assert not self.errors, self.errors
        assert not self.console, self.console
