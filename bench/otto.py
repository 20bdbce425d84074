"""Benchmark of Otto open auctions (issue 7). Prints JSON figures; asserts nothing.

    python -m bench.otto --wipe [--auctions 1000] [--bidders 50] [--duration 60] [--speed 1]
                            [--arrival steady|burst] [--bidder-processes 2]

Runs the real auctioneer (``otto_runtime.Auctioneer``) on the real ``otto`` Channels
layer (Redis) and database, with ``--auctions`` Otto tasks sent to tasks.for_auction at
once and ``--bidders`` roster orchestrators that each answer every announcement with a
bid over tasks.bids. The bidders price with the pure cost formula (otto.md 5) instead
of the agents' per-cell database checks, so the figures are the bus's and the
auctioneer's, not the agents' fit queries.

Figures:
- award latency: wall time from the instant the sim clock reached each window's close
  (ends + grace) to the award being written and sent (p50 / p95 / max; target p95 <= 100 ms);
- board responsiveness with every auction and its bids on the board (measured once the
  awards are out, so it never delays a close): rendering the /otto/ board frame, and
  GET /api/v1/open_auctions (ms and bytes; by then it lists only what is still open).

It replaces the cluster in the database it runs against: hence --wipe.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import random
import statistics
import sys
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.exceptions import ChannelFull
from django.core.management import call_command
from django.db import transaction
from django.test import Client

from auction.live.publish import suppressed
from auction.models import (
    Cell,
    OttoAuction,
    OttoBid,
    OttoMarket,
    OttoOrchestrator,
    OttoTaskCapabilities,
    PendingWork,
    Task,
    Zone,
)
from auction.otto import cost as costs
from auction.otto import messages as msg
from auction.services import otto_bus as bus
from auction.services.clock import clock_reset
from auction.services.otto.routing import otto_task_message
from auction.services.otto_orchestrators import otto_roster_refresh, otto_roster_sync
from auction.services.otto_runtime import Auctioneer, receive


def _wipe() -> None:
    for model in (OttoBid, OttoAuction, OttoOrchestrator, OttoTaskCapabilities, OttoMarket, PendingWork, Task):
        model.objects.all().delete()
    Cell.objects.all().delete()
    Zone.objects.all().delete()


def _setup(auctions: int, bidders: int) -> tuple[list[str], list[dict[str, Any]]]:
    _wipe()
    zone = Zone.objects.create(name="z1")
    Cell.objects.bulk_create(Cell(cell_id=f"b{i:03d}", zone=zone, index=i, cores=64, memory_mb=262_144)
                             for i in range(bidders))
    clients = [r.client_id for r in otto_roster_sync(elastic=False)]
    otto_roster_refresh(clients)
    with transaction.atomic():
        tasks = Task.objects.bulk_create(
            Task(task_guid=f"bench-{n:05d}", domain="bench", rootfs="docker:///busybox", memory_mb=256,
                 placement_mode=Task.PlacementMode.OTTO, duration_s=60) for n in range(auctions))
    clock_reset(0.0, paused=False)
    return clients, [otto_task_message(t, 0.0, {}) for t in tasks]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


class Bidder:
    """A roster orchestrator on the real bus that prices every announcement with otto.md 5."""

    def __init__(self, client_id: str, layer: Any, seed: int) -> None:
        self.client_id, self.layer = client_id, layer
        self.random = random.Random(f"{seed}:{client_id}")
        self.inbox = bus.inbox(client_id)
        self.sent = 0

    async def run(self) -> None:
        await self.layer.group_add(bus.name(bus.AUCTION), self.inbox)
        while True:
            message = await receive(self.layer, self.inbox)
            if message.get("type") != msg.AUCTION:
                continue
            raw = message["task"]["raw"]
            b = costs.bid_cost(rate_per_hour=0.10, estimated_s=raw.get("estimated_seconds"), speed=1.0,
                               utilisation=self.random.random())
            bid = msg.bid_message(message["auction_id"], message["attempt"], self.client_id, "agent",
                                  b.total, b.as_dict(), 0.0, 0.0)
            bid["sent_at"] = message["auction"]["starts"]
            while True:
                try:
                    await self.layer.send(bus.name(bus.BIDS), bid)
                    self.sent += 1
                    break
                except ChannelFull:
                    await asyncio.sleep(0.01)


async def _flush_bus(layer: Any) -> None:
    """Drop this world's Otto queues and groups left by an earlier run (ids restart with --wipe)."""
    world = bus.world()
    connection = layer.connection(0)
    for pattern in (f"{layer.prefix}otto.{world}.*", f"{layer.prefix}:group:otto.{world}.*"):
        keys = [key async for key in connection.scan_iter(match=pattern)]
        if keys:
            await connection.delete(*keys)


