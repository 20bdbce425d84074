"""The Otto processes' loops (otto.md 1): the auctioneer and the orchestrators, on asyncio.

Thin shells: they receive from the bus, stamp arrival on the auctioneer's sim clock,
call the services (one transaction each, in Django's sync thread) and send what the
services return. ``manage.py run_otto_auctioneer`` / ``run_otto_orchestrators`` run them;
the tests run them in-process against a real Redis layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from typing import Any

import redis.asyncio as aredis
from channels.db import database_sync_to_async
from channels.exceptions import ChannelFull
from django.conf import settings
from redis import exceptions as redis_errors

from auction.live.publish import clock_channel, mark_dirty, sim_channel
from auction.otto import lifecycle
from auction.otto import messages as msg
from auction.selectors.clock import clock_row
from auction.services import otto_bus as bus
from auction.services import otto_orchestrators as orch
from auction.services.counters import counters_add
from auction.services.locks import LOCK_RENEW_S, LOCK_TTL_S, lock_renew, redis_client
from auction.services.otto.auctions import (
    otto_auctions_open,
    otto_due,
    otto_next_deadline,
    otto_recover,
)
from auction.services.otto.awards import otto_award_latencies_record, otto_started_seen
from auction.services.otto.bids import IncomingBid, otto_bids_record
from auction.services.otto.rows import Outbound
from auction.services.otto_scenario import otto_duration
from auction.services.retry import round_failed
from auction.sim.clock import ClockState

log = logging.getLogger(__name__)
#: The shortest gap between two ticks: arrivals meanwhile are recorded in one batch.
TICK_S = 0.02
#: With nothing due, the auctioneer still looks every RECHECK_S while the clock runs
#: (anything unforeseen), every PAUSED_RECHECK_S while it is paused (otto.md 11): every
#: change it must answer wakes it sooner (an arrival, a change of the clock).
RECHECK_S = 5.0
PAUSED_RECHECK_S = 30.0
BID_RECEIVERS = 4
BOARD_FLUSH_S = 0.25
#: The orchestrators' housekeeping runs at most this often.
HOUSEKEEP_S = 0.25


class SimClockCache:
    """The sim clock row, re-read every tick and replaced by each clock-change message
    (otto.md 11); arrival stamps use it between reads."""

    def __init__(self) -> None:
        self.state = ClockState(0.0, time.time(), 1.0, True)

    async def refresh(self) -> float:
        row = await database_sync_to_async(clock_row)()
        self.state = row.state
        return self.now()

    def now(self) -> float:
        return self.state.now(time.time())


SEND_CONCURRENCY = 64
SEND_RETRIES = 500  # an orchestrator retries a full channel every 20 ms, 10 s in all


async def send_all(layer: Any, outbound: Outbound, touched: set[str] | None = None,
                   effects_touched: set[str] | None = None) -> None:
    """Send a transaction's messages: inbox sends first, side by side but in order per
    inbox, then the fan-outs in order (a revoke still reaches the loser before the
    re-announcement does).

    A close of many auctions awards to many inboxes at once; one after another, each
    send's round trip to Redis adds to the last award's latency (bench.otto).
    """
    if touched is not None and effects_touched:
        touched |= effects_touched
    by_inbox: dict[str, list[dict[str, Any]]] = {}
    for how, name, message in outbound:
        if how != "group":
            by_inbox.setdefault(name, []).append(message)
    gate = asyncio.Semaphore(SEND_CONCURRENCY)

    async def in_order(name: str, messages: list[dict[str, Any]]) -> None:
        async with gate:
            for message in messages:
                await _send_one(layer, "send", name, message)

    await asyncio.gather(*(in_order(name, messages) for name, messages in by_inbox.items()))
    for how, name, message in outbound:
        if how == "group":
            await _send_one(layer, how, name, message)


async def _send_one(layer: Any, how: str, name: str, message: dict[str, Any]) -> None:
    try:
        if how == "group":
            await layer.group_send(name, message)
        else:
            await layer.send(name, message)
    except ChannelFull:
        log.warning("otto: dropped %s for %s: %s is full; the row keeps the truth",
                    message.get("type"), message.get("auction_id"), name)
    except (OSError, redis_errors.RedisError) as exc:
        log.warning("otto: dropped %s for %s: send to %s failed (%s); the row keeps the truth",
                    message.get("type"), message.get("auction_id"), name, exc)


async def receive(layer: Any, channel: str) -> dict[str, Any]:
    """One message; a Redis hiccup is logged and retried, never fatal to the process."""
    while True:
        try:
            return await layer.receive(channel)
        except (OSError, redis_errors.RedisError) as exc:
            log.warning("otto: receive on %s failed (%s); retrying", channel, exc)
            await asyncio.sleep(0.5)


async def stay_joined(layer: Any, groups: list[str], channel: str, who: str,
                      every_s: float | None = None) -> None:
    """Join ``groups`` again every ``every_s`` (otto.md 7): a Redis restart forgets every
    group, and the layer's own membership expires after a day; either left an
    orchestrator out of every announcement, for good. A join that fails is one warning
    until one succeeds again; never a traceback, never the end of the member."""
    every = settings.OTTO_GROUP_REFRESH_S if every_s is None else every_s
    failing = False
    while True:
        await asyncio.sleep(every)
        try:
            for name in groups:
                await layer.group_add(name, channel)
        except (OSError, redis_errors.RedisError) as exc:
            if not failing:
                log.warning("%s: joining its groups again failed (%s); retrying every %.0f s", who, exc, every)
            failing = True
            continue
        if failing:
            log.warning("%s: joined its groups again", who)
        failing = False


async def _dropped_malformed(channel: str, why: object) -> None:
    """A malformed message is dropped, logged and counted (otto.md 3); nothing crashes."""
    log.warning("otto: dropped a malformed message on %s: %s", channel, why)
    try:
        await database_sync_to_async(counters_add)({"OttoMalformedMessages": 1})
    except Exception as exc:  # noqa: BLE001 - a counter, not state
        log.warning("otto: counting a malformed message on %s failed (%s)", channel, exc)


STOPPED, LOST, FAILED = "stopped", "lost", "failed"


class SteppedDown(Exception):
    """This loop's term as the leader is over: it must not act any more."""


