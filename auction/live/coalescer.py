"""The coalescer (dashboard.md L3, L4): dirty keys in, one frame per group per tick out.

At most every ``TICK_S`` it takes the world's dirty set from Redis, renders each dirty element
once in its latest state (a batch per renderer: one query for all dirty cells), groups
the fragments by channel group and sends one numbered frame per group. Frames over
``FRAME_LIMIT`` are sent as numbered parts that the consumer joins again. Between ticks
it blocks on a wake-up list that every mark pushes to: a lone change is rendered at once
(commit-to-browser latency is the render, not a wait for the next tick), while a burst
still yields one tick per ``TICK_S``.

Where it runs, and why: as an asyncio task inside the daphne process, started with the
first websocket of that process and stopped with its last, holding a Redis lock
(``live:<world>:coalescer``, 2 s TTL renewed each tick) so exactly one process in the
deployment renders. Rendering needs viewers, and viewers are exactly where daphne is:
with nobody watching, nothing renders and marks just accumulate in a bounded set (one
entry per element) until a viewer's snapshot makes them moot. No extra process to
supervise, and a killed daphne hands over within the lock's TTL. Renders run in the
thread that runs the consumers' ORM calls, so the event loop keeps serving sockets.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import logging
import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from auction.live import fragments, snapshots
from auction.live.groups import group, lrps_page_of
from auction.live.publish import (
    dirty_set,
    key_prefix,
    mark_dirty,
    state_redis,
    stored_key,
    wake_list,
)
from auction.live.rate import RateWindow
from auction.selectors import clock as clock_selectors
from auction.selectors.clock import clock_row_kept, clock_view
from auction.selectors.grid import cell_zones, grid_snapshot, zone_headers, zone_names, zone_tiles
from auction.services.locks import lock_renew

log = logging.getLogger(__name__)

TICK_S = 0.25
# How often the leading coalescer runs the checks registered with it: whether the
# presenter is still there (C5, ``auction.live.presenter`` registers it).
PRESENCE_CHECK_S = 5.0
TICK_CHECKS: list[Callable[[], object]] = []


def register_tick_check(check: Callable[[], object]) -> None:
    """Run ``check`` every PRESENCE_CHECK_S in the leading coalescer's tick."""
    if check not in TICK_CHECKS:
        TICK_CHECKS.append(check)
FRAME_LIMIT = 256 * 1024
# Zone tiles summarise a whole zone; once a second is live enough (G8).
TILE_INTERVAL_S = 1.0
LEADER_TTL_S = 3.0
SEP = fragments.SEP

# A renderer takes the arguments of its dirty keys and returns (topic, html) pairs.
Renderer = Callable[[list[str]], list[tuple[str, str]]]
RENDERERS: dict[str, Renderer] = {}


def register_renderer(prefix: str, renderer: Renderer) -> None:
    """Other pages add their elements: ``mark_dirty("auction:42")`` → renderer(["42"])."""
    RENDERERS[prefix] = renderer


@dataclass
class Tick:
    frames: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (topic, message)
    renders: dict[str, int] = field(default_factory=dict)  # dirty key -> times rendered
    deferred: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # nobody watches their group
    unchanged: int = 0  # renders equal to what their group was last sent


def take_dirty(client: redis.Redis | None = None) -> set[str]:
    client = client or state_redis()
    pipe = client.pipeline(transaction=True)
    pipe.smembers(dirty_set())
    pipe.delete(dirty_set())
    members, _ = pipe.execute()
    return {m.decode() for m in members}


def _expand(keys: set[str]) -> tuple[set[str], dict[str, str]]:
    """A cell's change also changes its zone's header and tile; the tray changes tiles."""
    out = set(keys)
    cells = [k.split(":", 1)[1] for k in keys if k.startswith("cell:")]
    zones = cell_zones(cells)
    for zone in set(zones.values()):
        out |= {f"zone:{zone}", f"tile:{zone}"}
    if "tray" in keys:
        out |= {f"tile:{z}" for z in zone_names()}
    return out, zones


def viewers_key() -> str:
    return f"{key_prefix()}:viewers"


def viewers_change(topics: list[str], delta: int, client: redis.Redis | None = None) -> None:
    """Consumers count themselves in per topic, so nobody renders for an empty room.

    A daphne killed mid-session leaves its counts behind: that costs renders, never frames.
    """
    try:
        pipe = (client or state_redis()).pipeline(transaction=False)
        for topic in topics:
            pipe.hincrby(viewers_key(), topic, delta)
        pipe.execute()
    except redis.RedisError as exc:
        log.warning("live: viewer count: %s", exc)


