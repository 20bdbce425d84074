"""Keeping a named foundation current from /foundations/ in chromium (plans.md 3.3, 3.6):
upload a capture pasted as jq prints it (with a terminal transcript), keep it named,
replace it with next week's capture, delete it; replace and delete ask first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from live_browser import LiveBrowserCase
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
SHAPES = Path(__file__).resolve().parents[1] / "foundations" / "shapes"


def _world_and_operator() -> None:
    from django.contrib.auth.models import Permission, User

    from auction.services.clock import clock_reset
    from auction.services.scenarios import scenario_load

    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    user = User.objects.create_user("olga", password="right-password-1")
    user.user_permissions.add(Permission.objects.get(codename="control"))


class KeepCurrentTests(LiveBrowserCase):
    def test_upload_a_jq_pretty_capture_replace_it_and_delete_it(self) -> None:
        self.run_as_worker(_world_and_operator)
        page = self.browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(self.live_server_url + "/login/?next=/foundations/")
        page.get_by_label("Username").fill("olga")
        page.get_by_label("Password").fill("right-password-1")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(re.compile(r"/foundations/$"))
        expect(page.locator("body")).to_have_attribute("data-can-control", "true")

        # Kept aside: a jq-pretty `cfdot cells` and a transcript of `actual-lrp-groups | jq .`.
        page.set_input_files("#foundation-form input[type=file]",
                             [str(SHAPES / "cells-pretty.json"), str(SHAPES / "groups-transcript.txt")])
        page.check('input[name="mode"][value="keep"]')
        page.fill('input[name="name"]', "prod-eu")
        page.click("#foundation-form button[type=submit]")
        result = page.locator("[data-result]")
        expect(result).to_contain_text("Kept as foundation prod-eu (v1 sha256:", timeout=30_000)
        expect(result).to_contain_text("2 cells in 2 zones")
        expect(page.locator("[data-warnings] li")).to_have_count(3)
        expect(page.locator("[data-warnings]")).to_contain_text(
            'groups-transcript.txt:2: skipped, not JSON: Command "actual-lrp-groups" is deprecated')
        row = page.locator('tr[data-foundation="prod-eu"]')
        expect(row.locator("[data-version]")).to_contain_text("v1 sha256:")
        expect(row).to_contain_text("2024-06-10 07:11 UTC")
        self.shot(page, "foundation-kept-pretty")

        # Replace, asked first: saying no leaves v1.
        row.locator('input[type=file]').set_input_files(
            sorted(str(p) for p in (SHAPES.parent / "captures").glob("*.jsonl")))
        asked: list[str] = []
        page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
        row.get_by_role("button", name="replace", exact=True).click()
        page.wait_for_timeout(300)
        assert asked and asked[0].startswith("Replace foundation prod-eu (v1 sha256:"), asked
        expect(row.locator("[data-version]")).to_contain_text("v1 sha256:")
        page.once("dialog", lambda d: d.accept())
        row.get_by_role("button", name="replace", exact=True).click()
        expect(page.locator("[data-result]")).to_contain_text("Replaced foundation prod-eu, now v2 sha256:",
                                                              timeout=30_000)
        row = page.locator('tr[data-foundation="prod-eu"]')
        expect(row.locator("[data-version]")).to_contain_text("v2 sha256:")
        expect(row.locator("td").nth(2)).to_have_text("3")  # next week's capture: three cells
        self.shot(page, "foundation-replaced")

        # Delete, asked first.
        page.once("dialog", lambda d: d.accept())
        row.get_by_role("button", name="delete", exact=True).click()
        expect(page.locator("[data-result]")).to_contain_text("Deleted foundation prod-eu (v2 sha256:",
                                                              timeout=30_000)
        expect(page.locator('tr[data-foundation="prod-eu"]')).to_have_count(0)
        self.shot(page, "foundation-deleted")
        page.close()
        assert errors == [], errors
