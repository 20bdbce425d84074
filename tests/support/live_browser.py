"""A forked daphne (ChannelsLiveServerTestCase) plus Debian's chromium, for the live pages.

The coalescer runs inside that daphne (auction/live/coalescer.py), so services called
from the test process only mark keys in the session's private Redis, exactly as a
Celery worker would, and the frames come from the server process.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from browser import launch, screenshot
from channels.testing import ChannelsLiveServerTestCase
from playwright.sync_api import expect, sync_playwright


class LiveBrowserCase(ChannelsLiveServerTestCase):
    serve_static = True

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()  # forks daphne first: the child must not inherit the flag below
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        cls._playwright = sync_playwright().start()
        cls.browser = launch(cls._playwright)
        cls.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="worker")

    @classmethod
    def tearDownClass(cls) -> None:
        # A presenter left by this class would lead the next class's pages away (C5).
        from auction.live.presenter import _key
        from auction.live.publish import state_redis

        try:
            state_redis().delete(_key())
        except Exception:  # noqa: BLE001 - no Redis: nothing was presented
            pass
        # The worker thread's database connection goes with it: left open, it outlives the
        # class (nothing closes another thread's connections) and the session's end cannot
        # drop the PostgreSQL test database ("being accessed by other users").
        from django.db import connections

        cls.worker.submit(connections.close_all).result(timeout=60)
        cls.worker.shutdown(wait=True)
        cls.browser.close()
        cls._playwright.stop()
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        super().tearDownClass()

    def run_as_worker(self, fn, *args: Any, **kwargs: Any) -> Any:  # type: ignore[no-untyped-def]
        """Run a service in another thread, as a Celery worker would (dashboard.md 11)."""
        return self.worker.submit(fn, *args, **kwargs).result(timeout=300)

    def open(self, path: str, context=None):  # type: ignore[no-untyped-def]
        page = (context or self.browser).new_page()
        page.errors = []
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.goto(self.live_server_url + path)
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        return page

    def shot(self, page, name: str) -> None:  # type: ignore[no-untyped-def]
        screenshot(page, name)


class BrowserPageCase(ChannelsLiveServerTestCase):
    """One chromium for the class, a fresh page per test (``viewport``), page errors kept
    in ``self.errors`` and numbered screenshots: the replay and compare page tests."""

    viewport = {"width": 1400, "height": 1000}

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()  # forks daphne
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        cls.playwright = sync_playwright().start()
        cls.browser = launch(cls.playwright)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.browser.close()
        cls.playwright.stop()
        super().tearDownClass()

    def setUp(self) -> None:
        self.page = self.browser.new_page(viewport=self.viewport)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.shots = 0

    def tearDown(self) -> None:
        self.page.close()

    def shot(self, name: str) -> None:
        self.shots += 1
        screenshot(self.page, f"{name}-{self.shots}")