def watched_topics(client: redis.Redis | None = None) -> set[str]:
    counts = (client or state_redis()).hgetall(viewers_key())
    return {k.decode() for k, v in counts.items() if int(v) > 0}


def _topic_of_key(prefix: str, arg: str, zones: dict[str, str]) -> str | None:
    """The group a built-in key renders for; None when unknown (always rendered)."""
    if prefix == "cell":
        zone = zones.get(arg)
        return f"zone.{zone}" if zone else None
    if prefix == "zone":
        return f"zone.{arg}"
    if prefix == "tile":
        return "zones"
    if prefix in ("tray", "clock", "metrics", "feed", "otto", "epoch", "controls", "auctions"):
        return prefix
    if prefix in ("html", "msg"):
        return arg.split("|", 1)[0]
    return None


class Coalescer:
    def __init__(self, *, only_watched: bool = True) -> None:
        self.tile_sent: dict[str, float] = {}
        # (topic, element id) -> hash of the HTML last sent: a render equal to it is not sent
        # again (a placement re-renders the metrics and the feed; often they did not change).
        self.sent: dict[tuple[str, str], int] = {}
        self.feed_sent: dict[str, dict[str, int]] = {}  # topic -> feed row id -> hash
        # Skip elements of groups nobody joined (a 10,000-placement burst seen only in
        # zones mode renders tiles, not 1,000 cells). Off for benchmarks of rendering.
        self.only_watched = only_watched
        self.ticks = itertools.count(1)

    def _unchanged(self, topic: str, html: str) -> bool:
        """True when this element's render equals what was last sent to its group."""
        ident = _root_id(html)
        if ident is None or SEP in html:
            return False  # several elements (or none named): always sent
        digest = hash(html)
        key = (topic, ident)
        if self.sent.get(key) == digest:
            return True
        self.sent[key] = digest
        return False

    def tick(self, now: float | None = None) -> Tick:
        """Take the dirty set and render it: one render per dirty key (L3)."""
        with clock_row_kept():
            return self._render_tick(now)

    def _render_tick(self, now: float | None) -> Tick:
        now = time.monotonic() if now is None else now
        client = state_redis()
        taken = take_dirty(client)
        # Read through the module: a test moves the epoch mid-tick (dashboard.md L1).
        epoch = clock_selectors.world_epoch() if taken else 0
        keys, zones = _expand(taken)
        watched = watched_topics(client) if self.only_watched else None
        result = Tick()
        by_prefix: dict[str, list[str]] = defaultdict(list)
        unwatched: set[str] = set()
        for key in sorted(keys):
            prefix, _, arg = key.partition(":")
            topic = _topic_of_key(prefix, arg, zones)
            if watched is not None and topic is not None and topic not in watched:
                result.skipped.append(key)
                unwatched.add(topic)
                continue
            if prefix == "tile" and now - self.tile_sent.get(arg, -1e9) < TILE_INTERVAL_S:
                result.deferred.append(key)
                continue
            by_prefix[prefix].append(arg)
        if result.deferred:
            mark_dirty(*result.deferred)
        _count_unseen_changes(client, unwatched)
        if unwatched:
            # Pages that join later get snapshots, not what was sent: forget it.
            self.sent = {k: v for k, v in self.sent.items() if k[0] not in unwatched}
            for topic in unwatched:
                self.feed_sent.pop(topic, None)
        # What this tick's renders record as sent, undone if the tick straddles an epoch.
        sent_before = dict(self.sent)
        feed_before = {topic: dict(rows) for topic, rows in self.feed_sent.items()}
        pieces: dict[str, list[str]] = defaultdict(list)
        published: dict[str, list[str]] = defaultdict(list)  # rendered by their publishers
        messages: list[tuple[str, dict[str, Any]]] = []
        for prefix, args in by_prefix.items():
            if prefix in ("html", "msg"):
                stored = _take_stored(client, [f"{prefix}:{a}" for a in args])
                for arg, value in zip(args, stored, strict=True):
                    result.renders[f"{prefix}:{arg}"] = 1
                    if value is None:
                        continue  # a later tick already sent it
                    topic = arg.split("|", 1)[0]
                    if prefix == "html":
                        pieces[topic].append(value)
                        published[topic].append(value)
                    else:
                        messages.append((topic, json.loads(value)))
                continue
            if prefix == "lrps":
                # Each watched page of desired vs actual: only its rows that changed (D1).
                pages = ["lrps.p1"] if watched is None else [t for t in watched if t.startswith("lrps.p")]
                for topic in sorted(pages):
                    pieces[topic] += fragments.lrps_frame(
                        lrps_page_of(topic), lambda html, topic=topic: self._unchanged(topic, html))
                result.renders["lrps"] = 1
                continue
            renderer = RENDERERS.get(prefix)
            if renderer is None:
                log.warning("live: no renderer for dirty keys %s:*", prefix)
                continue
            for topic, html in renderer(args):
                if prefix == "feed":
                    # Send what changed (L3): the rows new since the last frame, and the order.
                    html = fragments.feed_delta(html, self.feed_sent.setdefault(topic, {}))
                if self._unchanged(topic, html):
                    result.unchanged += 1
                    continue
                pieces[topic].append(html)
            for arg in args:
                result.renders[f"{prefix}:{arg}" if arg else prefix] = 1
            if prefix == "tile":
                for arg in args:
                    self.tile_sent[arg] = now
        # Frames carry the world epoch they were rendered in: a consumer never gives a page
        # drawn for one world the cells of another (it sends the new epoch instead, and
        # the page reloads). A tick that straddled a new epoch may have read some of either
        # world: what it rendered is not sent at all (a page already drawn for the new
        # world would be given the old world's cells) and is rendered again at the next
        # tick; only what publishers rendered themselves goes, stamped with the new epoch.
        if taken:
            after = clock_selectors.world_epoch()
            if after != epoch:
                mark_dirty(*(k for k in taken if not k.startswith(("html:", "msg:"))))
                epoch = after
                pieces = published
                # Not sent, so not "what the group was sent": the next tick's render (often
                # the same, of the new world) must go, not be skipped as unchanged.
                self.sent, self.feed_sent = sent_before, feed_before
        for topic, htmls in sorted(pieces.items()):
            result.frames += numbered_frames(client, topic, SEP.join(htmls), epoch)
        if pieces:
            # The tick's roll-call: a consumer that has every frame of this tick for its
            # groups sends at once instead of waiting out GATHER_S for stragglers (L3).
            roll = [next(self.ticks), sorted(pieces)]
            for _, message in result.frames:
                message["tick"] = roll
        result.frames += messages
        return result