async def _settle(tasks: list[asyncio.Task[Any]], what: str, patience_s: float = 1.0) -> None:
    """Cancel ``tasks`` and wait for them; a failure other than the cancel is logged.

    A cancel can be swallowed under a task (asgiref's sync_to_async returns normally when
    the sync call ended meanwhile), so one still running after ``patience_s`` is
    cancelled again, with a warning.
    """
    pending = set(tasks)
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=patience_s)
        if pending:
            log.warning("otto: %s: %s still running %g s after a cancel; cancelling again", what,
                        ", ".join(sorted(t.get_name() for t in pending)), patience_s)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            log.warning("otto: %s task %s ended with %r", what, task.get_name(), task.exception())


class Auctioneer:
    """One per world; a Redis lock (15 s TTL, renewed every 5 s) keeps exactly one active.

    It acts (receives, records, closes, sends) only while it holds the lock. When a renewal
    fails it steps down at once: ``active`` is cleared and every loop is cancelled before
    anything else; then it stands by and tries to acquire the lock again.
    """

    def __init__(self, layer: Any = None, duration_s: float | None = None,
                 tick_s: float = TICK_S, use_lock: bool = True, lock_ttl_s: float = LOCK_TTL_S,
                 renew_s: float = LOCK_RENEW_S, standby_s: float = 1.0,
                 recheck_s: float = RECHECK_S, paused_recheck_s: float = PAUSED_RECHECK_S) -> None:
        self.layer = layer or bus.otto_layer()
        self.recheck_s = recheck_s
        self.paused_recheck_s = paused_recheck_s
        # Set by every arrival (a task, a bid, a change of the clock): the tick loop waits
        # on it, or on the next deadline, instead of polling (otto.md 11).
        self.wake = asyncio.Event()
        self.ticks = 0  # ticks run (the tests count them)
        self.duration_s = None if duration_s is None else lifecycle.check_duration(duration_s)
        self.tick_s = tick_s
        self.use_lock = use_lock
        self.lock_ttl_s = lock_ttl_s
        self.renew_s = renew_s
        self.standby_s = standby_s
        self.clock = SimClockCache()
        self.bids: list[IncomingBid] = []
        self.tasks: list[tuple[dict[str, Any], float]] = []
        self.sequence = 0
        self.stop = asyncio.Event()
        self.active = asyncio.Event()
        self.steps_down = 0  # times it lost the lock while leading
        # One number per stretch of leadership: a loop acts only while its term is current,
        # even if the cancel that ends it was swallowed on the way.
        self.term = 0
        self.touched: set[str] = set()
        self.last_board = 0.0
        self._last_now: float | None = None
        self.next_due: float | None = None
        self.last_due_check = 0.0
        # Wall milliseconds of each step of the tick, for bench.otto's figures.
        self.timings: dict[str, list[float]] = {}

    @staticmethod
    def lock_key() -> str:
        return f"diego:{settings.DIEGO_WORLD}:otto-auctioneer"

    async def run(self) -> None:
        lock = None
        if self.use_lock:
            lock = redis_client().lock(self.lock_key(), timeout=self.lock_ttl_s, blocking=False,
                                       thread_local=False)
        held = False
        try:
            while not self.stop.is_set():
                if lock is not None and not held:
                    held = await self._acquire(lock)
                    if not held:
                        break  # stopped while standing by
                outcome = await self._lead(lock)
                if outcome == STOPPED:
                    break
                if outcome == LOST:
                    held = False
                    self.steps_down += 1
                else:  # a loop failed: lead again, still holding the lock
                    await asyncio.sleep(self.standby_s)
        finally:
            if lock is not None and held:
                try:
                    await asyncio.to_thread(lock.release)
                except redis_errors.RedisError as exc:
                    log.warning("otto auctioneer: releasing the lock failed (%s); it lapses within %g s",
                                exc, self.lock_ttl_s)

    async def _acquire(self, lock: Any) -> bool:
        """Stand by until the lock is ours (the active one's lapsed) or the auctioneer stops."""
        while not self.stop.is_set():
            try:
                if await asyncio.to_thread(lock.acquire):
                    return True
            except redis_errors.RedisError as exc:
                log.warning("otto auctioneer: acquiring the lock failed (%s); standing by", exc)
            with contextlib.suppress(TimeoutError):  # the stand-by interval passed: try again
                await asyncio.wait_for(self.stop.wait(), self.standby_s)
        return False

    async def _lead(self, lock: Any) -> str:
        """Act as the active auctioneer until stopped, the lock is lost, or a loop fails."""
        loops: list[asyncio.Task[None]] = []
        self.term += 1
        renewer = asyncio.create_task(self._renew(lock), name="renew") if lock is not None else None
        leading = asyncio.create_task(self._leading(loops, self.term), name="leading")
        stopping = asyncio.create_task(self.stop.wait(), name="stop")
        waiting = [t for t in (renewer, leading, stopping) if t is not None]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        # Step down before anything else: from here nothing is received, recorded or sent.
        self.term += 1
        self.active.clear()
        await _settle([leading, *loops], "auctioneer")
        if self.stop.is_set():
            outcome = STOPPED
        elif renewer is not None and renewer.done():
            outcome = LOST
        else:
            outcome = FAILED  # _settle logged the failure
        await _settle([t for t in (renewer, stopping) if t is not None], "auctioneer")
        await self._leave_groups()
        if outcome == LOST:
            log.warning("otto auctioneer: lost the lock, stepped down; dropped %d bids and %d tasks not "
                        "yet recorded (the next leader re-announces open auctions, convergence "
                        "re-feeds tasks); standing by to re-acquire", len(self.bids), len(self.tasks))
            self.bids, self.tasks = [], []
        return outcome

    def _check(self, term: int) -> None:
        if self.term != term:
            raise SteppedDown(f"term {term} is over")

    async def _leading(self, loops: list[asyncio.Task[None]], term: int) -> None:
        """Join the report groups, recover, then run the loops; returns only if one fails."""
        self.next_due, self._last_now = None, None
        self.group_channel = await self.layer.new_channel("otto-auctioneer.")
        for name in (bus.STARTED, bus.FINISHED):
            await self.layer.group_add(bus.name(name), self.group_channel)
        self.active.set()
        await self.clock.refresh()
        if self.duration_s is None:
            self.duration_s = await database_sync_to_async(otto_duration)()
        effects = await database_sync_to_async(otto_recover)(self.clock.now())
        await send_all(self.layer, effects.outbound, self.touched, effects.touched)
        self._check(term)
        loops += [
            asyncio.create_task(stay_joined(self.layer, [bus.name(bus.STARTED), bus.name(bus.FINISHED)],
                                            self.group_channel, "otto auctioneer"), name="groups"),
            asyncio.create_task(self._receive(bus.name(bus.FOR_AUCTION), self._on_task, term), name="tasks"),
            asyncio.create_task(self._receive(self.group_channel, self._on_report, term), name="reports"),
            asyncio.create_task(self._ticks(term), name="ticks"),
            asyncio.create_task(clock_changes(self.wake, self.clock), name="clock")]
        # Several receivers on tasks.bids overlap the per-message round trips to Redis;
        # each stamps arrival on the same clock, so order of receipt stays well defined.
        loops += [asyncio.create_task(self._receive(bus.name(bus.BIDS), self._on_bid, term), name=f"bids-{n}")
                  for n in range(BID_RECEIVERS)]
        done, _ = await asyncio.wait(loops, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            task.result()  # the loops never return: re-raise the failure

    async def _leave_groups(self) -> None:
        channel = getattr(self, "group_channel", None)
        if channel is None:
            return
        for name in (bus.STARTED, bus.FINISHED):
            try:
                await self.layer.group_discard(bus.name(name), channel)
            except (OSError, redis_errors.RedisError) as exc:
                log.warning("otto auctioneer: leaving group %s failed (%s); its membership expires", name, exc)
        self.group_channel = None

    async def _renew(self, lock: Any) -> None:
        """Renew the lock every ``renew_s``; returns as soon as a renewal fails (lost)."""
        while True:
            await asyncio.sleep(self.renew_s)
            if not await asyncio.to_thread(lock_renew, lock):
                return

    async def _receive(self, channel: str, handle: Any, term: int) -> None:
        while self.term == term:
            message = await receive(self.layer, channel)
            if self.term != term:
                log.warning("otto auctioneer: dropped %s on %s: it arrived after stepping down",
                            message.get("type") if isinstance(message, dict) else "a message", channel)
                return
            try:
                checked = msg.validate(message)
            except msg.MalformedMessage as exc:
                await _dropped_malformed(channel, exc)
                continue
            try:
                await handle(checked)
            except Exception as error:  # noqa: BLE001 - one bad message must not stop the auctioneer
                round_failed(log, f"otto: handling {checked.get('type')}", error)

    async def _on_task(self, message: dict[str, Any]) -> None:
        if message["type"] != msg.TASK:
            await _dropped_malformed(bus.name(bus.FOR_AUCTION), f"type {message['type']} is not {msg.TASK}")
            return
        # Opened by the next tick, all arrivals of a tick in one transaction, stamped now.
        self.tasks.append((message, self.clock.now()))
        self.wake.set()

    async def _on_bid(self, message: dict[str, Any]) -> None:
        if message["type"] not in (msg.BID, msg.DECLINE):
            await _dropped_malformed(bus.name(bus.BIDS), f"type {message['type']} is not a bid or decline")
            return
        self.sequence += 1
        self.bids.append(IncomingBid(message, round(self.clock.now(), 6), self.sequence))
        self.wake.set()

    async def _on_report(self, message: dict[str, Any]) -> None:
        if message["type"] == msg.STARTED:
            effects = await database_sync_to_async(otto_started_seen)(message, self.clock.now())
            await send_all(self.layer, effects.outbound, self.touched, effects.touched)

    async def _ticks(self, term: int) -> None:
        last_deadline: float | None = None
        while self.term == term:
            started = time.monotonic()
            self.wake.clear()  # what arrives from here on wakes the next tick
            try:
                last_deadline = await self._tick(last_deadline, term)
            except SteppedDown:
                return
            except Exception as error:  # noqa: BLE001 - a failed tick (DB busy, Redis hiccup) is retried next tick
                round_failed(log, "otto auctioneer: tick", error)
            self.ticks += 1
            await self.wait_for_work(self.wait_s())
            # At most one tick per tick_s: a burst of arrivals is recorded in one batch.
            rest = self.tick_s - (time.monotonic() - started)
            if rest > 0:
                await asyncio.sleep(rest)

    def wait_s(self) -> float:
        """Wall seconds until the next tick is needed (otto.md 11): none while arrivals
        wait, else until the soonest deadline on the clock, the board's next flush, or
        the recheck."""
        if self.tasks or self.bids:
            return 0.0
        state = self.clock.state
        recheck = self.paused_recheck_s if state.paused else self.recheck_s
        wait = lifecycle.wake_in(self.next_due, self.clock.now(), state.speed, state.paused, recheck)
        if self.touched:
            wait = min(wait, max(0.0, BOARD_FLUSH_S - (time.monotonic() - self.last_board)))
        return wait

    async def wait_for_work(self, timeout: float) -> bool:
        """Sleep until an arrival or a clock change (True) or ``timeout`` seconds (False)."""
        if timeout <= 0:
            return self.wake.is_set()
        try:
            await asyncio.wait_for(self.wake.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def _timed(self, name: str, fn: Any, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return await database_sync_to_async(fn)(*args)
        finally:
            self.timings.setdefault(name, []).append((time.perf_counter() - started) * 1000)

    async def _tick(self, last_deadline: float | None, term: int) -> float | None:
        """One round of the auctioneer's writes; each starts only while ``term`` is current."""
        self._check(term)
        row = await self._timed("clock", clock_row)
        self.clock.state = row.state
        now = self.clock.now()
        if self._last_now is not None and now < self._last_now:
            self.next_due = None  # the clock went back: the known deadline is another epoch's
        opened = False
        self._check(term)
        if self.tasks:
            batch_t, self.tasks = self.tasks, []
            try:
                stamp = lifecycle.arrival(batch_t[0][1], now)
                effects = await self._timed("open", otto_auctions_open,
                                            [m for m, _ in batch_t], stamp, self.duration_s)
            except Exception:
                self.tasks = batch_t + self.tasks
                raise
            # New auctions close a whole window from now: fold that into the known soonest
            # deadline instead of re-reading every deadline (a query per tick under a steady
            # stream of tasks, paid for by every close's latency).
            closes = lifecycle.opened("new", stamp, self.duration_s).closes_at
            self.next_due = closes if self.next_due is None else min(self.next_due, closes)
            if last_deadline is None or closes < last_deadline:
                last_deadline = closes
                await asyncio.to_thread(_store_deadline, closes)
            await send_all(self.layer, effects.outbound, self.touched, effects.touched)
        self._check(term)
        if self.bids:
            batch, self.bids = self.bids, []
            try:
                effects = await self._timed("bids", otto_bids_record, batch)
            except Exception:
                self.bids = batch + self.bids  # stamped at arrival: recording later changes nothing
                raise
            # A decline re-announces: a new deadline, maybe sooner than the one known.
            opened = any(how == "group" for how, _, _ in effects.outbound)
            await send_all(self.layer, effects.outbound, self.touched, effects.touched)
        # Nothing is due before the soonest deadline known (opens fold theirs in, re-announcements
        # force a re-read, an orchestrator's start only removes one), so most ticks skip the queries.
        # A re-read every second covers anything unforeseen.
        due_check = (opened or self.next_due is None or lifecycle.reached(self.next_due, now)
                     or time.monotonic() - self.last_due_check >= 1.0)
        if due_check and (not self.clock.state.paused or now != self._last_now or opened):
            self._check(term)
            self.last_due_check = time.monotonic()
            effects = await self._timed("due", otto_due, now)
            await send_all(self.layer, effects.outbound, self.touched, effects.touched)
            if effects.awards:
                sent = time.time()
                await database_sync_to_async(otto_award_latencies_record)(
                    {auction_id: (sent - due) * 1000 for auction_id, due in effects.awards})
            deadline = await self._timed("deadline", otto_next_deadline)
            self.next_due = deadline
            self._check(term)
            if deadline != last_deadline:
                last_deadline = deadline
                await asyncio.to_thread(_store_deadline, deadline)
        self._last_now = now
        if self.touched and time.monotonic() - self.last_board >= BOARD_FLUSH_S:
            ids, self.touched = sorted(self.touched), set()
            self.last_board = time.monotonic()
            await asyncio.to_thread(_publish_board_now, ids)
        return last_deadline


def clock_state_of(data: bytes | str) -> ClockState | None:
    """The clock state a ``clock_changed`` message carries; None when it carries none."""
    try:
        fields = json.loads(data)
        return ClockState(float(fields["anchor_sim"]), float(fields["anchor_wall"]),
                          float(fields["speed"]), bool(fields["paused"]))
    except (ValueError, TypeError, KeyError):
        return None


async def clock_changes(wake: asyncio.Event, clock: SimClockCache, *, advances: bool = False) -> None:
    """At every change of the clock (``live.publish.clock_changed``) put its new state in
    ``clock`` and set ``wake``; with ``advances``, set ``wake`` at every advance that handled
    something (``sim_advanced``) too. Forever.

    After a lost connection ``wake`` is set anyway: a change may have passed unheard.
    """
    clock_name = clock_channel()
    channels = [clock_name, *([sim_channel()] if advances else [])]
    while True:
        client = aredis.Redis.from_url(settings.REDIS_STATE_URL)
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(*channels)
            async for message in pubsub.listen():
                if message.get("type") != "message":
                    continue
                if message.get("channel") in (clock_name, clock_name.encode()):
                    state = clock_state_of(message.get("data") or b"")
                    if state is not None:
                        clock.state = state  # arrivals from here on are stamped on it
                wake.set()
        except (OSError, redis_errors.RedisError) as exc:
            log.warning("otto: listening for clock changes failed (%s); retrying", exc)
            wake.set()
            await asyncio.sleep(0.5)
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()
                await client.aclose()


def _publish_board_now(ids: list[str]) -> None:
    if ids:
        mark_dirty("otto:board")


def _store_deadline(deadline: float | None) -> None:
    """``otto.<w>.next_deadline`` so the clock's step can stop there (otto.md 6)."""
    try:
        client = redis_client()
        if deadline is None:
            client.delete(bus.next_deadline_key())
        else:
            client.set(bus.next_deadline_key(), f"{deadline:.3f}")
    except Exception as exc:  # noqa: BLE001 - a hint for the clock bar, not state
        log.warning("otto: could not publish the next deadline %s (%s); the clock's step may pass it",
                    deadline, exc)


class Orchestrator:
    """One bidder: an agent (a cell) or the elastic standalone orchestrator."""

    def __init__(self, client_id: str, layer: Any, knobs: dict[str, Any], clock: SimClockCache,
                 seed: int = 0) -> None:
        self.client_id = client_id
        self.layer = layer
        self.knobs = knobs
        self.clock = clock
        self.random = random.Random(f"{seed}:{client_id}")
        self.inbox = bus.inbox(client_id)
        self.pending: set[asyncio.Task[None]] = set()

    def own_now(self) -> float:
        return self.clock.now() + float(self.knobs.get("clock_offset_s", 0.0))

    async def run(self) -> None:
        # The inbox is this orchestrator's member of the tasks.auction group: one queue
        # carries both the announcements and its private awards and revokes.
        await self.layer.group_add(bus.name(bus.AUCTION), self.inbox)
        joined = asyncio.create_task(stay_joined(self.layer, [bus.name(bus.AUCTION)], self.inbox,
                                                 f"otto orchestrator {self.client_id}"))
        try:
            while True:
                message = await receive(self.layer, self.inbox)
                try:
                    checked = msg.validate(message)
                except msg.MalformedMessage as exc:
                    await _dropped_malformed(self.inbox, exc)
                    continue
                task = asyncio.create_task(self._handle(checked))
                self.pending.add(task)
                task.add_done_callback(self.pending.discard)
        finally:
            joined.cancel()

    async def _handle(self, message: dict[str, Any]) -> None:
        try:
            if message["type"] == msg.AUCTION:
                await self._bid(message)
            elif message["type"] == msg.AWARD:
                await self._award(message)
        except Exception as error:  # noqa: BLE001
            round_failed(log, f"otto orchestrator {self.client_id}: {message['type']}", error)

    async def _bid(self, announcement: dict[str, Any]) -> None:
        if self.client_id in announcement.get("exclude", []):
            return
        ends = announcement["_t"]["ends"]
        if self.own_now() > ends:
            return  # on its own clock the auction already closed: a missing bid
        bid = await database_sync_to_async(orch.otto_bid_compute)(self.client_id, announcement, self.own_now())
        if bid is None:
            return
        await asyncio.sleep(float(self.knobs.get("bid_latency_s", 0.05)))
        if self.knobs.get("bid_timing") == "late":
            while self.own_now() < ends - 0.2 - 1e-6:  # float steps must not strand it
                await asyncio.sleep(0.02)
        bid["sent_at"] = msg.to_iso(self.own_now())
        await self._send(bus.name(bus.BIDS), bid)

    async def _send(self, channel: str, message: dict[str, Any]) -> None:
        for _ in range(SEND_RETRIES):
            try:
                await self.layer.send(channel, message)
                return
            except ChannelFull:
                await asyncio.sleep(0.02)
        log.warning("otto orchestrator %s: dropped %s for %s: %s stayed full for %d tries",
                    self.client_id, message.get("type"), message.get("auction_id"), channel, SEND_RETRIES)

    async def _award(self, award: dict[str, Any]) -> None:
        if self.random.random() < float(self.knobs.get("start_failure_rate", 0.0)):
            return  # a failing winner stays silent (otto.md 4)
        cell_id = None
        if self.client_id == orch.ELASTIC_ID:
            cell_id = await database_sync_to_async(orch.otto_elastic_provision)(award)
            if cell_id is None:
                await self._send(bus.name(bus.BIDS), msg.decline_message(
                    award["auction_id"], award["attempt"], self.client_id, "no cell could be provisioned"))
                return
            ready = self.clock.now() + float(self.knobs.get("provision_s", 90.0))
            while self.clock.now() < ready:
                await asyncio.sleep(0.05)
        outcome = await database_sync_to_async(orch.otto_start)(
            self.client_id, award["auction_id"], award["attempt"], self.clock.now(), cell_id)
        if outcome.message is None:
            return
        if outcome.started:
            await self.layer.group_send(bus.name(bus.STARTED), outcome.message)
        else:
            await self._send(bus.name(bus.BIDS), outcome.message)


class OrchestratorFleet:
    """Every orchestrator in the roster, in one process; keeps presence and reports finishes."""

    def __init__(self, layer: Any = None, knobs: dict[str, dict[str, Any]] | None = None,
                 elastic: bool = True, seed: int = 0, only: list[str] | None = None) -> None:
        self.layer = layer or bus.otto_layer()
        self.knobs = knobs or {}
        self.elastic = elastic
        self.seed = seed
        self.only = only
        self.clock = SimClockCache()
        self.members: list[Orchestrator] = []
        self.held_knobs: dict[str, dict[str, Any]] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}
        # Set by a change of the clock or an advance: housekeeping waits on it (otto.md 11).
        self.wake = asyncio.Event()
        self.rounds = 0

    async def run(self) -> None:
        await self.clock.refresh()
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.by_id: dict[str, Orchestrator] = {}
        self.held_knobs: dict[str, dict[str, Any]] = {}
        self.signature: Any = None
        await self._sync_members()
        housekeeping = asyncio.create_task(self._housekeeping())
        try:
            await housekeeping
        finally:
            housekeeping.cancel()
            for task in self.tasks.values():
                task.cancel()

    async def _sync_members(self) -> None:
        """Follow the cluster: a scenario load or a new cell changes the roster while this
        process runs, so members are started, stopped or restarted (new knobs) to match."""
        signature = await database_sync_to_async(orch.otto_roster_signature)()
        if signature == self.signature:
            return
        rows = await database_sync_to_async(orch.otto_roster_sync)(self.knobs, self.elastic)
        rows = [r for r in rows if self.only is None or r.client_id in self.only]
        self.signature = await database_sync_to_async(orch.otto_roster_signature)()
        wanted = {r.client_id: r for r in rows}
        for client_id in list(self.tasks):
            row = wanted.get(client_id)
            if row is None or row.knobs != self.held_knobs.get(client_id):
                self.tasks.pop(client_id).cancel()
                await self.layer.group_discard(bus.name(bus.AUCTION), bus.inbox(client_id))
        for client_id, row in wanted.items():
            if client_id in self.tasks:
                continue
            member = Orchestrator(client_id, self.layer, row.knobs, self.clock, self.seed)
            self.by_id[client_id] = member
            self.held_knobs[client_id] = row.knobs
            task = asyncio.create_task(member.run())
            task.add_done_callback(self._member_ended(client_id))
            self.tasks[client_id] = task
        self.members = [self.by_id[c] for c in self.tasks]
        await database_sync_to_async(orch.otto_roster_refresh)(list(wanted))

    def _member_ended(self, client_id: str) -> Any:
        def ended(task: asyncio.Task[None]) -> None:
            if task.cancelled():
                return
            if task.exception() is not None:
                log.error("otto orchestrator %s stopped: %r; restarting at the next sync",
                          client_id, task.exception())
            if self.tasks.get(client_id) is task:
                del self.tasks[client_id]
                self.signature = None

        return ended

    async def _housekeeping(self) -> None:
        """A round on every change of the clock, every advance that handled something
        (tasks may have finished), the elastic orchestrator's ``disable_at`` and the
        presence refresh; nothing in between (otto.md 11)."""
        last_presence = 0.0
        listener = asyncio.create_task(clock_changes(self.wake, self.clock, advances=True), name="clock")
        try:
            while True:
                started = time.monotonic()
                self.wake.clear()
                try:
                    last_presence = await self._housekeep(last_presence)
                except Exception as error:  # noqa: BLE001 - retried on the next round
                    round_failed(log, "otto orchestrators: housekeeping", error)
                self.rounds += 1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), self.wait_s(last_presence))
                rest = HOUSEKEEP_S - (time.monotonic() - started)
                if rest > 0:
                    await asyncio.sleep(rest)
        finally:
            listener.cancel()

    def wait_s(self, last_presence: float) -> float:
        """Wall seconds to the next round: the presence refresh, or the elastic
        orchestrator's ``disable_at`` on the clock if that is sooner."""
        wait = max(0.0, orch.PRESENCE_REFRESH_S - (time.time() - last_presence))
        disable_at = self._disable_at()
        if disable_at is not None:
            state = self.clock.state
            wait = lifecycle.wake_in(disable_at, self.clock.now(), state.speed, state.paused, wait)
        return wait

    def _disable_at(self) -> float | None:
        knobs = self.held_knobs.get(orch.ELASTIC_ID) if orch.ELASTIC_ID in self.tasks else None
        return None if knobs is None or "disable_at" not in knobs else float(knobs["disable_at"])

    async def _housekeep(self, last_presence: float) -> float:
        now = await self.clock.refresh()
        disable_at = self._disable_at()
        if disable_at is not None and now >= disable_at:
            await database_sync_to_async(orch.otto_elastic_schedule)(now)
        ids = list(self.tasks)
        if time.time() - last_presence >= orch.PRESENCE_REFRESH_S:
            await self._sync_members()
            ids = list(self.tasks)
            await database_sync_to_async(orch.otto_roster_refresh)(ids)
            last_presence = time.time()
        for message in await database_sync_to_async(orch.otto_finished_due)(ids):
            await self.layer.group_send(bus.name(bus.FINISHED), message)
        return last_presence
