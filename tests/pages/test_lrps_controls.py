"""Operator controls (dashboard.md C1, C2, C4, D3, L8): POST forms over the services,
gated by the `control` permission, audited, in the feed."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from auction.models import ActualLRP, AuditEntry, BBSEvent, Cell, DesiredLRP, Domain, SimClock
from auction.selectors.clock import clock_view
from auction.selectors.timeline import next_scheduled_event
from auction.services.clock import clock_reset
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def seeded() -> None:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)


@pytest.fixture
def operator(client, admin_user):  # type: ignore[no-untyped-def]
    client.force_login(admin_user)
    return client


def post(client, url: str, **data):  # type: ignore[no-untyped-def]
    return client.post(url, data, **HX)


def test_anonymous_and_plain_users_are_refused(client, django_user_model, seeded) -> None:  # type: ignore[no-untyped-def]
    """L8: controls need `control` (superusers have it; staff only when granted); GET is not allowed."""
    response = post(client, "/controls/chaos/", action="cell_fail", cell="cell-1")
    assert response.status_code == 403 and "sign in" in response.content.decode()
    plain = django_user_model.objects.create_user("viewer", password="x")
    client.force_login(plain)
    response = post(client, "/controls/chaos/", action="cell_fail", cell="cell-1")
    assert response.status_code == 403 and "the control permission" in response.content.decode()
    assert Cell.objects.get(cell_id="cell-1").state == "healthy"
    plain.user_permissions.add(Permission.objects.get(codename="control", content_type__model="apitoken"))
    client.force_login(django_user_model.objects.get(pk=plain.pk))
    assert post(client, "/controls/chaos/", action="cell_fail", cell="cell-1").status_code == 200
    assert client.get("/controls/chaos/").status_code == 405


def test_csrf_is_required(admin_user, seeded) -> None:  # type: ignore[no-untyped-def]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(admin_user)
    assert strict.post("/controls/clock/", {"action": "resume"}, **HX).status_code == 403
    assert SimClock.objects.get(pk=1).paused  # the fixture paused it; the refused pause changed nothing
    assert not AuditEntry.objects.filter(source="dashboard").exists()


def test_clock_controls_pause_resume_speed_and_audit(operator, seeded) -> None:  # type: ignore[no-untyped-def]
    """C1: pause/resume, speed 0.25-16x or max; each writes an audit entry and a feed event."""
    assert post(operator, "/controls/clock/", action="resume").status_code == 200
    assert not clock_view().paused
    response = post(operator, "/controls/clock/", action="speed", speed="16")
    assert response.status_code == 200 and "speed 16×" in response.content.decode()
    assert clock_view().speed == 16
    post(operator, "/controls/clock/", action="speed", speed="max")
    assert clock_view().speed == 100
    # One rule at every door (the API's too): 0.25x to 100x.
    assert post(operator, "/controls/clock/", action="speed", speed="3").status_code == 200
    response = post(operator, "/controls/clock/", action="speed", speed="1000")
    assert response.status_code == 400 and "Invalid field: speed" in response.content.decode()
    assert post(operator, "/controls/clock/", action="speed", speed="fast").status_code == 400
    post(operator, "/controls/clock/", action="pause")
    assert clock_view().paused
    actions = list(AuditEntry.objects.filter(source="dashboard").order_by("id").values_list("action", "source", "user__username"))
    assert actions == [("clock_resume", "dashboard", "admin"), ("clock_speed", "dashboard", "admin"),
                       ("clock_speed", "dashboard", "admin"), ("clock_speed", "dashboard", "admin"),
                       ("clock_pause", "dashboard", "admin")]
    assert BBSEvent.objects.filter(type="clock_speed").count() == 3
    assert post(operator, "/controls/clock/", action="rewind").status_code == 400


def test_step_goes_to_the_next_scheduled_event(operator, seeded) -> None:  # type: ignore[no-untyped-def]
    """C1: step to the next scheduled event: here a claimed instance becoming RUNNING."""
    auctioneer_run()
    upcoming = next_scheduled_event(0.0)
    ready = min(ActualLRP.objects.values_list("ready_at", flat=True))
    assert upcoming.what == "instance start" and upcoming.at == ready
    response = post(operator, "/controls/clock/", action="step")
    assert "instance start" in response.content.decode()
    assert clock_view().paused and abs(clock_view().now - ready) < 1e-3
    assert ActualLRP.objects.filter(state="RUNNING").exists()
    assert AuditEntry.objects.filter(action="clock_step").exists()


def test_step_to_the_convergence_pass(operator, seeded) -> None:  # type: ignore[no-untyped-def]
    upcoming = next_scheduled_event(0.0)
    assert (upcoming.at, upcoming.what) == (30.0, "convergence pass")
    post(operator, "/controls/clock/", action="step")
    assert SimClock.objects.get(pk=1).next_convergence_at == 60.0


def test_chaos_cell_zone_and_crash(operator, seeded) -> None:  # type: ignore[no-untyped-def]
    """C2: fail/restore/drain a cell, fail/restore an AZ, crash an instance; audited by the services."""
    assert post(operator, "/controls/chaos/", action="cell_fail", cell="cell-1").status_code == 200
    assert Cell.objects.get(cell_id="cell-1").state == "failed"
    post(operator, "/controls/chaos/", action="cell_restore", cell="cell-1")
    post(operator, "/controls/chaos/", action="cell_drain", cell="cell-2")
    assert Cell.objects.get(cell_id="cell-2").state == "draining"
    response = post(operator, "/controls/chaos/", action="cell_drain", cell="cell-2")
    assert response.status_code == 400 and "only a healthy cell can drain" in response.content.decode()
    assert post(operator, "/controls/chaos/", action="cell_fail", cell="nope").status_code == 404
    assert post(operator, "/controls/chaos/", action="cell_melt", cell="cell-1").status_code == 400
    assert post(operator, "/controls/chaos/", action="desire_lrps", apps="[]").status_code == 400
    response = post(operator, "/controls/chaos/", action="zone_fail", zone="z2")
    assert "zone z2 failed (2 cells)" in response.content.decode()
    assert set(Cell.objects.filter(zone__name="z2").values_list("state", flat=True)) == {"failed"}
    post(operator, "/controls/chaos/", action="zone_restore", zone="z2")
    auctioneer_run()
    placed = ActualLRP.objects.filter(state="CLAIMED").first()
    response = post(operator, "/controls/chaos/", action="crash", instance=f"{placed.desired_id}.{placed.index}")
    assert response.status_code == 200 and "crashed" in response.content.decode()
    assert post(operator, "/controls/chaos/", action="crash", instance="lrp-a").status_code == 400
    assert post(operator, "/controls/chaos/", action="crash", instance="ghost.0").status_code == 404
    sources = set(AuditEntry.objects.filter(user__isnull=False).values_list("source", flat=True))
    assert sources == {"dashboard"}
    assert AuditEntry.objects.filter(action="actual_lrp_crash", user__username="admin").count() == 1
    # A zone's failure is one event naming its cells, not one per cell (dashboard.md M2).
    zone = BBSEvent.objects.get(type="zone_fail")
    assert zone.key == "z2" and len(zone.data["cells"]) == 2
    assert BBSEvent.objects.filter(type="zone_restore").count() == 1
    assert BBSEvent.objects.filter(type="cell_fail").count() == 1


def test_scale_audits_and_rejects_negative(operator, seeded) -> None:  # type: ignore[no-untyped-def]
    """C2 / T11: instances 3 → 5 makes two new instances and an audit entry; -1 is rejected."""
    response = post(operator, "/controls/chaos/", action="scale", process_guid="lrp-a", instances="5")
    assert response.status_code == 200
    assert ActualLRP.objects.filter(desired_id="lrp-a").count() == 5
    entry = AuditEntry.objects.get(action="desired_lrp_update")
    assert (entry.target, entry.diff["instances"], entry.user.username, entry.source) == (
        "lrp-a", [3, 5], "admin", "dashboard")
    for bad in ("-1", "many", ""):
        response = post(operator, "/controls/chaos/", action="scale", process_guid="lrp-a", instances=bad)
        assert response.status_code == 400 and "Invalid field: instances" in response.content.decode()
    assert DesiredLRP.objects.get(process_guid="lrp-a").instances == 5
    assert post(operator, "/controls/chaos/", action="scale", process_guid="ghost", instances="1").status_code == 404


def test_scenario_picker_loads_and_rejects_unknown(operator) -> None:  # type: ignore[no-untyped-def]
    """C4: the picker lists auction/scenarios/*.json; load replaces the cluster."""
    html = operator.get("/lrps/").content.decode()
    assert '<option>seed-example</option>' in html
    assert post(operator, "/controls/scenario/", name="seed-example").status_code == 200
    assert Cell.objects.count() == 4
    response = post(operator, "/controls/scenario/", name="nope")
    assert response.status_code == 400 and "unknown scenario" in response.content.decode()
    assert AuditEntry.objects.filter(action="scenario_load", target="seed-example").count() == 1


def test_domain_bump_never_and_expire_now(operator, seeded) -> None:  # type: ignore[no-untyped-def]
    """D3: bump (120 s / never) and expire-now."""
    post(operator, "/controls/domain/", action="expire", domain="cf-apps")
    assert not Domain.objects.get(name="cf-apps").is_fresh(0.0)
    post(operator, "/controls/domain/", action="bump", domain="cf-apps", ttl="120")
    assert Domain.objects.get(name="cf-apps").expires_at == 120.0
    post(operator, "/controls/domain/", action="bump", domain="cf-apps", ttl="never")
    assert Domain.objects.get(name="cf-apps").expires_at is None
    assert post(operator, "/controls/domain/", action="expire", domain="ghost").status_code == 404
    assert post(operator, "/controls/domain/", action="bump", domain="cf-apps", ttl="-5").status_code == 400
    assert list(AuditEntry.objects.filter(source="dashboard").order_by("id").values_list("action", flat=True)) == [
        "domain_expire", "domain_upsert", "domain_upsert"]


def test_without_javascript_a_control_redirects_back(operator, seeded) -> None:  # type: ignore[no-untyped-def]
    response = operator.post("/controls/clock/", {"action": "resume", "next": "/grid/"})
    assert response.status_code == 302 and response["Location"] == "/grid/"
    response = operator.post("/controls/clock/", {"action": "pause", "next": "https://evil.example/"})
    assert response["Location"] == "/lrps/"


def test_scenario_load_starts_a_new_convergence_epoch(operator) -> None:  # type: ignore[no-untyped-def]
    """C4 + bbs.md 4.1: after a load the first pass is 30 s after the new start, whatever the old
    cluster's next pass was, and the old cluster's queued work is gone."""
    from auction.models import PendingWork

    scenario_load("seed-example")
    SimClock.objects.filter(pk=1).update(next_convergence_at=900.0, advanced_to=870.0)
    post(operator, "/controls/scenario/", name="seed-example")
    clock = SimClock.objects.get(pk=1)
    assert (clock.next_convergence_at, clock.advanced_to) == (30.0, 0.0)
    # Only the new cluster's 5 instances and 2 tasks wait for an auction.
    assert PendingWork.objects.count() == 7


def test_live_dropdowns_carry_crashable_instances_compactly(seeded) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md L3 (send what changed): the controls' choices go as two elements; the
    instances that can be crashed as runs (``lrp-a:0-2``), a few bytes an app."""
    from auction.live.coalescer import SEP
    from auction.live.fragments import control_choices_fragment
    from auction.selectors.controls import control_choices

    auctioneer_run()
    choices, crashable = control_choices_fragment().split(SEP)
    assert choices.startswith('<div id="control-choices"') and 'data-kind="cells"' in choices
    compact = control_choices().crashable_compact
    assert crashable == f'<div id="control-crashable" hidden hx-swap-oob="true" data-instances="{compact}"></div>'
    expanded = {f"{guid}.{i}" for app in compact.split() for guid, runs in [app.rsplit(":", 1)]
                for run in runs.split(",")
                for i in range(int(run.split("-")[0]), int(run.split("-")[-1]) + 1)}
    assert expanded == set(control_choices().crashable) and expanded


def test_scaling_10x_or_past_the_cluster_asks_first_and_changes_nothing(operator, seeded) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md C7: "scale anyway?" before 10x or more, or more memory than the healthy
    cells hold; nothing changes until confirmed; an ordinary scale just happens."""
    lrp = DesiredLRP.objects.get(process_guid="lrp-a")
    before = lrp.instances
    cluster_mb = sum(Cell.objects.exclude(state="failed").values_list("memory_mb", flat=True))
    answer = post(operator, "/controls/chaos/", action="scale", process_guid="lrp-a", instances="100000")
    html = answer.content.decode()
    assert answer.status_code == 200 and "scale anyway?" in html
    assert f"from {before} to 100000 instances" in html
    assert f"100000 x {lrp.memory_mb} MB needs" in html and f"the cluster has {cluster_mb / 1024:,.1f} GB" in html
    assert 'name="confirm" value="1"' in html and 'name="instances" value="100000"' in html
    assert DesiredLRP.objects.get(process_guid="lrp-a").instances == before
    assert not AuditEntry.objects.filter(action="desired_lrp_update").exists()
    # The fitting, small change does not ask.
    assert "scaled to" in post(operator, "/controls/chaos/", action="scale", process_guid="lrp-a",
                               instances=str(before + 1)).content.decode()
    # Confirmed, it happens: 9x is not asked about, 10x is.
    fits = max(1, cluster_mb // lrp.memory_mb // 2)
    asked = post(operator, "/controls/chaos/", action="scale", process_guid="lrp-b", instances=str(fits))
    assert "scale anyway?" in asked.content.decode()
    done = post(operator, "/controls/chaos/", action="scale", process_guid="lrp-b", instances=str(fits),
                confirm="1")
    assert "scaled to" in done.content.decode()
    assert DesiredLRP.objects.get(process_guid="lrp-b").instances == fits


def test_scale_doubts_rule() -> None:
    """dashboard.md C7: the rule in the core."""
    from auction.sim.lrps import scale_doubts

    assert scale_doubts(3, 29, 256, 32 * 1024) == ""
    assert scale_doubts(3, 30, 256, 32 * 1024) == "from 3 to 30 instances is 10x"
    assert scale_doubts(0, 9, 256, 32 * 1024) == ""
    assert scale_doubts(10, 5, 256, 1024) == "5 x 256 MB needs 1.2 GB; the cluster has 1.0 GB"
    assert scale_doubts(3, 100000, 2048, 32 * 1024) == (
        "from 3 to 100000 instances is 33333x; 100000 x 2048 MB needs 200,000.0 GB; the cluster has 32.0 GB")