def _bidder_process(clients: list[str], seed: int) -> None:
    from channels.layers import channel_layers

    channel_layers.backends.clear()  # a fresh layer and pools for this process's loop

    async def main() -> None:
        layer = bus.otto_layer()
        await asyncio.gather(*(Bidder(c, layer, seed).run() for c in clients))

    asyncio.run(main())


def _board_figures() -> dict[str, Any]:
    from auction.live.fragments import otto_board_fragment

    started = time.perf_counter()
    html = otto_board_fragment()
    render_ms = (time.perf_counter() - started) * 1000
    client = Client()
    started = time.perf_counter()
    response = client.get("/api/v1/open_auctions", HTTP_HOST="localhost")
    api_ms = (time.perf_counter() - started) * 1000
    return {"board_frame_ms": round(render_ms, 1), "board_frame_bytes": len(html),
            "api_open_auctions_ms": round(api_ms, 1), "api_status": response.status_code,
            "api_bytes": len(response.content),
            "open_in_api": len(json.loads(response.content).get("open_auctions", []))}


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.otto",
        description="Benchmark Otto: N concurrent open auctions with M bidders each (prints JSON).")
    parser.add_argument("--wipe", action="store_true", help="required: replaces the cluster")
    parser.add_argument("--auctions", type=int, default=1000)
    parser.add_argument("--bidders", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0, help="auction window, sim-s (1-60)")
    parser.add_argument("--speed", type=float, default=1.0, help="sim clock speed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--arrival", choices=["steady", "burst"], default="steady",
                        help="steady: tasks arrive evenly over one window, so the auctions close one "
                             "by one and all are open together at its end; burst: all at once, so "
                             "all close in the same instant (the worst case)")
    parser.add_argument("--bidder-processes", type=int, default=2,
                        help="processes the bidders are spread over (orchestrator processes)")
    return parser


def main(argv: list[str] | None = None) -> None:
    options = vars(parser().parse_args(argv))
    if not options["wipe"]:
        parser().error("it replaces the cluster in this database: pass --wipe")
    # A fresh checkout (or a new bench database) has no tables yet: the cluster this
    # replaces starts from the current schema.
    call_command("migrate", interactive=False, verbosity=0)
    with suppressed():
        figures = asyncio.run(run(options))
    print(json.dumps(figures, indent=2))


