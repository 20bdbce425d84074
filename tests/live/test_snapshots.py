"""Shared first snapshots (dashboard.md L1): one render per group, query and frame number."""

from __future__ import annotations

import threading
import time

import pytest

from auction.live import snapshots


@pytest.fixture(autouse=True)
def empty():
    snapshots.clear()
    yield
    snapshots.clear()


def test_pages_connecting_at_one_frame_number_share_one_render() -> None:
    """L1: twenty pages opening at once render the region once; a new number renders again."""
    renders: list[int] = []

    def render() -> str:
        renders.append(1)
        time.sleep(0.05)  # slow enough that the others arrive while it runs
        return "<div id='zone-z1'>v1</div>"

    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(snapshots.region_snapshot(("zone.z1", "q", 7), render)))
               for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(renders) == 1 and got == ["<div id='zone-z1'>v1</div>"] * 20
    assert snapshots.region_snapshot(("zone.z1", "q", 8), lambda: "v2") == "v2"
    assert snapshots.region_snapshot(("zone.z1", "other", 7), lambda: "v3") == "v3"


def test_a_kept_render_expires(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    clock = [100.0]
    monkeypatch.setattr(snapshots.time, "monotonic", lambda: clock[0])
    assert snapshots.region_snapshot(("tray", "", 1), lambda: "old") == "old"
    clock[0] += snapshots.TTL_S + 0.1
    assert snapshots.region_snapshot(("tray", "", 1), lambda: "new") == "new"


@pytest.mark.django_db(transaction=True)
def test_a_group_nobody_watches_still_counts_its_changes() -> None:
    """The number of an unwatched group moves with its changes, so a shared render of one
    number can never be of another state."""
    from auction.live.coalescer import Coalescer, group_seq, take_dirty, viewers_key
    from auction.live.publish import mark_dirty, state_redis
    from auction.models import Cell, Zone

    zone = Zone.objects.create(name="z1")
    Cell.objects.create(cell_id="cell-0", zone=zone, index=0, memory_mb=4096)
    client = state_redis()
    take_dirty(client)
    client.delete(viewers_key())
    client.hset(viewers_key(), "clock", 1)  # someone watches something else
    before = group_seq("zone.z1")
    mark_dirty("cell:cell-0")
    tick = Coalescer().tick()
    assert "cell:cell-0" in tick.skipped and not tick.frames
    assert group_seq("zone.z1") == before + 1
    client.delete(viewers_key())
