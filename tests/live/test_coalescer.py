"""The coalescer (dashboard.md L3, L4): one render per dirty key per tick, numbered frames."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auction.live import coalescer as co
from auction.live.publish import (
    cells_changed,
    dirty_set,
    mark_dirty,
    mark_dirty_after_commit,
    publish_after_commit,
    publish_html,
    state_redis,
)

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def clean_redis():
    client = state_redis()
    for key in client.scan_iter("live:*"):
        client.delete(key)
    yield client


@pytest.fixture
def counted(monkeypatch):
    """Wrap every renderer to count how often each key is rendered."""
    calls: dict[str, int] = {}

    def wrap(prefix, renderer):
        def counting(args):
            for arg in args:
                calls[f"{prefix}:{arg}"] = calls.get(f"{prefix}:{arg}", 0) + 1
            return renderer(args)
        return counting

    for prefix, renderer in list(co.RENDERERS.items()):
        monkeypatch.setitem(co.RENDERERS, prefix, wrap(prefix, renderer))
    return calls


def _seed():
    from auction.services.scenarios import scenario_load
    from auction.services.sim import auctioneer_run

    scenario_load("seed-example")
    auctioneer_run()


def test_one_render_per_dirty_key_per_tick(clean_redis, counted) -> None:
    """dashboard.md L3: 1,000 marks of the same cells render each cell once in the tick."""
    _seed()
    from auction.models import Cell

    co.Coalescer(only_watched=False).tick()  # drain what the scenario marked
    counted.clear()
    cells = list(Cell.objects.values_list("cell_id", flat=True))
    for _ in range(250):
        for cell in cells:
            mark_dirty(f"cell:{cell}", "tray")
    tick = co.Coalescer(only_watched=False).tick()
    assert {k: v for k, v in counted.items() if k.startswith("cell:")} == {f"cell:{c}": 1 for c in cells}
    assert counted["tray:"] == 1
    # One frame per group: each zone's group, the tray's, the tiles'.
    topics = [topic for topic, _ in tick.frames]
    assert len(topics) == len(set(topics))
    assert set(topics) >= {"zone.z1", "zone.z2", "tray"}
    # Nothing left: the next tick renders nothing.
    counted.clear()
    assert co.Coalescer(only_watched=False).tick().frames == [] and not [k for k in counted if k.startswith("cell:")]


def test_services_only_mark_after_commit(clean_redis) -> None:
    """dashboard.md L3: a service marks keys after its transaction commits, never before."""
    from django.db import transaction

    with transaction.atomic():
        mark_dirty_after_commit(*cells_changed(["cell-1"]))
        assert not clean_redis.sismember(dirty_set(), "cell:cell-1")
    assert clean_redis.sismember(dirty_set(), "cell:cell-1")


def test_one_transaction_makes_one_mark_so_its_change_is_one_tick(clean_redis) -> None:
    """dashboard.md L3: an auction stores its events, then its cells, in one transaction.
    Marked one by one after the commit, a tick could wake between the two and the change
    went as two frames (spending a page's 4 a second); its marks now land as one."""
    from django.db import transaction

    from auction.live.publish import generation

    before = generation() or 0
    with transaction.atomic():
        publish_after_commit("w.main.zones", {"type": "live.events"})
        mark_dirty_after_commit(*cells_changed(["cell-1"]))
        with transaction.atomic():
            mark_dirty_after_commit("auctions")
        publish_after_commit("w.main.feed", {"type": "live.frame", "html": '<div id="feed-row-y">y</div>'})
        assert clean_redis.scard(dirty_set()) == 0
    assert generation() == before + 1  # one mark
    dirty = {m.decode() for m in clean_redis.smembers(dirty_set())}
    assert {"feed", "metrics", "cell:cell-1", "tray", "auctions", "html:feed|feed-row-y"} <= dirty
    # The next transaction starts afresh.
    with transaction.atomic():
        mark_dirty_after_commit("clock")
    assert generation() == before + 2


def test_a_change_to_a_row_on_no_cell_still_redraws_the_tray(clean_redis) -> None:
    """dashboard.md L3: a change to an instance that is on no cell changes no cell, yet the
    tray. The convergence soak (seed 21, step 58) left the tray drawing an instance the
    metrics header (marked by the change's event) no longer counted as unclaimed."""
    from dataclasses import replace

    from django.db import transaction

    from auction.bbs.changes import RowDelete
    from auction.models import ActualLRP
    from auction.services.scenarios import scenario_load
    from auction.services.store import DbStore
    from auction.sim.changes import ChangeSet

    scenario_load("seed-example")  # every instance unclaimed, in the tray
    store = DbStore()
    with transaction.atomic():
        rows = [r for r in store.cluster_view().rows if r.state == "UNCLAIMED" and not r.cell_id]
        change = ChangeSet(0.0)
        change.lrp_ops.append(RowDelete(rows[0].key, replace(rows[0])))
        clean_redis.delete(dirty_set())
        store.apply(change)
    assert not ActualLRP.objects.filter(desired_id=rows[0].process_guid, index=rows[0].index).exists()
    assert clean_redis.sismember(dirty_set(), "tray")


def test_latest_fragment_wins_and_legacy_messages_route_through_marks(clean_redis) -> None:
    """dashboard.md L3: caller-rendered fragments collapse to the latest per element id."""
    for n in range(50):
        publish_html("w.main.feed", f'<div id="feed-row-x" hx-swap-oob="true">{n}</div>')
    publish_after_commit("w.main.zones", {"type": "live.cells", "cells": ["cell-9"]})  # no transaction: at once
    assert clean_redis.sismember(dirty_set(), "cell:cell-9")
    tick = co.Coalescer(only_watched=False).tick()
    feed = [m for topic, m in tick.frames if topic == "feed"]
    assert len(feed) == 1 and feed[0]["data"].decode().endswith(">49</div>")
    with pytest.raises(ValueError):
        publish_html("w.main.feed", "<div>no id</div>")


def test_frames_are_numbered_per_group_and_split_over_256_kb(clean_redis, monkeypatch) -> None:
    """dashboard.md L4: consecutive numbers per group; a 600 KB frame goes in 3 parts."""
    big = '<div id="big" hx-swap-oob="true">' + "é" * 300_000 + "</div>"
    monkeypatch.setitem(co.RENDERERS, "big", lambda args: [("lrps", big)])
    mark_dirty("big:x")
    first = co.Coalescer(only_watched=False).tick().frames
    parts = [m for topic, m in first if topic == "lrps"]
    assert [m["parts"] for m in parts] == [3, 3, 3]
    assert all(len(m["data"]) <= co.FRAME_LIMIT for m in parts)
    assert b"".join(m["data"] for m in parts).decode() == big
    mark_dirty("big:x")
    second = [m for topic, m in co.Coalescer(only_watched=False).tick().frames if topic == "lrps"]
    seqs = [m["seq"] for m in parts + second]
    assert seqs == list(range(seqs[0], seqs[0] + 6))


def test_zone_tiles_update_at_most_once_a_second(clean_redis) -> None:
    """dashboard.md G8: a zone tile is re-rendered at most once per second."""
    _seed()
    coalescer = co.Coalescer(only_watched=False)
    coalescer.tick(now=100.0)
    mark_dirty("tile:z1")
    assert not [t for t, _ in coalescer.tick(now=100.5).frames if t == "zones"]
    assert clean_redis.sismember(dirty_set(), "tile:z1")  # deferred, not lost
    assert "tile:z1" in coalescer.tick(now=101.1).renders


def test_a_render_equal_to_what_its_group_was_sent_is_not_sent_again(clean_redis) -> None:
    """dashboard.md L3 (send what changed): an element re-rendered unchanged is left out of
    the frame; changed, it goes; a group nobody watched meanwhile gets it again."""
    from auction.models import Cell

    _seed()
    coalescer = co.Coalescer(only_watched=False)
    coalescer.tick()
    mark_dirty("cell:cell-1")
    tick = coalescer.tick()
    assert tick.unchanged >= 1 and not [m for _, m in tick.frames if b'id="cell-' in m["data"]]
    Cell.objects.filter(cell_id="cell-1").update(memory_mb=2048)
    mark_dirty("cell:cell-1")
    frames = coalescer.tick().frames
    assert [m for _, m in frames if b"cell-1" in m["data"] and b"2048" in m["data"]]
    coalescer.only_watched = True
    co.viewers_change(["clock"], 1)
    mark_dirty("cell:cell-1")
    assert "cell:cell-1" in coalescer.tick().skipped
    coalescer.only_watched = False
    mark_dirty("cell:cell-1")
    assert [m for _, m in coalescer.tick().frames if b"cell-1" in m["data"]]
    co.viewers_change(["clock"], -1)


def test_no_template_polls() -> None:
    """dashboard.md L7: no hx-trigger="every …" anywhere: countdowns run in the browser."""
    offenders = [str(p) for p in (ROOT / "templates").rglob("*.html") if "every" in p.read_text()]
    assert offenders == []


def test_groups_nobody_watches_are_not_rendered(clean_redis, counted) -> None:
    """dashboard.md L3, L8: with every viewer in zones mode, a burst renders tiles, not cells."""
    _seed()
    co.Coalescer(only_watched=False).tick()
    counted.clear()
    co.viewers_change(["zones", "tray", "clock"], 1)
    mark_dirty("cell:cell-1", "cell:cell-3", "tray")
    tick = co.Coalescer().tick(now=1000.0)
    assert not [k for k in counted if k.startswith(("cell:", "zone:"))]
    assert counted["tray:"] == 1 and {t for t, _ in tick.frames} == {"tray", "zones"}
    assert "cell:cell-1" in tick.skipped
    co.viewers_change(["zones", "tray", "clock"], -1)


def test_feed_frames_carry_the_order_and_only_new_or_changed_rows(clean_redis) -> None:
    """dashboard.md M2, L3: the feed's snapshot is whole; its frames name every row in
    order but carry only the rows new or changed since the group's last frame."""
    from auction.live.fragments import feed_delta, feed_fragment
    from auction.services.events import event_record

    for n in range(3):
        event_record("clock_pause" if n % 2 else "cell_fail", float(n), key=f"k{n}", cell_id=f"cell-{n}")
    full = feed_fragment()
    assert 'data-full="1"' in full and full.count('class="feed-row') == 3
    sent: dict[str, int] = {}
    first = feed_delta(full, sent)
    assert 'data-full' not in first and first.count('class="feed-row') == 3
    event_record("zone_fail", 9.0, key="z1")
    second = feed_delta(feed_fragment(), sent)
    order = re.search(r'data-order="([^"]*)"', second).group(1).split()
    assert len(order) == 4 and second.count('class="feed-row') == 1 and 'data-type="zone_fail"' in second
    assert feed_delta(feed_fragment(), sent).count('class="feed-row') == 0


@pytest.mark.asyncio
async def test_only_ticks_that_sent_count_towards_four_a_second(clean_redis, monkeypatch) -> None:
    """dashboard.md L3: the 4-a-second window counts ticks that sent frames; idle ones (the
    lock's renewal, a wake-up with nothing changed) left a change waiting for nothing."""
    import asyncio

    runner = co._Runner()
    ticks: list[int] = []

    def idle() -> list:
        ticks.append(1)
        return []

    monkeypatch.setattr(runner, "_tick", idle)
    task = asyncio.get_running_loop().create_task(runner._run())
    try:
        for _ in range(8):
            clean_redis.rpush(co.wake_list(), "1")
            await asyncio.sleep(0.05)
        assert len(ticks) >= 6
        assert len(runner.rate.sent) == 0
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_the_feed_frame_rows_are_the_pages_rows_as_they_fold(clean_redis) -> None:
    """dashboard.md M2, L1: the frame's rows (kept per row between ticks) are exactly what
    the page's template draws, also after a row folds one more event ("+n similar")."""
    from django.template.loader import render_to_string

    from auction.live.fragments import feed_fragment
    from auction.selectors.feed import feed_rows
    from auction.services.domains import domain_upsert

    _seed()
    for n in range(3):
        assert render_to_string("partials/feed_rows.html", {"rows": feed_rows()}).rstrip() in feed_fragment()
        domain_upsert("cf-apps", 120.0 + n, source="test")
    assert "+1 similar" in feed_fragment()


def test_a_history_view_outlives_a_moment_nobody_watches_it(clean_redis, monkeypatch) -> None:
    """dashboard.md M2, L1: a page registers its /events/ view before it counts as watching,
    and a reloading page stops watching before it starts again: a tick in between must not
    forget the view (that page then never got the history again). Forgotten only after
    EVENTS_VIEW_KEEP_S unwatched."""
    topic = co.events_view_register("type=&app=&cell=&page=1")
    co._render_events([])  # nobody watches it at this instant
    assert clean_redis.hexists(co.events_views_key(), topic)
    co.viewers_change([topic], 1)
    assert [t for t, _ in co._render_events([])] == [topic]
    co.viewers_change([topic], -1)
    later = co.time.time() + co.EVENTS_VIEW_KEEP_S + 1
    monkeypatch.setattr(co.time, "time", lambda: later)
    co._render_events([])
    assert not clean_redis.hexists(co.events_views_key(), topic)


def test_feed_rows_read_as_words_not_python() -> None:
    """dashboard.md M2: pairs, flags and lists in words."""
    from auction.selectors.feed import summary

    assert summary("admin_change", "cell-1", "", {"state": ["healthy", "failed"], "source": "admin",
                                                  "user": "x"}) == "cell-1 state healthy → failed (admin by an operator)"
    assert summary("admin_change", "web", "", {"diff": {"routable": [False, True]}}) == "web routable no → yes"
    assert summary("x", "web", "", {"tags": ["a", "b", "c"]}) == "web tags a, b, c"
