"""/lrps/ desired vs actual (dashboard.md D1-D5) through Django's test client and its selector."""

from __future__ import annotations

import re

import pytest

from auction.models import ActualLRP, ConvergenceRun, Domain, Task
from auction.selectors.lrps import lrp_rows, lrps_page, restart_of
from auction.services.clock import clock_pause, clock_reset
from auction.services.domains import domain_upsert
from auction.services.lrps import desired_lrp_desire
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run, convergence_run

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def frozen_clock() -> None:
    """Sim time 0, paused: every expiry and countdown below is exact."""
    clock_reset(0.0, paused=True)


def seed() -> None:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)


def rows_by_guid(now: float = 0.0) -> dict:
    rows, _, _ = lrp_rows(now)
    return {r.process_guid: r for r in rows}


def test_restart_rules_follow_the_crash_policy() -> None:
    """dashboard.md D2; bbs.md 3: "immediate", "in 42 s, next pass", "never (200 crashes)"."""
    assert restart_of("RUNNING", 1, since=0, now=10).text == "immediate"
    assert restart_of("RUNNING", 0, since=0, now=10).text == ""
    # The next crash of a twice-crashed instance is its 3rd: it would wait 30 s.
    assert restart_of("RUNNING", 2, since=0, now=10).text == "after 30 s back-off"
    # More than 300 s RUNNING resets the count: the next crash restarts at once.
    assert restart_of("RUNNING", 7, since=0, now=301).text == "immediate"
    assert restart_of("CLAIMED", 7, since=0, now=301).text == "after 960 s back-off"
    crashed = restart_of("CRASHED", 3, since=100, now=100)
    assert crashed.text == "in 30 s, next pass" and crashed.due == 130
    assert restart_of("CRASHED", 3, since=100, now=130).text == "next pass"  # since + B <= now
    assert restart_of("CRASHED", 4, since=100, now=100).text == "in 60 s, next pass"
    assert restart_of("CRASHED", 9, since=0, now=0).text == "in 960 s, next pass"
    assert restart_of("CRASHED", 200, since=0, now=1e9).text == "never (200 crashes)"
    assert restart_of("CRASHED", 2, since=0, now=0).text == "next pass"


def test_restart_countdown_reads_42_s() -> None:
    """dashboard.md D2: the example string, exactly."""
    assert restart_of("CRASHED", 4, since=100, now=118).text == "in 42 s, next pass"


def test_rows_count_states_presences_missing_extra_and_zones() -> None:
    """dashboard.md D1: ORDINARY by state, EVACUATING/SUSPECT apart, missing/extra as step 3."""
    seed()
    auctioneer_run()
    rows = rows_by_guid()
    a = rows["lrp-a"]
    assert a.instances == 3 and a.ordinary["CLAIMED"] == 3 and a.missing == [] and a.extra == []
    assert sum(a.zones.values()) == 3 and set(a.zones) <= {"z1", "z2"}
    assert a.domain.name == "cf-apps" and a.domain.fresh
    # An extra at index 5 and an EVACUATING/SUSPECT copy of index 0.
    base = ActualLRP.objects.get(desired_id="lrp-a", index=0)
    ActualLRP.objects.create(desired_id="lrp-a", index=5, domain="cf-apps", state="RUNNING", cell_id=base.cell_id)
    ActualLRP.objects.create(desired_id="lrp-a", index=0, presence="SUSPECT", domain="cf-apps",
                             state="RUNNING", cell_id=base.cell_id)
    ActualLRP.objects.create(desired_id="lrp-a", index=1, presence="EVACUATING", domain="cf-apps",
                             state="RUNNING", cell_id=base.cell_id)
    ActualLRP.objects.filter(desired_id="lrp-a", index=2, presence="ORDINARY").delete()
    a = rows_by_guid()["lrp-a"]
    # Count 3 = instances: the index-misalignment blind spot (bbs.md 10) hides both, and
    # the row says so instead of "converged" (dashboard.md D1).
    assert (a.missing, a.extra, a.suspect, a.evacuating) == ([], [], 1, 1)
    assert a.misaligned == [0, 1, 5]
    assert a.status == ("misaligned", "≠", "indices 0, 1, 5 for 3 instances: Diego's convergence "
                        "does not see misaligned indices (the count matches); it stays until the "
                        "count changes")
    ActualLRP.objects.filter(desired_id="lrp-a", index=1, presence="ORDINARY").delete()
    a = rows_by_guid()["lrp-a"]
    assert (a.missing, a.extra) == ([1, 2], [5])
    assert a.held == ""  # cf-apps never expires
    assert a.status[0] == "missing"
    lines = [(line.index, line.presence) for line in a.lines]
    assert lines == [(0, "ORDINARY"), (0, "SUSPECT"), (1, "EVACUATING"), (5, "ORDINARY")]


