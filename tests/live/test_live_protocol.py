"""The live socket's protocol (dashboard.md L1-L4, L8) through the real ASGI app."""

from __future__ import annotations

import asyncio
import time

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from auction.live.coalescer import group_seq
from diego_web.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True)]
ORIGIN = [(b"origin", b"http://127.0.0.1:8000")]


def _cells(count: int, zones: int = 3) -> None:
    from auction.models import Cell, Zone

    made = [Zone.objects.create(name=f"z{n + 1}") for n in range(zones)]
    Cell.objects.bulk_create(
        Cell(cell_id=f"cell-{i}", zone=made[i % zones], index=i, memory_mb=4096) for i in range(count)
    )


async def _connect(path: str) -> tuple[WebsocketCommunicator, str]:
    communicator = WebsocketCommunicator(application, path, headers=ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    return communicator, await communicator.receive_from(timeout=5)


def _members(layer) -> dict[str, int]:
    return {name: len(channels) for name, channels in layer.groups.items() if channels}


@pytest.mark.asyncio
async def test_groups_follow_the_view_and_mode() -> None:
    """dashboard.md L2, G8: zones mode joins the tiles' group, dense joins one group per zone."""
    await sync_to_async(_cells)(600)
    layer = get_channel_layer()
    zones, snapshot = await _connect("/ws/live/?view=grid")  # 600 cells: zones mode by default
    assert 'id="zone-tiles"' in snapshot and 'id="cell-' not in snapshot
    joined = _members(layer)
    assert "w.main.zones" in joined and not any(g.startswith("w.main.zone.") for g in joined)
    dense, snapshot = await _connect("/ws/live/?view=grid&mode=dense&zone=z2")
    assert 'id="zone-z2"' in snapshot and 'id="zone-z1"' not in snapshot
    joined = _members(layer)
    assert joined.get("w.main.zone.z2") == 1 and "w.main.zone.z1" not in joined
    for name in joined:
        assert len(name) < 100
    await zones.disconnect()
    await dense.disconnect()


@pytest.mark.asyncio
async def test_snapshot_first_covers_every_joined_region() -> None:
    """dashboard.md L1: the first frame renders clock, tray and every zone of the view."""
    from auction.services.scenarios import scenario_load
    from auction.services.sim import auctioneer_run

    await sync_to_async(scenario_load)("seed-example")
    await sync_to_async(auctioneer_run)()
    communicator, snapshot = await _connect("/ws/live/?view=grid")
    for element in ('id="sim-clock"', 'id="tray"', 'id="zone-z1"', 'id="zone-z2"', 'id="presenter"'):
        assert element in snapshot
    # seed-example: lrp-a 3 and lrp-b 2 instances, task-c and task-d: all 7 placed.
    assert snapshot.count('data-instance="') == 5 and snapshot.count('data-task="') == 2
    await communicator.disconnect()


@pytest.mark.asyncio
async def test_a_gap_resnapshots_that_region_only() -> None:
    """dashboard.md L4: a missing frame number makes the consumer re-send that region."""
    await sync_to_async(_cells)(4, zones=2)
    communicator, _ = await _connect("/ws/live/?view=grid&mode=full")
    layer = get_channel_layer()
    known = await sync_to_async(group_seq)("tray")
    await layer.group_send("w.main.tray", {
        "type": "live.frame", "topic": "tray", "seq": known + 3, "part": 0, "parts": 1,
        "data": b'<aside id="tray" hx-swap-oob="true">stale</aside>',
    })
    frame = await communicator.receive_from(timeout=5)
    assert 'id="tray"' in frame and "stale" not in frame
    assert "all work placed" in frame  # the region re-rendered from the database
    await communicator.disconnect()


@pytest.mark.asyncio
async def test_parts_are_joined_and_old_numbers_dropped() -> None:
    """dashboard.md L4: split frames arrive as one; frames already in the snapshot are skipped."""
    await sync_to_async(_cells)(4, zones=2)
    communicator, _ = await _connect("/ws/live/?view=grid&mode=full")
    layer = get_channel_layer()
    known = await sync_to_async(group_seq)("tray")
    await layer.group_send("w.main.tray", {"type": "live.frame", "topic": "tray", "seq": known,
                                           "part": 0, "parts": 1, "data": b"<p id='old'>old</p>"})
    text = "<aside id='tray' hx-swap-oob='true'>" + "x" * 1000 + "é</aside>"
    data = text.encode()
    cut = data.index("é".encode()) + 1  # split inside a character: joined before decoding
    for n, chunk in enumerate((data[:cut], data[cut:])):
        await layer.group_send("w.main.tray", {"type": "live.frame", "topic": "tray",
                                               "seq": known + 1 + n, "part": n, "parts": 2, "data": chunk})
    frame = await communicator.receive_from(timeout=5)
    assert frame == text
    await communicator.disconnect()


@pytest.mark.asyncio
async def test_a_burst_reaches_the_browser_as_at_most_4_frames_a_second() -> None:
    """dashboard.md L3: the consumer merges its groups' frames: <= 4 sends in any second."""
    await sync_to_async(_cells)(4, zones=2)
    communicator, _ = await _connect("/ws/live/?view=grid&mode=full")
    layer = get_channel_layer()
    seq = {t: await sync_to_async(group_seq)(t) for t in ("tray", "zone.z1", "zone.z2")}
    started = time.monotonic()

    async def burst() -> None:
        for n in range(60):
            for topic in seq:
                seq[topic] += 1
                await layer.group_send(f"w.main.{topic}", {
                    "type": "live.frame", "topic": topic, "seq": seq[topic], "part": 0,
                    "parts": 1, "data": f'<i id="{topic}-{n}"></i>'.encode()})
            await asyncio.sleep(0.02)

    sender = asyncio.ensure_future(burst())
    received, at = [], []
    quiet_since = None
    # Read while the burst goes, so each frame's arrival time is its own.
    # (receive_from's timeout would cancel the consumer: ask for silence first.)
    while True:
        if await communicator.receive_nothing(timeout=0.005, interval=0.001):
            if not sender.done():
                continue
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 1.2:  # longer than a full window
                break
            continue
        quiet_since = None
        received.append(await communicator.receive_from(timeout=1))
        at.append(time.monotonic())
    duration = time.monotonic() - started
    assert len(received) <= 4 * (duration + 1)
    # The fifth frame after any frame comes a second later (small allowance for the
    # receiving side's own scheduling jitter).
    gaps = [at[i + 4] - at[i] for i in range(len(at) - 4)]
    assert all(gap >= 0.9 for gap in gaps), gaps
    joined = "".join(received)
    assert all(f'id="{t}-59"' in joined for t in seq)  # nothing lost by merging
    await communicator.disconnect()


@pytest.mark.asyncio
async def test_foreign_origin_and_missing_origin_are_refused() -> None:
    """dashboard.md L8: Origin is checked."""
    for headers in ([(b"origin", b"http://evil.example")], []):
        communicator = WebsocketCommunicator(application, "/ws/live/", headers=headers)
        connected, _ = await communicator.connect()
        assert not connected


def test_big_merges_are_cut_on_fragment_boundaries() -> None:
    """dashboard.md L3/L4: no websocket message over daphne's 1 MiB; fragments stay whole."""
    from auction.live.consumers import MESSAGE_MAX, pack

    fragments = [f'<i id="f{n}">' + "x" * 300_000 + "</i>" for n in range(7)]
    sent, rest = [], fragments
    while rest:
        text, rest = pack(rest)
        sent.append(text)
    assert all(len(t.encode()) <= MESSAGE_MAX for t in sent) and len(sent) == 3
    assert "".join(sent).count("<i id=") == 7
    huge, rest = pack(["y" * (2 * MESSAGE_MAX)])
    assert len(huge) == 2 * MESSAGE_MAX and rest == []  # one element is never cut


def _desired(count: int, lines: int = 0) -> None:
    """``count`` LRPs with long guids; the first 200 with ``lines`` UNCLAIMED instances each."""
    from auction.models import ActualLRP, DesiredLRP

    DesiredLRP.objects.bulk_create(
        DesiredLRP(process_guid=f"app-{i:05d}-{'x' * 180}", domain="cf-apps", instances=max(1, lines))
        for i in range(count))
    ActualLRP.objects.bulk_create(
        ActualLRP(desired_id=f"app-{i:05d}-{'x' * 180}", index=n, domain="cf-apps", instance_guid=f"g{i}-{n}")
        for i in range(min(count, 200)) for n in range(lines))


@pytest.mark.asyncio
async def test_a_huge_lrps_table_goes_in_messages_under_daphnes_limit() -> None:
    """dashboard.md L4: every snapshot is bounded and split: /lrps/ with rows over 1 MiB in all."""
    from auction.live.consumers import MESSAGE_MAX

    await sync_to_async(_desired)(1500, lines=40)
    communicator = WebsocketCommunicator(application, "/ws/live/?view=lrps", headers=ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    messages = [await communicator.receive_from(timeout=60)]
    while not await communicator.receive_nothing(timeout=1.5):
        messages.append(await communicator.receive_from(timeout=1))
    sizes = [len(m.encode()) for m in messages]
    assert sum(sizes) > 1024 * 1024 and max(sizes) <= MESSAGE_MAX < 1024 * 1024
    joined = "".join(messages)
    # D1: a page of 200 LRPs, all of them, and no row of another page.
    assert all(f'id="lrp-app-{i:05d}-' in joined for i in range(200))
    assert 'id="lrp-app-00200-' not in joined and "page 1 of 8" in joined
    assert joined.index('id="lrp-table"') < joined.index('hx-swap-oob="beforeend:#lrp-rows"')
    await communicator.disconnect()


@pytest.mark.asyncio
async def test_lrps_frames_carry_only_the_rows_that_changed() -> None:
    """dashboard.md D1, L3: an instance's change sends its LRP's row alone, swapped by id; an
    LRP new on the page sends the table again (the page's set of rows changed)."""
    from auction.live.publish import mark_dirty
    from auction.models import ActualLRP, DesiredLRP

    await sync_to_async(_desired)(30, lines=2)
    communicator = WebsocketCommunicator(application, "/ws/live/?view=lrps", headers=ORIGIN)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=10)
    await sync_to_async(mark_dirty)("lrps")  # the group's first frame: every row
    while not await communicator.receive_nothing(timeout=1.0):
        await communicator.receive_from(timeout=1)
    guid = await sync_to_async(lambda: DesiredLRP.objects.order_by("process_guid").values_list(
        "process_guid", flat=True)[3])()
    await sync_to_async(ActualLRP.objects.filter(desired_id=guid, index=0).update)(state="RUNNING")
    await sync_to_async(mark_dirty)("lrps")
    frame = ""
    while f'id="lrp-{guid}"' not in frame:
        frame += await communicator.receive_from(timeout=5)
    assert frame.count('<tbody id="lrp-') == 1 and 'id="lrp-table"' not in frame
    await sync_to_async(DesiredLRP.objects.create)(process_guid="app-00000-a", domain="cf-apps", instances=1)
    await sync_to_async(mark_dirty)("lrps")
    frame = ""
    while 'id="lrp-app-00000-a"' not in frame:
        frame += await communicator.receive_from(timeout=5)
    assert 'id="lrp-table"' in frame and frame.count('<tbody id="lrp-') == 31
    await communicator.disconnect()


@pytest.mark.asyncio
async def test_another_worlds_frame_never_reaches_a_page_it_sends_the_epoch_instead() -> None:
    """dashboard.md L1, L4 (the world epoch): a page drawn for epoch E is never given a frame
    rendered in another epoch (its cells are not on the page); it gets the new epoch once,
    and reloads itself. Frames of its own epoch pass."""
    from auction.selectors.clock import world_epoch

    await sync_to_async(_cells)(4, zones=2)
    epoch = await sync_to_async(world_epoch)()
    communicator, _ = await _connect(f"/ws/live/?view=grid&mode=full&epoch={epoch}")
    layer = get_channel_layer()
    known = await sync_to_async(group_seq)("tray")
    for n, (stamp, text) in enumerate(((epoch + 1, "new world"), (epoch + 1, "newer"), (epoch, "own"))):
        await layer.group_send("w.main.tray", {
            "type": "live.frame", "topic": "tray", "seq": known + 1 + n, "part": 0, "parts": 1,
            "epoch": stamp, "data": f'<aside id="tray" hx-swap-oob="true">{text}</aside>'.encode()})
    received = ""
    while "own" not in received:
        received += await communicator.receive_from(timeout=5)
    assert "new world" not in received and "newer" not in received
    assert received.count(f'id="world-epoch" data-epoch="{epoch + 1}"') == 1
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
def test_frames_carry_the_epoch_they_were_rendered_in(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md L1 (the world epoch): a tick's frames are stamped with the world epoch;
    what a tick that straddled a new epoch rendered is not sent (either world's cells may be
    in it) and is rendered again at the next tick; what publishers rendered themselves goes,
    stamped with the new epoch."""
    import auction.selectors.clock as clock_selectors
    from auction.live.coalescer import Coalescer, take_dirty
    from auction.live.groups import group
    from auction.live.publish import mark_dirty, publish_html, state_redis

    _cells(2, zones=1)
    take_dirty(state_redis())
    mark_dirty("cell:cell-0", "tray")
    tick = Coalescer(only_watched=False).tick()
    assert tick.frames and {m["epoch"] for _, m in tick.frames} == {clock_selectors.world_epoch()}
    epochs = iter((7, 8))
    monkeypatch.setattr(clock_selectors, "world_epoch", lambda: next(epochs))
    mark_dirty("cell:cell-0")
    publish_html(group("presenter"), '<div id="presenter" hx-swap-oob="true">own</div>')
    coalescer = Coalescer(only_watched=False)
    tick = coalescer.tick()
    sent = b"".join(m["data"] for _, m in tick.frames if m.get("type") == "live.frame")
    assert {m["epoch"] for _, m in tick.frames} == {8}
    assert b">own<" in sent and b"cell-0" not in sent
    assert {"cell:cell-0"} <= take_dirty(state_redis())
    # The next tick sends that render, though it is the one the straddled tick made.
    monkeypatch.setattr(clock_selectors, "world_epoch", lambda: 8)
    mark_dirty("cell:cell-0")
    tick = coalescer.tick()
    assert b"cell-0" in b"".join(m["data"] for _, m in tick.frames if m.get("type") == "live.frame")


@pytest.mark.asyncio
async def test_a_resync_of_a_page_of_an_older_world_sends_the_epoch_not_the_new_cells() -> None:
    """dashboard.md L1 (the world epoch), L4: a gap re-snapshots a region, but a page drawn
    for an earlier epoch gets the new epoch marker instead of the new world's cells."""
    from auction.selectors.clock import world_epoch
    from auction.services.world import world_changed

    await sync_to_async(_cells)(4, zones=2)
    epoch = await sync_to_async(world_epoch)()
    communicator, _ = await _connect(f"/ws/live/?view=grid&mode=full&epoch={epoch}")
    await sync_to_async(world_changed)()
    layer = get_channel_layer()
    known = await sync_to_async(group_seq)("zone.z1")
    await layer.group_send("w.main.zone.z1", {
        "type": "live.frame", "topic": "zone.z1", "seq": known + 5, "part": 0, "parts": 1,
        "epoch": epoch, "data": b'<div id="cell-x" hx-swap-oob="true"></div>'})
    received = ""
    while f'data-epoch="{epoch + 1}"' not in received:
        received += await communicator.receive_from(timeout=5)
    assert 'id="zone-z1"' not in received and 'data-cell-id="cell-0"' not in received
    await communicator.disconnect()


@pytest.mark.asyncio
async def test_a_ticks_frames_leave_together_once_its_roll_call_is_complete(monkeypatch, settings) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md L3: a tick's frames carry its roll-call (the groups it sent to); the
    consumer sends as soon as every one of its groups in it has arrived, merged, and waits
    (up to GATHER_S, here made long) while one is missing."""
    from auction.live import consumers

    monkeypatch.setattr(consumers, "GATHER_S", 30.0)
    # Only this test's frames: a real coalescer tick would number zone.z1 past them.
    settings.LIVE_COALESCER_IN_PROCESS = False
    await sync_to_async(_cells)(4, zones=2)
    communicator, _ = await _connect("/ws/live/?view=grid&mode=full")
    layer = get_channel_layer()
    seq = {t: await sync_to_async(group_seq)(t) for t in ("tray", "zone.z1")}

    def frame(topic: str, n: int, html: str, roll: list) -> dict:
        return {"type": "live.frame", "topic": topic, "seq": seq[topic] + n, "part": 0, "parts": 1,
                "data": html.encode(), "tick": roll}

    # Tick 7 sent to tray, zone.z1 and a group this page did not join: two are ours.
    roll = [7, ["tray", "w-not-ours", "zone.z1"]]
    await layer.group_send("w.main.tray", frame("tray", 1, "<aside id='tray'>7</aside>", roll))
    # zone.z1's frame is still missing: tick 7's tray does not leave alone.
    assert await communicator.receive_nothing(timeout=1)
    await layer.group_send("w.main.zone.z1", frame("zone.z1", 1, "<section id='zone-z1'>7</section>", roll))
    merged = await communicator.receive_from(timeout=5)  # long before GATHER_S
    assert "<aside id='tray'>7</aside>" in merged and "<section id='zone-z1'>7</section>" in merged
    await communicator.disconnect()
