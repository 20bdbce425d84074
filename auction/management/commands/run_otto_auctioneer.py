"""The Otto auctioneer process (otto.md 1): one active per world, held by a Redis lock."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from auction.otto.lifecycle import LifecycleError
from auction.services.otto_runtime import Auctioneer


class Command(BaseCommand):
    help = "Run the Otto auctioneer: open, close and award auctions on tasks.for_auction / tasks.bids."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--duration", type=float, default=None,
                            help="auction duration in sim-s (1-60; default: the scenario's, else 5)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            auctioneer = Auctioneer(duration_s=options["duration"])
        except LifecycleError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write("otto auctioneer: waiting for the lock", ending="\n")
        self.stdout.flush()
        asyncio.run(_run(auctioneer, self))


async def _run(auctioneer: Auctioneer, command: BaseCommand) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, auctioneer.stop.set)

    async def announce() -> None:
        await auctioneer.active.wait()
        command.stdout.write("otto auctioneer: active")
        command.stdout.flush()

    watcher = asyncio.create_task(announce())
    await auctioneer.run()
    watcher.cancel()
