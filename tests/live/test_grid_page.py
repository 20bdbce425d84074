"""The grid page (dashboard.md G1-G8, U1) rendered by the server."""

from __future__ import annotations

import pytest

from auction.models import Cell, Zone

pytestmark = pytest.mark.django_db


def _cells(count: int, zones: int = 3) -> None:
    made = [Zone.objects.create(name=f"z{n + 1}") for n in range(zones)]
    Cell.objects.bulk_create(
        Cell(cell_id=f"cell-{i}", zone=made[i % zones], index=i, memory_mb=4096) for i in range(count)
    )


@pytest.mark.parametrize(("cells", "mode"), [(4, "full"), (60, "dense"), (600, "zones")])
def test_mode_follows_the_cluster_size(client, cells: int, mode: str) -> None:
    """dashboard.md G8: full <= 50 cells, dense 51-500, zones above."""
    _cells(cells)
    page = client.get("/grid/").content.decode()
    assert f'data-mode="{mode}"' in page
    assert ("zone-tile" in page) == (mode == "zones")


def test_mode_override_and_zone_drill_down(client) -> None:
    """dashboard.md G8, U1: ?mode= wins; a tile links to its zone in dense mode."""
    _cells(600)
    page = client.get("/grid/").content.decode()
    assert 'href="?mode=dense&amp;zone=z2"' in page
    dense = client.get("/grid/?mode=dense&zone=z2").content.decode()
    assert 'data-mode="dense"' in dense and 'id="zone-z2"' in dense and 'id="zone-z1"' not in dense
    assert "mode=dense&amp;zone=z2" in dense  # the socket joins the same view


def test_seed_example_grid(client) -> None:
    """dashboard.md G1, G2, G3, G6 with seed-example after its auction."""
    from auction.services.scenarios import scenario_load
    from auction.services.sim import auctioneer_run

    scenario_load("seed-example")
    auctioneer_run()
    page = client.get("/grid/").content.decode()
    assert page.count('class="zone"') == 2 and page.count('data-cell-id="') == 4
    assert "largest free:" in page and "reserved" in page
    assert "all work placed" in page
    assert 'data-instance="lrp-a.0"' in page and 'data-task="task-c"' in page


def test_filters_are_kept_from_the_url(client) -> None:
    """dashboard.md G7, U1: the filter form starts from the URL."""
    _cells(4)
    page = client.get("/grid/?app=lrp-a&state=RUNNING&q=web").content.decode()
    assert 'name="app" value="lrp-a"' in page and "<option selected>RUNNING</option>" in page
    assert 'name="q" type="search" value="web"' in page


def test_tray_groups_count_oldest_and_20_chips(client) -> None:
    """dashboard.md G6: a group shows its count, oldest age, 20 chips, then +n."""
    from auction.services.lrps import desired_lrp_desire
    _cells(1, zones=1)
    desired_lrp_desire({"process_guid": "big", "domain": "cf-apps", "instances": 30, "memory_mb": 100_000})
    page = client.get("/grid/").content.decode()
    assert 'data-count="30"' in page and "+10" in page and "data-count-up-from" in page
    assert page.count('class="chip lrp') == 20


def test_tray_groups_by_reason_with_first_queue_time_back_off_and_tasks() -> None:
    """dashboard.md G6: the tray's groups as the database counts them. A failed instance
    waits from its first queue time (auction.md 1.8: kept across carry-over), not from its
    row's since; a crashed one from its crash, under "back-off"; a pending task joins the
    group of its rejection reason after the instances' chips; an instance whose desired
    LRP is gone is not unplaced work."""
    from auction.models import ActualLRP, DesiredLRP, PendingWork, Task
    from auction.selectors.grid import AWAITING, BACK_OFF, tray_groups
    from auction.services.clock import clock_reset

    clock_reset(0.0, paused=True)  # the back-off below ends after now
    _cells(1, zones=1)
    DesiredLRP.objects.create(process_guid="web", domain="cf-apps", instances=4, memory_mb=512)
    full = "insufficient resources: memory"
    ActualLRP.objects.bulk_create([
        ActualLRP(desired_id="web", index=0, domain="cf-apps", state="UNCLAIMED", placement_error=full, since=50.0),
        ActualLRP(desired_id="web", index=1, domain="cf-apps", state="UNCLAIMED", placement_error=full, since=40.0),
        ActualLRP(desired_id="web", index=2, domain="cf-apps", state="UNCLAIMED", since=30.0),
        ActualLRP(desired_id="web", index=3, domain="cf-apps", state="CRASHED", crash_count=4, since=35.0),
        ActualLRP(desired_id="gone", index=0, domain="cf-apps", state="UNCLAIMED", placement_error=full, since=1.0),
    ])
    PendingWork.objects.bulk_create([
        PendingWork(kind="lrp", ident="web.0", process_guid="web", index=0, queued_at=12.0, carried=True),
        PendingWork(kind="lrp", ident="web.0", process_guid="web", index=0, queued_at=14.0),
        PendingWork(kind="lrp", ident="web.2", process_guid="web", index=2, queued_at=31.0),
        PendingWork(kind="task", ident="job", task_guid="job", queued_at=20.0),
    ])
    Task.objects.create(task_guid="job", domain="cf-tasks", memory_mb=256, created_at=8.0,
                        rejection_reason=full)
    Task.objects.create(task_guid="new", domain="cf-tasks", memory_mb=256, created_at=33.0)
    groups = {g.reason: g for g in tray_groups(chips=2)}
    assert list(groups) == [BACK_OFF, full, AWAITING]
    assert (groups[full].count, groups[full].oldest_since) == (3, 12.0)
    assert [b.ident for b in groups[full].items] == ["web.1", "web.0"]
    assert [b.ident for b in tray_groups(chips=3)[1].items] == ["web.1", "web.0", "job"]
    assert (groups[AWAITING].count, groups[AWAITING].oldest_since) == (2, 31.0)
    assert [b.ident for b in groups[AWAITING].items] == ["web.2", "new"]
    assert (groups[BACK_OFF].count, groups[BACK_OFF].oldest_since) == (1, 35.0)
    assert groups[BACK_OFF].items[0].restart_due is not None  # its back-off ends later


def test_tray_chips_skip_instances_whose_app_is_gone_past_a_page_of_them() -> None:
    """dashboard.md G6: 25 orphans come first by since; the group still shows 20 chips of
    its live app's instances, and counts only those."""
    from auction.models import ActualLRP, DesiredLRP
    from auction.selectors.grid import tray_groups
    from auction.services.clock import clock_reset

    clock_reset(0.0, paused=True)
    _cells(1, zones=1)
    DesiredLRP.objects.create(process_guid="web", domain="cf-apps", instances=30, memory_mb=512)
    ActualLRP.objects.bulk_create(
        [ActualLRP(desired_id="gone", index=i, domain="cf-apps", state="UNCLAIMED", since=float(i))
         for i in range(25)]
        + [ActualLRP(desired_id="web", index=i, domain="cf-apps", state="UNCLAIMED", since=100.0 + i)
           for i in range(30)])
    (group,) = tray_groups()
    assert group.count == 30 and group.more == 10
    assert [b.ident for b in group.items] == [f"web.{i}" for i in range(20)]
    assert all(b.memory_mb == 512 for b in group.items)
