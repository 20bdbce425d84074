"""Bursts and reconnects in a real browser (dashboard.md 11: T12, T13; L3, L5, L6)."""

from __future__ import annotations

import time

import pytest
from live_browser import LiveBrowserCase
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def _cluster(cells: int, zones: int = 4) -> None:
    from auction.models import Domain
    from auction.services.clock import clock_reset
    from bench.bbs import make_cells

    clock_reset(0.0, paused=True)
    Domain.objects.get_or_create(name="cf-apps", defaults={"ttl_s": 0, "expires_at": None})
    make_cells(cells, zones, 65_536, 262_144, 250)


def _desire(apps: int, instances: int, prefix: str = "burst") -> None:
    from auction.services.lrps import desired_lrp_desire

    for a in range(apps):
        desired_lrp_desire({"process_guid": f"{prefix}-{a:04d}", "domain": "cf-apps",
                            "instances": instances, "memory_mb": 128, "disk_mb": 128})


def _on_cells() -> int:
    from auction.models import ActualLRP, Task

    return (ActualLRP.objects.filter(state__in=["CLAIMED", "RUNNING"]).count()
            + Task.objects.filter(state="RUNNING").count())


class BurstTests(LiveBrowserCase):
    def _frames(self, page) -> list[int]:  # type: ignore[no-untyped-def]
        frames: list[int] = []
        page.on("websocket", lambda ws: ws.on("framereceived", lambda p: frames.append(len(p))))
        return frames

    def test_t12_burst_of_10000_placements(self) -> None:
        """T12 (L3): 1,000 cells, 10,000 placements: frames <= duration/0.25 + 2; blocks = DB."""
        from auction.services.sim import auctioneer_run
        from auction.services.work import set_trigger_suppressed

        set_trigger_suppressed(True)
        self.run_as_worker(_cluster, 1000)
        self.run_as_worker(_desire, 100, 100)
        page = self.browser.new_page(viewport={"width": 1400, "height": 900})
        frames = self._frames(page)
        page.goto(self.live_server_url + "/grid/?mode=dense")
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=30_000)
        started = time.monotonic()
        placed = sum(s.placed for s in self.run_as_worker(auctioneer_run))
        assert placed == 10_000
        expect(page.locator(".cell [data-instance]")).to_have_count(10_000, timeout=60_000)
        duration = time.monotonic() - started
        assert page.locator(".cell [data-instance]").count() == self.run_as_worker(_on_cells)
        assert len(frames) <= duration / 0.25 + 2, (len(frames), duration)
        self.shot(page, "T12-burst-1")
        page.close()

    def test_t13_reconnect_banner_snapshot_and_bounded_dom(self) -> None:
        """T13 (L5, L6): offline then online: banner, a fresh snapshot, node count flat."""
        from auction.services.sim import auctioneer_run
        from auction.services.work import set_trigger_suppressed

        set_trigger_suppressed(True)
        self.run_as_worker(_cluster, 40, 2)
        self.run_as_worker(_desire, 10, 20, "warm")
        self.run_as_worker(auctioneer_run)
        # The network between page and server, as a switch: while "down", the live
        # socket is dropped (1006-like: server gone) and every reconnect attempt fails.
        network = {"up": True, "sockets": []}

        def route(ws) -> None:  # type: ignore[no-untyped-def]
            if not network["up"]:
                ws.close(code=1012, reason="network down")
                return
            ws.connect_to_server()
            network["sockets"].append(ws)

        context = self.browser.new_context()
        context.route_web_socket("**/ws/live/**", route)
        page = self.open("/grid/", context)
        nodes_before = page.evaluate("document.getElementsByTagName('*').length")
        network["up"] = False
        for ws in network["sockets"]:
            ws.close(code=1012, reason="network down")
        expect(page.locator("body")).to_have_attribute("data-ws", "closed", timeout=15_000)
        page.wait_for_timeout(2500)
        expect(page.locator(".ws-text")).to_have_text(
            __import__("re").compile(r"reconnecting, last update [2-9]\d* s ago"))
        self.shot(page, "T13-reconnect-1")
        # 5,000 changes while the page is away (instances desired, placed, events stored).
        self.run_as_worker(_desire, 50, 100, "away")
        self.run_as_worker(auctioneer_run)
        network["up"] = True
        expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=60_000)
        expected = self.run_as_worker(_on_cells)
        expect(page.locator(".cell [data-instance], .cell [data-task]")).to_have_count(expected, timeout=15_000)
        fresh = self.open("/grid/", context)
        reconnected = page.evaluate("document.getElementsByTagName('*').length")
        reloaded = fresh.evaluate("document.getElementsByTagName('*').length")
        assert abs(reconnected - reloaded) <= 0.05 * reloaded, (nodes_before, reconnected, reloaded)
        self.shot(page, "T13-reconnect-2")
        context.close()
