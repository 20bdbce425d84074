"""The Otto orchestrators (otto.md 1, 4): one asyncio task per cell plus the elastic one."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from auction.services.otto_runtime import OrchestratorFleet


class Command(BaseCommand):
    help = "Run every Otto orchestrator of the roster: bid on tasks.auction, start what they win."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-elastic", action="store_true", help="leave the elastic orchestrator out")
        parser.add_argument("--seed", type=int, default=0, help="seeds start_failure_rate draws")

    def handle(self, *args: Any, **options: Any) -> None:
        fleet = OrchestratorFleet(elastic=not options["no_elastic"], seed=options["seed"])
        self.stdout.write("otto orchestrators: starting")
        self.stdout.flush()
        asyncio.run(_run(fleet))


async def _run(fleet: OrchestratorFleet) -> None:
    task = asyncio.create_task(fleet.run())
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    with contextlib.suppress(asyncio.CancelledError):
        await task
