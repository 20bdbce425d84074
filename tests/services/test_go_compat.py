"""Go-compatibility mode everywhere it can be set (auction.md 2.1) and an unparsable rootfs
at every door (bbs.md 1.2 rule 3).

``go_compat`` defaults to off; the live simulator's auction settings (admin, controls,
CLI), a scenario's ``auction`` block and the comparison page turn it on; the replay and
the side panel say which order placed the work.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from auction import scenarios
from auction.models import AuctionRun, AuctionSettings, AuditEntry, DesiredLRP
from auction.selectors.auction_settings import auction_settings, auction_settings_config
from auction.services.auction_settings import auction_settings_update
from auction.services.errors import InvalidRequest
from auction.services.lrps import desired_lrp_desire
from auction.services.scenarios import scenario_load
from auction.services.sim import auction_once
from auction.services.tasks import task_desire
from auction.sim.compare import compare, pane_spec, parse_strategies
from auction.sim.memory import SimApp, WorldError
from auction.sim.scenario import world_from_scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator_client(client: Client) -> Client:
    get_user_model().objects.create_superuser("admin", "a@example.invalid", "pw")
    client.login(username="admin", password="pw")
    return client


def _all_index_0_batch() -> None:
    """Two index-0 LRPs and a task, nothing of index > 0: Diego runs the task first."""
    scenario_load("seed-example")
    DesiredLRP.objects.all().delete()
    from auction.models import PendingWork, Task
    PendingWork.objects.all().delete()
    Task.objects.all().delete()
    desired_lrp_desire({"process_guid": "a", "domain": "cf-apps", "instances": 1, "memory_mb": 64})
    desired_lrp_desire({"process_guid": "b", "domain": "cf-apps", "instances": 1, "memory_mb": 128})
    task_desire({"task_guid": "t", "domain": "cf-tasks", "memory_mb": 32})


def test_go_compat_is_off_by_default_auction_md_2_1() -> None:
    """auction.md 2.1: nothing changes unless asked; the migration made the one row."""
    assert auction_settings().go_compat is False
    assert auction_settings_config().go_compat is False
    scenario_load("seed-example")
    assert auction_settings_config().go_compat is False


def test_live_auctioneer_runs_and_records_the_go_order_auction_md_2_1() -> None:
    """auction.md 2.1 (1): the DB auctioneer in Go order puts the task first in an
    all-index-0 batch; the record says which order placed the work."""
    _all_index_0_batch()
    auction_settings_update({"go_compat": True}, source="cli")
    auction_once()
    run = AuctionRun.objects.get()
    assert run.order == ["t", "b.0", "a.0"] and run.go_compat and run.mode == "diego (Go order)"
    _all_index_0_batch()
    auction_settings_update({"go_compat": False}, source="cli")
    auction_once()
    run = AuctionRun.objects.order_by("-pk").first()
    assert run.order == ["b.0", "a.0", "t"] and not run.go_compat


def test_settings_update_is_audited_and_refuses_bad_values_auction_md_2_1() -> None:
    auction_settings_update({"go_compat": True}, source="admin")
    entry = AuditEntry.objects.get(action="auction_settings")
    assert entry.diff == {"go_compat": [False, True]} and entry.source == "admin"
    for bad in ({"go_compat": "yes"}, {"placement_strategy": "best"},
                {"starting_container_weight": float("inf")}, {"nope": 1}):
        with pytest.raises(InvalidRequest):
            auction_settings_update(bad, source="cli")
    assert AuctionSettings.objects.get(pk=1).go_compat is True


def test_admin_controls_and_cli_set_go_compat_auction_md_2_1(operator_client: Client,
                                                              client: Client) -> None:
    """The admin's form, the dashboard's control and ``manage.py diego auction``."""
    page = operator_client.get("/admin/auction/auctionsettings/1/change/")
    assert page.status_code == 200 and "Go-compatibility mode" in page.content.decode()
    form = {"placement_strategy": "diego", "starting_container_weight": 0.25,
            "bin_pack_first_fit_weight": 0, "starting_container_count_maximum": 0,
            "locality_offset": 1000, "go_compat": "on"}
    assert operator_client.post("/admin/auction/auctionsettings/1/change/", form).status_code == 302
    assert auction_settings().go_compat is True
    bad = operator_client.post("/admin/auction/auctionsettings/1/change/",
                               {**form, "starting_container_weight": "1e300"})
    assert bad.status_code == 200 and "Invalid field: starting_container_weight" in bad.content.decode()
    answer = operator_client.post("/controls/auction/", {"order": "spec"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and "documented order" in answer.content.decode()
    assert auction_settings().go_compat is False
    assert operator_client.post("/controls/auction/", {"order": "?"}).status_code == 400
    client.logout()
    assert Client().post("/controls/auction/", {"order": "go"}).status_code == 403
    assert auction_settings().go_compat is False
    from io import StringIO
    out = StringIO()
    call_command("diego", "auction", "--go-compat", "on", stdout=out)
    assert "Go order (go_compat on)" in out.getvalue() and auction_settings().go_compat


def test_scenario_auction_block_sets_go_compat_in_both_stores_auction_md_2_1() -> None:
    """A scenario's ``auction`` block: the memory world and the live settings alike."""
    base = scenarios.load("seed-example")
    data = {**base.data, "auction": {"go_compat": True}}
    scenarios.check(data, where="test")
    assert world_from_scenario(replace(base, data=data)).config.go_compat is True
    with pytest.raises(scenarios.ScenarioError, match="auction.go_compat: wrong type"):
        scenarios.check({**base.data, "auction": {"go_compat": "yes"}}, where="test")
    from auction.services.auction_settings import auction_settings_from_scenario
    auction_settings_from_scenario({"go_compat": True})
    assert auction_settings_config().go_compat is True
    scenario_load("seed-example")  # its block says nothing: back to the default
    assert auction_settings_config().go_compat is False


