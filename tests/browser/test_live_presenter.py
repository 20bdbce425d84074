"""Presenter and kiosk in real browsers (dashboard.md 11: T10; C5, C6)."""

from __future__ import annotations

import time

import pytest
from live_browser import LiveBrowserCase
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def _world_and_presenter() -> str:
    from django.contrib.auth.models import Permission, User
    from django.test import Client

    from auction.live.publish import state_redis
    from auction.services.clock import clock_reset
    from auction.services.scenarios import scenario_load
    from auction.services.sim import auctioneer_run

    state_redis().delete("live:main:presenter")
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    user = User.objects.create_user("ann", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="present"))
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


class PresenterTests(LiveBrowserCase):
    def test_t10_followers_and_kiosk_follow_within_a_second(self) -> None:
        """T10 (C5, C6): follows within 1 s; controls disabled or absent; Unfollow works."""
        from auction.views.kiosk import kiosk_token

        session = self.run_as_worker(_world_and_presenter)
        lead = self.browser.new_context()
        lead.add_cookies([{"name": "sessionid", "value": session, "url": self.live_server_url}])
        presenter = self.open("/present/", lead)
        presenter.get_by_role("button", name="Present").click()
        expect(presenter.locator("body")).to_have_attribute("data-presenter-page", "1")
        expect(presenter.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)

        follower = self.open("/grid/", self.browser.new_context())
        kiosk = self.open(f"/kiosk/?follow=1&token={kiosk_token()}", self.browser.new_context())
        for page in (follower, kiosk):
            expect(page.locator("#presenter-state")).to_have_text("following an operator", timeout=3000)
        expect(follower.locator('select[name="kind"]')).to_be_disabled()
        expect(kiosk.locator("nav, #grid-filters")).to_have_count(0)  # no menus, no controls

        started = time.monotonic()
        presenter.select_option('select[name="kind"]', "task")
        expect(follower.locator('select[name="kind"]')).to_have_value("task", timeout=1000)
        expect(kiosk.locator('[data-instance="lrp-a.0"]')).to_have_class(
            __import__("re").compile(r"\bdim\b"), timeout=1000)
        took = time.monotonic() - started
        assert "kind=task" in follower.url and "token=" in kiosk.url
        self.shot(follower, "T10-presenter-1")
        self.shot(kiosk, "T10-presenter-2")
        assert took < 1.0, took

        follower.get_by_role("button", name="Unfollow").click()
        expect(follower.locator("#presenter")).to_be_hidden()
        expect(follower.locator('select[name="kind"]')).to_be_enabled()
        presenter.select_option('select[name="kind"]', "lrp")
        expect(kiosk.locator('[data-task="task-c"]')).to_have_class(
            __import__("re").compile(r"\bdim\b"), timeout=1000)
        expect(follower.locator('select[name="kind"]')).to_have_value("task")  # unfollowed
        self.shot(follower, "T10-presenter-3")
        for page in (presenter, follower, kiosk):
            assert page.errors == [], page.errors
            page.context.close()

class PresenterAwayTests(LiveBrowserCase):
    """The away times shortened in the server too: it is forked when the class starts."""

    @classmethod
    def setUpClass(cls) -> None:
        from unittest import mock

        from auction.live import coalescer
        from auction.live import presenter as p

        cls._patches = [mock.patch.object(p, "PRESENTER_AWAY_S", 3.0),
                        mock.patch.object(p, "PRESENTER_SEEN_EVERY_S", 0.5),
                        mock.patch.object(coalescer, "PRESENCE_CHECK_S", 0.5)]
        for patch in cls._patches:
            patch.start()
        super().setUpClass()

    @classmethod
    def tearDownClass(cls) -> None:
        super().tearDownClass()
        for patch in cls._patches:
            patch.stop()

    def test_a_presentation_ends_when_its_presenter_leaves(self) -> None:
        """C5: the presenter closes the browser; within the away time the follower is told
        the presentation ended and gets its controls back, and a new visitor is sent
        nowhere (it was pulled to the presenter's last page minutes later)."""
        session = self.run_as_worker(_world_and_presenter)
        lead = self.browser.new_context()
        lead.add_cookies([{"name": "sessionid", "value": session, "url": self.live_server_url}])
        presenter = self.open("/present/", lead)
        presenter.get_by_role("button", name="Present").click()
        expect(presenter.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        presenter.goto(self.live_server_url + "/lrps/")
        expect(presenter.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        follower = self.open("/grid/", self.browser.new_context())
        expect(follower).to_have_url(__import__("re").compile("/lrps/"), timeout=5000)
        expect(follower.locator("#presenter-state")).to_have_text("following an operator", timeout=3000)
        time.sleep(4)  # longer than the away time: the open presenter page keeps it
        expect(follower.locator("#presenter-state")).to_be_visible()
        lead.close()  # the presenter leaves
        expect(follower.locator("#presenter-ended")).to_be_visible(timeout=10_000)
        self.shot(follower, "C5-presenter-left")
        visitor = self.open("/events/", self.browser.new_context())
        expect(visitor.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        time.sleep(1)
        assert visitor.url.endswith("/events/")
        for page in (follower, visitor):
            assert page.errors == [], page.errors
            page.context.close()
