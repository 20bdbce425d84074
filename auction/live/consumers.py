"""The one websocket a page opens (dashboard.md 10): snapshot first, then frames."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from auction.live.fragments import clock_fragment, grid_fragments
from auction.live.groups import group
from auction.selectors.clock import clock_view

# What each page shows, hence which groups it joins.
VIEW_TOPICS: dict[str, tuple[str, ...]] = {
    "grid": ("clock", "zones", "tray", "metrics"),
    "kiosk": ("clock", "zones", "tray", "metrics"),
}
DEFAULT_VIEW = "grid"


class LiveConsumer(AsyncWebsocketConsumer):
    groups_joined: list[str]

    async def connect(self) -> None:
        query = parse_qs(self.scope.get("query_string", b"").decode())
        view = query.get("view", [DEFAULT_VIEW])[0]
        topics = VIEW_TOPICS.get(view, VIEW_TOPICS[DEFAULT_VIEW])
        self.groups_joined = [group(topic) for topic in topics]
        for name in self.groups_joined:
            await self.channel_layer.group_add(name, self.channel_name)
        await self.accept()
        # Snapshot first (L1): whatever happened between the page render and the
        # socket opening is covered by this frame.
        await self.send(text_data=await self._snapshot())

    async def disconnect(self, code: int) -> None:
        for name in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(name, self.channel_name)

    @database_sync_to_async
    def _snapshot(self) -> str:
        return clock_fragment(clock_view())

    async def live_cells(self, event: dict[str, Any]) -> None:
        """Cells changed: send them re-rendered, with their zone headers and the tray."""
        await self.send(text_data=await database_sync_to_async(grid_fragments)(event["cells"]))

    async def live_events(self, event: dict[str, Any]) -> None:
        """New BBS events were stored; pages showing the feed read them (dashboard.md M2)."""

    async def live_frame(self, event: dict[str, Any]) -> None:
        """A rendered fragment for one of our groups: pass it through."""
        await self.send(text_data=event["html"])
