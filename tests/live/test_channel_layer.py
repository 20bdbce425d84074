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