def test_stale_domain_row_reads_held() -> None:
    """dashboard.md D3: a stale row shows "2 extra, held: cf-apps stale"."""
    domain_upsert("cf-apps", 10)
    desired_lrp_desire({"process_guid": "web", "domain": "cf-apps", "instances": 1})
    for i in (1, 2):
        ActualLRP.objects.create(desired_id="web", index=i, domain="cf-apps", state="RUNNING", cell_id="c1")
    assert rows_by_guid(now=5)["web"].held == ""
    row = rows_by_guid(now=10)["web"]  # fresh needs expiry > now
    assert row.held == "2 extra, held: cf-apps stale"
    assert row.status == ("held", "‖", "2 extra, held: cf-apps stale")


def test_domain_without_an_upsert_is_stale_and_listed() -> None:
    """bbs.md 5: no record, no promise: the LRP's domain shows stale."""
    desired_lrp_desire({"process_guid": "web", "domain": "other", "instances": 1})
    page = lrps_page(0.0)
    other = next(d for d in page.domains if d.name == "other")
    assert not other.fresh and not other.recorded and other.expiry_text == "no upsert: stale"


def test_crashed_instance_row_and_lrp_next_restart() -> None:
    """dashboard.md D1/D2: the soonest restart of an LRP's crashed instances."""
    desired_lrp_desire({"process_guid": "web", "domain": "d", "instances": 2})
    ActualLRP.objects.filter(desired_id="web", index=0).update(state="CRASHED", crash_count=4, since=10)
    ActualLRP.objects.filter(desired_id="web", index=1).update(state="CRASHED", crash_count=3, since=10)
    row = rows_by_guid(now=20)["web"]
    assert row.restart.text == "in 20 s, next pass"  # B(3) = 30 beats B(4) = 60
    assert row.crashes == 7 and row.ordinary["CRASHED"] == 2
    assert row.status[0] == "crashing"


def test_convergence_panel_counts_expand_to_keys() -> None:
    """dashboard.md D4: countdown, last duration vs 10/20 s, action lists as counts → keys."""
    seed()
    convergence_run(31.0)
    conv = lrps_page(0.0).convergence
    assert conv.last_at == 31.0 and conv.level == "ok"
    assert conv.lrp_actions["start"] == ["lrp-a.0", "lrp-a.1", "lrp-a.2", "lrp-b.0", "lrp-b.1"]
    ConvergenceRun.objects.update(duration_ns=12_000_000_000)
    assert lrps_page(0.0).convergence.level == "warn"
    ConvergenceRun.objects.update(duration_ns=20_000_000_000)
    assert lrps_page(0.0).convergence.level == "crit"


def test_tasks_show_mode_rejections_and_expiry() -> None:
    """dashboard.md D5; bbs.md 7: pending tasks fail 1800 s after creation."""
    seed()
    Task.objects.filter(task_guid="task-c").update(rejection_count=2, placement_mode="otto", created_at=0.0)
    tasks = {t.task_guid: t for t in lrps_page(100.0).tasks}
    c = tasks["task-c"]
    assert (c.mode, c.state, c.rejections) == ("otto", "PENDING", "2/3")
    assert c.expiry_text == "fails unstarted in 1700 s"