def test_compare_puts_diego_and_diego_go_side_by_side_auction_md_2_1(client: Client) -> None:
    assert parse_strategies(["diego,diego-go"]) == ["diego", "diego-go"]
    result = compare("seed-example", [pane_spec("diego"), pane_spec("diego-go")], until=5)
    assert [p.spec.label for p in result.panes] == ["diego", "diego (Go order)"]
    assert [p.world.config.go_compat for p in result.panes] == [False, True]
    page = client.get("/compare/?strategies=diego,diego-go&scenario=seed-example&t=5")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-strategy="diego-go"' in html and "diego (Go order)" in html


def test_replay_and_panel_say_which_order_placed_the_work_auction_md_2_1(client: Client) -> None:
    _all_index_0_batch()
    auction_settings_update({"go_compat": True}, source="cli")
    auction_once()
    run = AuctionRun.objects.get()
    replay = client.get(f"/auctions/{run.pk}/").content.decode()
    assert 'data-mode="go"' in replay and "diego (Go order)" in replay
    panel = client.get("/panel/instance/a/0/").content.decode()
    assert 'data-mode="go"' in panel and "Go binary" in panel


@pytest.mark.parametrize("rootfs", ["docker://registry:abc/img", "docker://ho st/x"])
def test_unparsable_rootfs_refused_by_cli_and_world_bbs_md_1_2(rootfs: str) -> None:
    """bbs.md 1.2 rule 3 at the CLI and in scenario files (both stores validate alike)."""
    with pytest.raises(CommandError, match="Invalid field: rootfs"):
        call_command("diego", "desire", "web", "--rootfs", rootfs)
    assert not DesiredLRP.objects.exists()
    world = world_from_scenario("seed-example")
    with pytest.raises(WorldError, match="Invalid field: rootfs"):
        world.desire_lrp(SimApp("bad", rootfs=rootfs))
    base = scenarios.load("seed-example")
    data = {**base.data, "desired_lrps": [{"process_guid": "bad", "rootfs": rootfs}]}
    with pytest.raises(scenarios.ScenarioError, match="Invalid field: rootfs"):
        world_from_scenario(replace(base, data=data))