_ROOT_ID = re.compile(r'\s*<[a-zA-Z][^>]*?\sid="([^"]+)"')


def _root_id(html: str) -> str | None:
    match = _ROOT_ID.match(html)
    return match.group(1) if match else None


def numbered_frames(client: redis.Redis, topic: str, html: str,
                    epoch: int | None = None) -> list[tuple[str, dict[str, Any]]]:
    """One frame, or parts of at most FRAME_LIMIT bytes, each numbered in the group (L4)."""
    data = html.encode()
    chunks = [data[i:i + FRAME_LIMIT] for i in range(0, len(data), FRAME_LIMIT)] or [b""]
    last = client.incrby(f"{key_prefix()}:seq:{topic}", len(chunks))
    first = last - len(chunks) + 1
    out = []
    for n, chunk in enumerate(chunks):
        out.append((topic, {
            "type": "live.frame", "topic": topic, "seq": first + n,
            "part": n, "parts": len(chunks), "epoch": epoch,
            # Split on bytes, joined by the consumer before use: decode may cut a character.
            "data": chunk,
        }))
    return out


def _count_unseen_changes(client: redis.Redis, topics: set[str]) -> None:
    """A group nobody watches is not rendered, but its number still moves: a number then
    always names one state of the region (``snapshots``: renders are shared by number)."""
    if not topics:
        return
    pipe = client.pipeline(transaction=False)
    for topic in sorted(topics):
        pipe.incr(f"{key_prefix()}:seq:{topic}")
    pipe.execute()


def group_seqs(topics: list[str], client: redis.Redis | None = None) -> list[int]:
    """The frame numbers of several groups in one round trip (a snapshot reads them all)."""
    if not topics:
        return []
    values = (client or state_redis()).mget([f"{key_prefix()}:seq:{t}" for t in topics])
    return [int(v or 0) for v in values]


def group_seq(topic: str, client: redis.Redis | None = None) -> int:
    value = (client or state_redis()).get(f"{key_prefix()}:seq:{topic}")
    return int(value or 0)


def _take_stored(client: redis.Redis, keys: list[str]) -> list[str | None]:
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.getdel(stored_key(key))
    return [v.decode() if v is not None else None for v in pipe.execute()]


# --- the built-in renderers: the grid and the clock -----------------------------------