def test_page_renders_every_section_with_hooks(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md D1-D5, D3 banner, L2: the page joins the lrps view's socket."""
    seed()
    clock_pause()
    html = client.get("/lrps/").content.decode()
    assert 'ws-connect="/ws/live/?view=lrps&amp;epoch=' in html
    assert "Extras are retired only while their domain is fresh; missing instances are created regardless." in html
    assert re.search(r'<tbody id="lrp-lrp-a" data-lrp="lrp-a"', html)
    assert 'data-instance="lrp-b.1" data-presence="ORDINARY" data-state="UNCLAIMED"' in html
    assert 'data-domain="cf-apps" data-fresh="true"' in html
    assert 'data-task="task-d" data-state="PENDING"' in html
    assert "Next pass" in html and 'id="convergence"' in html
    # Anonymous: operating buttons hidden (fragments are shared), a way to sign in instead.
    assert 'data-can-control="false"' in html and 'class="needs-control"' in html
    assert "Sign in to operate" in html and "Fail cell" not in html


def test_page_shows_operator_buttons_to_staff(client, admin_user) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md D3: bump (120 s / never) and expire-now, for a user with `control`."""
    seed()
    client.force_login(admin_user)
    html = client.get("/lrps/").content.decode()
    assert 'data-can-control="true"' in html
    assert "bump 120 s" in html and "bump never" in html and "expire now" in html
    assert "csrfmiddlewaretoken" in html


def test_empty_cluster_page(client) -> None:  # type: ignore[no-untyped-def]
    assert Domain.objects.count() == 0
    html = client.get("/lrps/").content.decode()
    assert "No DesiredLRPs." in html and "No tasks." in html and "No pass yet." in html


def test_next_pass_is_right_in_the_frame_of_the_pass_itself() -> None:
    """D4, C1: the pass's own frame is rendered before the advance moves the clock's
    timer; the countdown still names the following pass."""
    from auction.models import SimClock
    from auction.selectors.lrps import next_pass_at

    seed()
    assert next_pass_at() == 30.0
    convergence_run(30.0)  # the clock row still says 30 until sim_advance moves it
    assert SimClock.objects.get(pk=1).next_convergence_at == 30.0
    assert next_pass_at() == 60.0 and lrps_page(31.0).convergence.remaining_s == 29.0
    SimClock.objects.filter(pk=1).update(next_convergence_at=60.0)
    assert next_pass_at() == 60.0
    # A new scenario's timer is not confused by the old cluster's passes.
    convergence_run(900.0)
    seed()
    assert next_pass_at() == 30.0


def test_lrps_pages_200_desired_lrps_at_a_time(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md D1: /lrps/ shows the DesiredLRPs 200 a page (a page, and each live frame
    of it, stays small at 10,000 LRPs); the live socket joins the page's own group."""
    from auction.models import DesiredLRP

    DesiredLRP.objects.bulk_create(DesiredLRP(process_guid=f"app-{i:04d}", domain="cf-apps", instances=0)
                                   for i in range(250))
    first = client.get("/lrps/").content.decode()
    assert first.count('<tbody id="lrp-app-') == 200 and 'id="lrp-app-0199"' in first
    assert 'rel="next" href="?page=2"' in first and "page 1 of 2" in first
    second = client.get("/lrps/?page=2").content.decode()
    assert second.count('<tbody id="lrp-app-') == 50 and 'id="lrp-app-0249"' in second
    assert 'ws-connect="/ws/live/?view=lrps&amp;epoch=' in second and "&amp;page=2" in second
    assert client.get("/lrps/?page=99").content.decode().count('<tbody id="lrp-app-') == 50
    assert client.get("/lrps/?page=x").status_code == 200
