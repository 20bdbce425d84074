"""The one websocket a page opens (dashboard.md 10): snapshot first, then merged frames.

- L1: on connect, every joined group's region rendered from the page's templates.
- L2: the view decides the groups (auction/live/views.py).
- L3: frames from all groups are merged: at most 4 websocket messages in any rolling
  second (``RateWindow``), so a browser receives at most 4 frames/s whatever the burst,
  and a change that follows a frame still goes at once.
- L4: frames are numbered per group; parts are joined; a gap (channels_redis drops
  sends to a full channel) re-snapshots that group's region only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from auction.live import presenter
from auction.live.coalescer import SEP, group_seqs, runner, viewers_change
from auction.live.fragments import epoch_marker
from auction.live.groups import group
from auction.live.presenter import PERMISSION as PRESENT_PERMISSION
from auction.live.presenter import presenter_publish_state
from auction.live.rate import RateWindow
from auction.live.snapshots import region_snapshot
from auction.live.views import LiveParams, region_html, topics_for
from auction.selectors.clock import world_epoch
from auction.services.kiosk import kiosk_group, kiosk_token_key

log = logging.getLogger(__name__)

MESSAGES_PER_S = 4
# Frames of one tick for different groups usually arrive within milliseconds, but one can
# straggle while the next tick renders (seen: 26 ms): wait at most this long for the rest
# so they leave as one message (no wait once the tick's roll-call is complete). Sent
# apart, a straggler spent one of the page's 4 messages a second and the next change
# waited out the window. Only a frame that never comes (dropped: L4) waits it out.
GATHER_S = 0.1
# daphne (autobahn) refuses websocket messages over 1 MiB: a larger merge is cut on
# fragment boundaries and the rest waits for the next flush (still <= 4 messages/s).
MESSAGE_MAX = 900 * 1024


def pack(fragments: list[str], limit: int = MESSAGE_MAX) -> tuple[str, list[str]]:
    """As many whole fragments as fit in ``limit`` bytes (at least one), and the rest."""
    size, n = 0, 0
    for fragment in fragments:
        size += len(fragment.encode()) + len(SEP)
        if n and size > limit:
            break
        n += 1
    return SEP.join(fragments[:n]), fragments[n:]


# A page sends only its presenter state (C5), a few hundred bytes: anything far longer is
# not from our page and is not read at all (a 200,000-deep array is 400 KB).
MAX_PAGE_MESSAGE = 16 * 1024

class LiveConsumer(AsyncWebsocketConsumer):
    params: LiveParams
    topics: list[str]

    async def connect(self) -> None:
        query = parse_qs(self.scope.get("query_string", b"").decode("utf-8", "replace"))
        self.params = LiveParams.parse(query)
        self.kiosk: str | None = None
        if self.params.view == "kiosk" or self.params.screen:
            # A wall screen's socket needs its link, valid now, and closes when the link
            # is revoked (dashboard.md AD9): refused before the handshake completes.
            key = await database_sync_to_async(kiosk_token_key)((query.get("token") or [""])[0][:500])
            if key is None:
                await self.close(code=4403)
                return
            self.kiosk = kiosk_group(key)
            await self.channel_layer.group_add(self.kiosk, self.channel_name)
        # The world epoch the page was drawn for (``services.world``), when it says.
        raw_epoch = (query.get("epoch") or [""])[0]
        self.epoch: int | None = int(raw_epoch) if raw_epoch.isascii() and raw_epoch.isdigit() else None
        self.epoch_sent = False
        self.topics = await database_sync_to_async(topics_for)(self.params)
        self.seq: dict[str, int] = {}
        self.parts: dict[str, list[bytes]] = {}
        self.pending: dict[str, list[str]] = {}
        self.outbox: list[str] = []
        self.resync: set[str] = set()
        self.last_sent = 0.0
        self.rate = RateWindow(MESSAGES_PER_S)
        self.flusher: asyncio.Task[None] | None = None
        self.frames_sent = 0
        # The newest tick's roll-call (coalescer): its number, our groups in it, and those
        # whose frame has arrived whole; ``gathered`` is set when none is missing.
        self.roll: tuple[Any, set[str], set[str]] = (None, set(), set())
        self.gathered = asyncio.Event()
        # One pipeline for all our groups (``diego_web.layers``); one at a time otherwise:
        # at once, a room of pages connecting takes a Redis connection per group each (200
        # pages x 10 groups passed the pool's 2,000).
        await self._groups("add")
        await self.accept()
        runner.joined()
        # A user who may present says, while this page is open, that they are here: a
        # presentation ends when its presenter has had no page open for a while (C5).
        self.presence: asyncio.Task[None] | None = None
        user = self.scope.get("user")
        if user is not None and getattr(user, "is_authenticated", False):
            if await database_sync_to_async(user.has_perm)(PRESENT_PERMISSION):
                self.presence = asyncio.create_task(self._present_here(user.pk))
        # Counted in (so the coalescer renders for us), then the snapshot first (L1):
        # whatever happened between the page render and the socket opening is covered by
        # this frame (several messages if it is huge). One trip to the sync thread.
        rest = (await database_sync_to_async(self._join)(self.topics)).split(SEP)
        while rest:
            text, rest = pack(rest)
            await self._send(text)

    async def disconnect(self, code: int) -> None:
        if not hasattr(self, "topics"):
            return
        runner.left()
        if getattr(self, "presence", None) is not None:
            self.presence.cancel()
        if self.kiosk is not None:
            await self.channel_layer.group_discard(self.kiosk, self.channel_name)
        if self.flusher is not None:
            self.flusher.cancel()
        await database_sync_to_async(viewers_change)(self.topics, -1)
        await self._groups("discard")

    async def _groups(self, verb: str) -> None:
        names = [group(topic) for topic in self.topics]
        many = getattr(self.channel_layer, f"group_{verb}_many", None)
        if many is not None:
            await many(names, self.channel_name)
            return
        one = getattr(self.channel_layer, f"group_{verb}")
        for name in names:
            await one(name, self.channel_name)

    def _join(self, topics: list[str]) -> str:
        viewers_change(topics, 1)
        return self._regions(topics)

    def _regions(self, topics: list[str]) -> str:
        """Regions as they are now; frames numbered up to here are already in them.

        A page drawn for another world epoch gets the new epoch instead (it reloads): a
        resync must not swap the new world's cells into it."""
        if self.epoch is not None and (current := world_epoch()) != self.epoch:
            self.epoch_sent = True
            return epoch_marker(current)
        parts = []
        for topic, seq in zip(topics, group_seqs(topics), strict=True):
            self.seq[topic] = seq
            parts.append(region_snapshot((topic, self.params, seq),
                                         lambda topic=topic: region_html(topic, self.params)))
        return SEP.join(p for p in parts if p)

    async def _send(self, html: str) -> None:
        self.last_sent = time.monotonic()
        self.rate.record(self.last_sent)
        self.frames_sent += 1
        await self.send(text_data=html)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Requests from the page: presenter state (C5). Everything else is ignored."""
        if not text_data or len(text_data) > MAX_PAGE_MESSAGE:
            return
        try:
            message = json.loads(text_data)
        except (ValueError, RecursionError):  # deep nesting is the reader's recursion limit
            return
        if isinstance(message, dict) and isinstance(message.get("present"), dict):
            user = self.scope.get("user")
            await database_sync_to_async(presenter_publish_state)(user, message["present"])

    async def _present_here(self, user_id: int) -> None:
        while True:
            try:
                await asyncio.to_thread(presenter.presenter_seen, user_id)
            except Exception as exc:  # noqa: BLE001 - a missed beat; the next one may pass
                log.warning("live: presenter presence: %s", exc)
            await asyncio.sleep(presenter.PRESENTER_SEEN_EVERY_S)

    async def kiosk_revoked(self, event: dict[str, Any]) -> None:
        """This wall screen's link was revoked (dashboard.md AD9): no frame more. The page
        sees code 4403 and loads itself again, which shows the refused page."""
        await self.close(code=4403)

    async def live_frame(self, event: dict[str, Any]) -> None:
        """A numbered frame (or part) for one of our groups."""
        topic = event.get("topic")
        if topic is None or "seq" not in event:
            # A frame from an older sender: no numbering, pass it on merged.
            self.pending.setdefault("", []).append(event.get("html", ""))
            self._schedule()
            return
        seq = int(event["seq"])
        frame_epoch = event.get("epoch")
        if self.epoch is not None and frame_epoch is not None and frame_epoch != self.epoch:
            # Another world's frame: never swapped into this page; the page is told the
            # new epoch (once) and reloads itself (L1: its snapshot is then that world).
            self.seq[topic] = max(seq, self.seq.get(topic, 0))
            if not self.epoch_sent:
                self.epoch_sent = True
                self.pending.setdefault("epoch", []).append(epoch_marker(int(frame_epoch)))
                self._schedule()
            return
        known = self.seq.get(topic, 0)
        if seq <= known:
            return  # already in our snapshot of that region
        if seq != known + 1:
            self.resync.add(topic)  # L4: something was dropped; re-snapshot this region
        self.seq[topic] = seq
        if topic in self.resync:
            self.parts.pop(topic, None)
            self._schedule()
            return
        chunks = self.parts.setdefault(topic, [])
        if event.get("part", 0) != len(chunks):
            self.resync.add(topic)
            self.parts.pop(topic, None)
            self._schedule()
            return
        chunks.append(event["data"])
        if len(chunks) == event.get("parts", 1):
            self.pending.setdefault(topic, []).append(b"".join(self.parts.pop(topic)).decode())
            self._answer_roll(event.get("tick"), topic)
            self._schedule()

    def _answer_roll(self, roll: Any, topic: str) -> None:
        if not roll:
            return
        number, topics = roll
        if number != self.roll[0]:
            self.roll = (number, set(topics) & set(self.topics), set())
            self.gathered.clear()  # a roll-call of an earlier tick says nothing of this one
        self.roll[2].add(topic)
        if self.roll[1] <= self.roll[2]:
            self.gathered.set()

    async def live_events(self, event: dict[str, Any]) -> None:
        """New BBS events were stored; pages showing the feed read them (dashboard.md M2)."""

    def _schedule(self) -> None:
        if not (self.pending or self.resync or self.outbox):
            return
        if self.flusher is not None and not self.flusher.done():
            return
        self.flusher = asyncio.ensure_future(self._flush_after())

    async def _flush_after(self) -> None:
        # Until the tick's frames are all here (at most GATHER_S), then the rate (L3).
        if not self.gathered.is_set():
            try:
                await asyncio.wait_for(self.gathered.wait(), GATHER_S)
            except TimeoutError:
                pass
        self.gathered.clear()
        if (wait := self.rate.wait()) > 0:
            await asyncio.sleep(wait)
        resync = sorted(self.resync)
        self.resync.clear()
        pending, self.pending = self.pending, {}
        html = []
        if resync:
            for topic in resync:
                pending.pop(topic, None)  # the region supersedes its frames
            html.append(await database_sync_to_async(self._regions)(resync))
        for fragments in pending.values():
            html += fragments
        for chunk in html:
            self.outbox += [f for f in chunk.split(SEP) if f.strip()]
        if self.outbox:
            text, self.outbox = pack(self.outbox)
            await self._send(text)
        self.flusher = None
        self._schedule()  # what did not fit goes at the next flush