def _render_cells(cell_ids: list[str]) -> list[tuple[str, str]]:
    grid = grid_snapshot(cell_ids=cell_ids, tray=False)
    return [(f"zone.{cell.zone}", fragments.cell_fragment(cell))
            for zone in grid.zones for cell in zone.cells]


def _render_zones(names: list[str]) -> list[tuple[str, str]]:
    return [(f"zone.{z.name}", fragments.zone_head_fragment(z)) for z in zone_headers(names)]


def _render_tiles(names: list[str]) -> list[tuple[str, str]]:
    return [("zones", fragments.tile_fragment(t)) for t in zone_tiles(names)]


def _render_tray(_: list[str]) -> list[tuple[str, str]]:
    return [("tray", fragments.tray_fragment())]


def _render_clock(_: list[str]) -> list[tuple[str, str]]:
    return [("clock", fragments.clock_fragment(clock_view()))]


def _render_metrics(_: list[str]) -> list[tuple[str, str]]:
    return [("metrics", fragments.metrics_fragment())]


def _render_feed(_: list[str]) -> list[tuple[str, str]]:
    return [("feed", fragments.feed_fragment())]




def events_views_key() -> str:
    return f"{key_prefix()}:events-views"


def events_views_at_key() -> str:
    return f"{key_prefix()}:events-views-at"


# How long a history view nobody watches is kept. A page registers its view before it
# counts as watching it, and a reloading page stops watching before it starts again: a
# view forgotten in between was never rendered again for that page (the convergence test
# caught /events/ stuck after a scenario load).
EVENTS_VIEW_KEEP_S = 300.0


def events_view_register(query: str) -> str:
    """The group of one history view (filters and page): ``events.<digest>``; the query
    is kept so the coalescer renders each watched view once, whoever watches it."""

    topic = "events." + hashlib.sha1(query.encode()).hexdigest()[:16]
    try:
        pipe = state_redis().pipeline(transaction=False)
        pipe.hset(events_views_key(), topic, query)
        pipe.hset(events_views_at_key(), topic, repr(time.time()))
        pipe.execute()
    except redis.RedisError as exc:
        log.warning("live: events view: %s", exc)
    return topic


def _render_events(_: list[str]) -> list[tuple[str, str]]:
    client = state_redis()
    views = {k.decode(): v.decode() for k, v in client.hgetall(events_views_key()).items()}
    watched = watched_topics(client)
    # Views nobody watches are not rendered and their numbers move like every unwatched
    # group's; those unwatched and unregistered for EVENTS_VIEW_KEEP_S are forgotten.
    unwatched = {topic for topic in views if topic not in watched}
    if unwatched:
        _count_unseen_changes(client, unwatched)
        at = {k.decode(): float(v) for k, v in client.hgetall(events_views_at_key()).items()}
        now = time.time()
        gone = sorted(t for t in unwatched if now - at.get(t, 0.0) > EVENTS_VIEW_KEEP_S)
        if gone:
            client.hdel(events_views_key(), *gone)
            client.hdel(events_views_at_key(), *gone)
    return [(topic, fragments.events_history_fragment(views[topic]))
            for topic in sorted(watched) if topic in views]


def _render_otto(_: list[str]) -> list[tuple[str, str]]:
    return [("otto", fragments.otto_board_fragment())]


def _render_epoch(_: list[str]) -> list[tuple[str, str]]:
    return [("epoch", fragments.epoch_fragment())]


def _render_controls(_: list[str]) -> list[tuple[str, str]]:
    return [("controls", html) for html in fragments.control_choices_fragment().split(SEP)]


def _render_auctions(_: list[str]) -> list[tuple[str, str]]:
    return [("auctions", fragments.auction_list_fragment())]


register_renderer("auctions", _render_auctions)
register_renderer("events", _render_events)
register_renderer("epoch", _render_epoch)
register_renderer("controls", _render_controls)
register_renderer("otto", _render_otto)
register_renderer("metrics", _render_metrics)
register_renderer("feed", _render_feed)
register_renderer("cell", _render_cells)
register_renderer("zone", _render_zones)
register_renderer("tile", _render_tiles)
register_renderer("tray", _render_tray)
register_renderer("clock", _render_clock)


# --- running inside daphne --------------------------------------------------------------

