"""Helpers for Otto integration tests: a real Redis layer, a paused sim clock, and the
auctioneer and orchestrators running in-process on the test's event loop."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from channels.db import database_sync_to_async
from django.db import transaction

from auction.models import Cell, OttoAuction, Zone
from auction.services.clock import clock_reset, clock_step
from auction.services.otto import otto_task_capabilities_set
from auction.services.otto_runtime import Auctioneer, OrchestratorFleet
from auction.services.tasks import task_desire


def build_cells(specs: list[dict[str, Any]]) -> None:
    zones: dict[str, Zone] = {}
    for i, spec in enumerate(specs):
        zone_name = spec.pop("zone", "z1")
        zone = zones.get(zone_name) or Zone.objects.get_or_create(name=zone_name)[0]
        zones[zone_name] = zone
        Cell.objects.create(zone=zone, index=i, **spec)
    clock_reset(0.0, paused=True)


def submit(guid: str, capabilities: dict[str, Any] | None = None, **fields: Any) -> None:
    spec = {"task_guid": guid, "domain": "otto", "rootfs": "docker:///busybox", "memory_mb": 1024,
            "disk_mb": 512, "duration_s": 600, "placement_mode": "otto", **fields}
    with transaction.atomic():
        if capabilities:
            otto_task_capabilities_set(guid, capabilities)
        task_desire(spec)


async def step(seconds: float) -> None:
    await database_sync_to_async(clock_step)(seconds)


async def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = await database_sync_to_async(predicate)()
        if last:
            return last
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what or predicate}: last {last!r}")


def auction_of(guid: str) -> OttoAuction | None:
    return OttoAuction.objects.filter(task_guid=guid).order_by("-id").first()


@contextlib.asynccontextmanager
async def running(knobs: dict[str, dict[str, Any]] | None = None, elastic: bool = True,
                  auctioneer: bool = True) -> AsyncIterator[dict[str, Any]]:
    fleet = OrchestratorFleet(knobs=knobs, elastic=elastic)
    fleet_task = asyncio.create_task(fleet.run())
    auct = Auctioneer(tick_s=0.02) if auctioneer else None
    auct_task = asyncio.create_task(auct.run()) if auct else None
    try:
        if auct is not None:
            await asyncio.wait_for(auct.active.wait(), 20)
        await wait_for(lambda: fleet.members, what="roster")
        yield {"fleet": fleet, "auctioneer": auct, "auctioneer_task": auct_task}
    finally:
        if auct is not None:
            auct.stop.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(auct_task, 10)
        fleet_task.cancel()
        with contextlib.suppress(BaseException):
            await fleet_task
