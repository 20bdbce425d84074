"""Signing in and out of the dashboard in chromium (dashboard.md AD6, AD7)."""

from __future__ import annotations

import pytest
from live_browser import LiveBrowserCase
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def _world_and_operator() -> None:
    from django.contrib.auth.models import Permission, User

    from auction.live.publish import state_redis
    from auction.services.clock import clock_reset
    from auction.services.scenarios import scenario_load

    state_redis().delete("live:main:presenter")  # an earlier test's presenter is not followed
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    user = User.objects.create_user("olga", password="right-password-1")  # not staff
    user.user_permissions.add(Permission.objects.get(codename="control"))


class SignInTests(LiveBrowserCase):
    def test_an_operator_signs_in_from_the_header_and_out_again(self) -> None:
        self.run_as_worker(_world_and_operator)
        page = self.open("/lrps/")
        page.get_by_role("link", name="Sign in", exact=True).click()
        expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        page.get_by_label("Username").fill("olga")
        page.get_by_label("Password").fill("wrong")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("alert")).to_contain_text("Please enter a correct username and password")
        self.shot(page, "signin-refused")
        page.get_by_label("Username").fill("olga")
        page.get_by_label("Password").fill("right-password-1")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/lrps/")
        expect(page.locator(".account-name")).to_have_text("olga")
        expect(page.locator("body")).to_have_attribute("data-can-control", "true")
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        self.shot(page, "signin-signed-in")
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("link", name="Sign in", exact=True)).to_be_visible()
        expect(page.locator("body")).to_have_attribute("data-can-control", "false")
        assert page.errors == [], page.errors
