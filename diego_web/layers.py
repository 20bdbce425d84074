"""The Redis channel layer, joining and leaving many groups in one round trip.

A live page joins ~10 groups (dashboard.md L2). channels_redis adds a channel to a group
with two commands, one trip each, so a room of 200 pages opening at once made ~4,400
trips on daphne's one event loop (and, leaving, 2,000 more), and took a pool connection
per trip in flight. ``group_add_many`` / ``group_discard_many`` send one pipeline per
Redis shard instead; the keys and their expiry are exactly channels_redis's own.

``receive`` also gives a cancelled receive back as a cancellation: redis-py turns a read
cancelled mid-wait into ``TimeoutError("Timeout reading from ...")``, and channels only
expects ``CancelledError`` from the receive it cancels when a socket closes, so every
closed tab could log "Exception inside application" (dashboard.md L10).
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Iterable

from channels_redis.core import RedisChannelLayer as _RedisChannelLayer


class RedisChannelLayer(_RedisChannelLayer):
    async def receive(self, channel: str) -> dict[str, object]:
        try:
            message: dict[str, object] = await super().receive(channel)
        except TimeoutError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError from None
            raise
        return message

    def _by_shard(self, groups: Iterable[str], channel: str) -> dict[int, list[str]]:
        assert self.require_valid_channel_name(channel), "Channel name not valid"
        shards: dict[int, list[str]] = defaultdict(list)
        for name in groups:
            assert self.require_valid_group_name(name), "Group name not valid"
            shards[self.consistent_hash(name)].append(self._group_key(name))
        return shards

    async def group_add_many(self, groups: Iterable[str], channel: str) -> None:
        now = time.time()
        for index, keys in self._by_shard(groups, channel).items():
            async with self.connection(index).pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.zadd(key, {channel: now})
                    pipe.expire(key, self.group_expiry)
                await pipe.execute()

    async def group_discard_many(self, groups: Iterable[str], channel: str) -> None:
        for index, keys in self._by_shard(groups, channel).items():
            async with self.connection(index).pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.zrem(key, channel)
                await pipe.execute()
