"""The server-rendered grid (dashboard.md G1, G2, G6) and the app's plumbing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auction.services.scenarios import scenario_load
from diego_web.redis_urls import RedisTarget
from diego_web.supervise import wanted_processes

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_grid_renders_cells_with_hooks_and_the_tray(client) -> None:  # type: ignore[no-untyped-def]
    scenario_load("seed-example")
    html = client.get("/").content.decode()
    cells = re.findall(r'data-cell-id="([^"]+)" data-zone="([^"]+)"', html)
    assert cells == [("cell-1", "z1"), ("cell-2", "z1"), ("cell-3", "z2"), ("cell-4", "z2")]
    assert 'ws-connect="/ws/live/?view=grid&amp;epoch=' in html
    assert "awaiting auction" in html
    for ident in ("lrp-a.0", "lrp-a.2", "lrp-b.1"):
        assert f'data-instance="{ident}"' in html
    assert 'data-task="task-c"' in html
    assert "htmx-2.0.11.min.js" in html and "htmx-ext-ws-2.0.4.min.js" in html


@pytest.mark.django_db
def test_grid_without_cells_says_how_to_load_one(client) -> None:  # type: ignore[no-untyped-def]
    assert "load_scenario seed-example" in client.get("/grid/").content.decode()


def test_no_template_polls() -> None:
    """dashboard.md L7: no hx-trigger="every" anywhere."""
    for template in (ROOT / "templates").rglob("*.html"):
        assert "every " not in template.read_text(), template


def test_redis_url_translation() -> None:
    """One REDIS_URL, spelled for redis-py, Celery (kombu) and channels_redis."""
    unix = RedisTarget.parse("unix:///tmp/r.sock")
    assert unix.redis_py(2) == "unix:///tmp/r.sock?db=2"
    assert unix.celery(0) == "redis+socket:///tmp/r.sock?virtual_host=0"
    assert unix.celery_backend(1) == "redis+socket:///tmp/r.sock?db=1"
    tcp = RedisTarget.parse("redis://:pw@10.0.0.5:6380/0")
    assert tcp.redis_py(3) == "redis://:pw@10.0.0.5:6380/3"
    assert tcp.channels_host(2) == {"address": "redis://:pw@10.0.0.5:6380/2"}
    with pytest.raises(ValueError, match="expected redis://"):
        RedisTarget.parse("http://x")


def test_bundled_redis_only_without_redis_url() -> None:
    """make run: REDIS_URL set → use it, start no bundled Redis."""
    # bbs.md 7.1: completion callbacks have their own worker process; plans.md 2.2: plans too.
    assert wanted_processes({}) == ["redis", "web", "worker", "callbacks", "plans", "beat", "otto", "orchestrators"]
    assert wanted_processes({"DIEGO_OTTO": "0"}) == ["redis", "web", "worker", "callbacks", "plans", "beat"]
    assert wanted_processes({"REDIS_URL": "redis://127.0.0.1:6379/0"}) == [
        "web", "worker", "callbacks", "plans", "beat", "otto", "orchestrators"]


@pytest.mark.django_db
def test_a_mode_chosen_for_the_size_says_so(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md G8: past 50 cells the grid opens dense by itself, says so, links the full view."""
    from auction.models import Cell, Zone

    zone = Zone.objects.create(name="z1")
    Cell.objects.bulk_create(Cell(cell_id=f"c-{i:03d}", zone=zone, index=i, memory_mb=4096) for i in range(60))
    html = client.get("/grid/").content.decode()
    assert "60 cells: dense mode, chosen for the size" in html and 'href="?mode=full">full view' in html
    assert "chosen for the size" not in client.get("/grid/?mode=dense").content.decode()
    Cell.objects.filter(index__gte=10).delete()
    assert "chosen for the size" not in client.get("/grid/").content.decode()
