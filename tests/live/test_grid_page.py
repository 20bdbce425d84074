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
