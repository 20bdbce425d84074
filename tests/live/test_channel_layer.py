"""The channel layer joins and leaves a page's groups in one trip (dashboard.md L2, L8)."""

from __future__ import annotations

import asyncio

from channels.layers import get_channel_layer


def test_group_add_many_and_discard_many_reach_exactly_the_groups(redis_channel_layer) -> None:  # type: ignore[no-untyped-def]
    """A channel added to ten groups in one pipeline gets a send to each of them; after
    ``group_discard_many`` it gets none, and other members are untouched."""

    async def scenario() -> tuple[list[str], list[str], int]:
        layer = get_channel_layer()
        mine = await layer.new_channel()
        other = await layer.new_channel()
        names = [f"w.test.zone.z{n}" for n in range(10)]
        await layer.group_add_many(names, mine)
        await layer.group_add(names[0], other)
        for name in names:
            await layer.group_send(name, {"type": "live.frame", "html": name})
        got = [(await asyncio.wait_for(layer.receive(mine), 5))["html"] for _ in names]
        other_got = [(await asyncio.wait_for(layer.receive(other), 5))["html"]]
        await layer.group_discard_many(names, mine)
        for name in names:
            await layer.group_send(name, {"type": "live.frame", "html": name})
        other_got.append((await asyncio.wait_for(layer.receive(other), 5))["html"])
        try:
            stray = await asyncio.wait_for(layer.receive(mine), 0.5)
            leftover = 1 if stray else 0
        except TimeoutError:
            leftover = 0
        await layer.flush()
        return got, other_got, leftover

    got, other_got, leftover = asyncio.run(scenario())
    assert sorted(got) == sorted(f"w.test.zone.z{n}" for n in range(10))
    assert other_got == ["w.test.zone.z0", "w.test.zone.z0"]
    assert leftover == 0


def test_a_cancelled_receive_ends_as_a_cancellation_not_a_timeout(redis_channel_layer, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A socket closing cancels its consumer's receive; redis-py may answer that with
    ``TimeoutError`` ("Timeout reading from ..."), which channels does not expect and daphne
    logged as "Exception inside application" for a closed tab (dashboard.md L10). The
    layer gives it back as ``CancelledError``; a real timeout (nobody cancelled) stays one."""
    from channels_redis.core import RedisChannelLayer as Base

    reading = asyncio.Event()

    async def redis_like_receive(self, channel):  # type: ignore[no-untyped-def]
        reading.set()
        try:
            await asyncio.sleep(30)  # a read that only a cancel ends
        except asyncio.CancelledError:
            raise TimeoutError("Timeout reading from redis.sock") from None

    async def timing_out_receive(self, channel):  # type: ignore[no-untyped-def]
        raise TimeoutError("Timeout reading from redis.sock")

    async def scenario() -> tuple[str, str]:
        layer = get_channel_layer()
        channel = await layer.new_channel()
        monkeypatch.setattr(Base, "receive", redis_like_receive)
        task = asyncio.ensure_future(layer.receive(channel))
        await asyncio.wait_for(reading.wait(), 10)  # cancelled while reading, as a closing socket is
        task.cancel()
        try:
            await task
            cancelled = "returned"
        except asyncio.CancelledError:
            cancelled = "cancelled"
        except TimeoutError:
            cancelled = "timeout"
        monkeypatch.setattr(Base, "receive", timing_out_receive)
        try:
            await layer.receive(channel)
            uncancelled = "returned"
        except TimeoutError:
            uncancelled = "timeout"
        return cancelled, uncancelled

    assert asyncio.run(scenario()) == ("cancelled", "timeout")