async def run(o: dict[str, Any]) -> dict[str, Any]:
    auctions, bidders_n = o["auctions"], o["bidders"]
    clients, tasks = await database_sync_to_async(_setup)(auctions, bidders_n)
    if o["speed"] != 1.0:
        from auction.services.clock import clock_set_speed

        await database_sync_to_async(clock_set_speed)(o["speed"])
    layer = bus.otto_layer()
    await _flush_bus(layer)  # before any bidder joins a group
    # The bidders run in their own process, as the orchestrators do in production.
    from django.db import connections

    await database_sync_to_async(connections.close_all)()
    n_proc = max(1, min(o["bidder_processes"], len(clients)))
    bidder_processes = [multiprocessing.get_context("fork").Process(
        target=_bidder_process, args=(clients[i::n_proc], o["seed"]), daemon=True)
        for i in range(n_proc)]
    for process in bidder_processes:
        process.start()
    runs = []
    auctioneer = Auctioneer(layer=layer, duration_s=o["duration"], use_lock=False)
    runs.append(asyncio.create_task(auctioneer.run()))
    await asyncio.wait_for(auctioneer.active.wait(), 30)
    await asyncio.sleep(2.0)  # every bidder has joined tasks.auction
    started = time.perf_counter()
    figures: dict[str, Any] = {"auctions": auctions, "bidders": bidders_n, "duration_sim_s": o["duration"],
                               "speed": o["speed"], "arrival": o["arrival"], "bidder_processes": n_proc}
    peak = {"open": 0}
    feeder = asyncio.create_task(_feed(layer, tasks, o["duration"] / o["speed"] if o["arrival"] == "steady"
                                       else 0.0))

    def counts() -> tuple[int, int, int]:
        peak["open"] = max(peak["open"], OttoAuction.objects.filter(state=OttoAuction.State.OPEN).count())
        return (OttoAuction.objects.count(), OttoBid.objects.count(),
                OttoAuction.objects.filter(award_latency_ms__isnull=False).count())

    deadline = time.monotonic() + o["duration"] / o["speed"] + 600
    last_refresh = time.monotonic()
    while time.monotonic() < deadline:
        opened, bids, awarded = await database_sync_to_async(counts)()
        if opened == auctions and "open_phase_s" not in figures:
            figures["open_phase_s"] = round(time.perf_counter() - started, 2)
        if "bids_in_s" not in figures and opened == auctions and bids >= auctions * bidders_n:
            figures["bids_in_s"] = round(time.perf_counter() - started, 2)
        if awarded == auctions:
            break
        if time.monotonic() - last_refresh > 4:
            await database_sync_to_async(otto_roster_refresh)(clients)
            last_refresh = time.monotonic()
            print(f"  {time.perf_counter() - started:6.1f} s: {opened} opened, {bids} bids, "
                  f"{awarded} awards", file=sys.stderr)
        await asyncio.sleep(0.2)
    figures["total_s"] = round(time.perf_counter() - started, 2)
    figures["open_together_peak"] = peak["open"]
    feeder.cancel()

    def latencies() -> tuple[list[float], int, int]:
        values = [v for v in OttoAuction.objects.filter(award_latency_ms__isnull=False)
                  .values_list("award_latency_ms", flat=True)]
        late = OttoBid.objects.filter(status=OttoBid.Status.LATE).count()
        return values, late, OttoBid.objects.filter(status=OttoBid.Status.ACCEPTED).count()

    values, late, accepted = await database_sync_to_async(latencies)()
    figures.update({
        "awarded": len(values), "bids_accepted": accepted, "bids_late": late,
        "award_latency_ms": {"p50": _pct(values, 0.50), "p95": _pct(values, 0.95), "max": _pct(values, 1.0),
                             "mean": round(statistics.fmean(values), 2) if values else 0.0},
        "award_latency_target_p95_ms": 100,
    })
    # Measured after the awards, so rendering never competes with the closes it would
    # delay; the Awarded lane holds the same cards and bids the Open lane held.
    figures.update(await asyncio.to_thread(_board_figures))
    figures["auctioneer_steps_ms"] = {
        name: {"n": len(v), "mean": round(statistics.fmean(v), 2), "p95": _pct(v, 0.95), "max": _pct(v, 1.0)}
        for name, v in auctioneer.timings.items()}
    auctioneer.stop.set()
    for run in runs:
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(run, 10)
    for process in bidder_processes:
        process.terminate()
        process.join(10)
    return figures


async def _feed(layer: Any, tasks: list[dict[str, Any]], over_s: float) -> None:
    """Send the tasks to tasks.for_auction, evenly over ``over_s`` wall seconds (0: at once)."""
    started = time.perf_counter()
    for n, task in enumerate(tasks):
        if over_s:
            await asyncio.sleep(max(0.0, started + over_s * n / len(tasks) - time.perf_counter()))
        await _send(layer, task)


async def _send(layer: Any, message: dict[str, Any]) -> None:
    while True:
        try:
            await layer.send(bus.name(bus.FOR_AUCTION), message)
            return
        except ChannelFull:
            await asyncio.sleep(0.01)


if __name__ == "__main__":
    main()