class _Runner:
    """The per-process task: started by the first viewer, stopped after the last."""

    def __init__(self) -> None:
        self.viewers = 0
        self.task: asyncio.Task[None] | None = None
        self.coalescer = Coalescer()
        self.lock: Any = None
        self.rate = RateWindow(int(round(1 / TICK_S)))
        self.presence_checked = 0.0

    def joined(self) -> None:
        self.viewers += 1
        if not getattr(settings, "LIVE_COALESCER_IN_PROCESS", True):
            return
        loop = asyncio.get_running_loop()
        if self.task is None or self.task.done() or self.task.get_loop() is not loop:
            self.task = loop.create_task(self._run(), name="live-coalescer")

    def left(self) -> None:
        self.viewers = max(0, self.viewers - 1)
        if self.viewers == 0:
            # Nobody here renders changes now: renders kept for sharing would grow old.

            snapshots.clear()
            if self.task is not None:
                self.task.cancel()
                self.task = None

    def _lead(self) -> bool:
        if self.lock is not None:
            if lock_renew(self.lock, expected=True):
                return True
            self.lock = None  # lost (lock_renew logged it): try to acquire it again
        try:
            lock = state_redis().lock(f"{key_prefix()}:coalescer", timeout=LEADER_TTL_S,
                                      blocking=False, thread_local=False)
            if lock.acquire():
                self.lock = lock
                # What an earlier term sent may no longer be what the pages show.
                self.coalescer.sent.clear()
                self.coalescer.feed_sent.clear()
                return True
        except redis.RedisError as exc:
            log.warning("live: coalescer lock: %s", exc)
        return False

    def _release(self) -> None:
        try:
            if self.lock is not None and self.lock.owned():
                self.lock.release()
        except redis.RedisError:
            pass
        self.lock = None

    def _tick(self) -> list[tuple[str, dict[str, Any]]]:
        if not self._lead():
            return []
        now = time.monotonic()
        if now - self.presence_checked >= PRESENCE_CHECK_S:
            # A presenter who left ends their presentation even when no page is loaded
            # meanwhile (C5): its banner frame releases the followers in this tick.
            self.presence_checked = now
            for check in TICK_CHECKS:
                check()
        return self.coalescer.tick().frames

    async def _run(self) -> None:
        layer = get_channel_layer()
        # The wait for a wake-up runs in a thread: cancelled, the task ends at once and the
        # thread's BLPOP ends by its own 1 s timeout. Cancelling an asyncio client's BLPOP
        # could leave the task "cancelling" forever, and a test's closing event loop with it.
        waker = redis.Redis.from_url(settings.REDIS_STATE_URL, socket_timeout=5)
        try:
            while True:
                started = time.monotonic()
                try:
                    # One tick, one message per page: the whole tick renders in a small part
                    # of its 250 ms, and a second message would spend the page's 4 a second.
                    frames = await database_sync_to_async(self._tick)()
                    if frames:
                        # Only a tick that sent counts towards the 4 a second: the idle
                        # ones (the lock's renewal, nothing marked) used up the window and
                        # made the next change wait out a frame that never went.
                        self.rate.record(started)
                    await _send_frames(layer, frames)
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - one bad tick must not stop the live view
                    log.exception("live: coalescer tick failed")
                # At most 4 ticks in any rolling second (L3), the next one at once when
                # the last second had fewer: a change after a frame waits no 250 ms ...
                await asyncio.sleep(self.rate.wait())
                # ... and, when idle, the next one starts as soon as something is marked
                # (or after 1 s anyway, to renew the lock and pick up deferred tiles).
                try:
                    await asyncio.to_thread(waker.blpop, [wake_list()], timeout=1)
                except redis.RedisError as exc:
                    log.warning("live: coalescer wake-up: %s", exc)
                    await asyncio.sleep(TICK_S)
        finally:
            # Only Redis: a plain thread, bounded. A thread-sensitive hop here can wait
            # forever when the loop itself is closing (a test's event loop torn down with
            # the task still alive hung a whole suite).
            try:
                await asyncio.wait_for(asyncio.to_thread(self._release), 2)
                await asyncio.wait_for(asyncio.to_thread(waker.close), 2)
            except (TimeoutError, RuntimeError, redis.RedisError) as exc:
                log.warning("live: coalescer stop: %r", exc)


async def _send_frames(layer: Any, frames: list[tuple[str, dict[str, Any]]]) -> None:
    """A tick's frames, every group's at once: each send is a few Redis round trips, and
    one after another they spread a tick's frames past a consumer's gather.
    A group's parts (and messages) keep their order: its frames go one after another."""
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for topic, message in frames:
        by_group[group(topic)].append(message)

    async def send(name: str, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            await layer.group_send(name, message)

    await asyncio.gather(*(send(name, messages) for name, messages in by_group.items()))


runner = _Runner()
