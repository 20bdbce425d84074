"""The Django admin (dashboard.md AD1-AD3): create and edit each model; bad input is a
form error with the BBS's wording, never a 500."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from auction.models import ActualLRP, Cell, DesiredLRP, Domain, SimClock, Task, Zone
from auction.services.scenarios import scenario_load

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_logged_in(client: Client) -> Client:
    get_user_model().objects.create_superuser("admin", "a@example.invalid", "pw")
    client.login(username="admin", password="pw")
    return client


@pytest.fixture
def zone() -> Zone:
    return Zone.objects.create(name="z1")


def cell_form(zone: Zone, **changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "cell_id": "cell-9", "zone": zone.pk, "index": 0, "state": "healthy", "memory_mb": 8192,
        "disk_mb": 32768, "containers": 250, "proxy_memory_mb": 0,
        "preloaded_rootfses": "cflinuxfs4", "rootfs_providers": "docker", "volume_drivers": "",
        "placement_tags": "", "optional_placement_tags": "",
    }
    data.update(changes)
    return data


def lrp_form(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "process_guid": "web", "domain": "cf-apps", "instances": 2, "rootfs": "preloaded:cflinuxfs4",
        "memory_mb": 256, "disk_mb": 1024, "max_pids": 0, "placement_tags": "", "volume_drivers": "",
        "ports": "[8080]", "start_timeout_ms": 60000, "routes": "{}", "annotation": "",
        "actual_lrps-TOTAL_FORMS": 0, "actual_lrps-INITIAL_FORMS": 0,
        "start_delay_s": 3, "crash_probability": 0, "crash_after_s": 10,
    }
    data.update(changes)
    return data


def test_every_admin_page_renders(admin_client_logged_in: Client) -> None:
    """AD1: list and add pages for every model answer 200 (ActualLRP has no add page)."""
    scenario_load("seed-example")
    for model in ("zone", "cell", "desiredlrp", "actuallrp", "task", "domain", "simclock"):
        assert admin_client_logged_in.get(f"/admin/auction/{model}/").status_code == 200, model
    for model in ("zone", "cell", "desiredlrp", "task", "domain"):
        assert admin_client_logged_in.get(f"/admin/auction/{model}/add/").status_code == 200, model
    assert admin_client_logged_in.get("/admin/auction/actuallrp/add/").status_code == 403
    lrp = DesiredLRP.objects.get(process_guid="lrp-a")
    page = admin_client_logged_in.get(f"/admin/auction/desiredlrp/{lrp.pk}/change/")
    assert page.status_code == 200
    assert page.content.decode().count("UNCLAIMED") >= 3  # the inline instances


def test_filters_and_search(admin_client_logged_in: Client) -> None:
    """AD1: operators filter by zone, state, domain and search by guid."""
    scenario_load("seed-example")
    page = admin_client_logged_in.get("/admin/auction/cell/?zone__id__exact="
                                      f"{Zone.objects.get(name='z2').pk}")
    assert "cell-3" in page.content.decode() and "cell-1" not in page.content.decode()
    page = admin_client_logged_in.get("/admin/auction/actuallrp/?q=lrp-b")
    text = page.content.decode()
    assert "lrp-b.0" in text and "lrp-a.0" not in text
    page = admin_client_logged_in.get("/admin/auction/task/?state__exact=PENDING")
    assert "task-c" in page.content.decode()
    page = admin_client_logged_in.get("/admin/auction/desiredlrp/?domain=cf-apps")
    assert page.status_code == 200


def test_zone_and_cell_create_and_edit(admin_client_logged_in: Client, zone: Zone) -> None:
    """AD1/AD2: cells are editable; comma-separated lists become JSON lists."""
    response = admin_client_logged_in.post("/admin/auction/cell/add/",
                                           cell_form(zone, placement_tags="seg-a, seg-b"))
    assert response.status_code == 302, response.content.decode()[:2000]
    cell = Cell.objects.get(cell_id="cell-9")
    assert cell.placement_tags == ["seg-a", "seg-b"]
    response = admin_client_logged_in.post(f"/admin/auction/cell/{cell.pk}/change/",
                                           cell_form(zone, state="draining", memory_mb=4096))
    assert response.status_code == 302
    cell.refresh_from_db()
    assert (cell.state, cell.memory_mb) == ("draining", 4096)
    response = admin_client_logged_in.post("/admin/auction/zone/add/", {"name": "z2"})
    assert response.status_code == 302 and Zone.objects.filter(name="z2").exists()


def test_cell_bad_input_is_a_form_error(admin_client_logged_in: Client, zone: Zone) -> None:
    """AD2: cell memory/containers > 0, in the BBS's wording, on the form."""
    response = admin_client_logged_in.post("/admin/auction/cell/add/",
                                           cell_form(zone, memory_mb=0, containers=-3))
    text = response.content.decode()
    assert response.status_code == 200
    assert "Invalid field: memory_mb" in text and "Invalid field: containers" in text
    assert not Cell.objects.exists()


def test_desired_lrp_create_runs_the_desire_service(admin_client_logged_in: Client) -> None:
    """AD3 / bbs.md 1.4: saving desires the LRP: one UNCLAIMED instance per index."""
    response = admin_client_logged_in.post("/admin/auction/desiredlrp/add/", lrp_form())
    assert response.status_code == 302, response.content.decode()[:3000]
    rows = ActualLRP.objects.filter(desired_id="web").order_by("index")
    assert [(r.index, r.state, r.presence) for r in rows] == [
        (0, "UNCLAIMED", "ORDINARY"), (1, "UNCLAIMED", "ORDINARY")]


@pytest.mark.parametrize(
    ("changes", "messages"),
    [
        ({"instances": -1}, ["Invalid field: instances"]),
        ({"rootfs": ""}, ["Invalid field: rootfs"]),
        ({"rootfs": "docker://registry:abc/img"}, ["Invalid field: rootfs"]),  # bbs.md 1.2 rule 3
        ({"domain": ""}, ["Invalid field: domain"]),
        ({"process_guid": "bad guid"}, ["Invalid field: process_guid"]),
        ({"memory_mb": -5, "disk_mb": -1}, ["Invalid field: memory_mb", "Invalid field: disk_mb"]),
        ({"routes": "[1, 2]"}, ["Invalid field: routes"]),
        ({"ports": "not json"}, ["Enter a valid JSON."]),
        ({"crash_probability": 2}, ["Invalid field: crash_probability"]),
    ],
)
def test_desired_lrp_bad_input_is_a_form_error(
    admin_client_logged_in: Client, changes: dict[str, object], messages: list[str]
) -> None:
    """AD2 / bbs.md 1.2: the BBS's messages on the form; nothing written."""
    response = admin_client_logged_in.post("/admin/auction/desiredlrp/add/", lrp_form(**changes))
    assert response.status_code == 200
    for message in messages:
        assert message in response.content.decode()
    assert not DesiredLRP.objects.exists() and not ActualLRP.objects.exists()


def test_desired_lrp_edit_scales_and_bumps_the_tag(admin_client_logged_in: Client) -> None:
    """AD2/AD3, bbs.md 1.3-1.4: only instances, routes, annotation; scale-up creates rows."""
    admin_client_logged_in.post("/admin/auction/desiredlrp/add/", lrp_form())
    lrp = DesiredLRP.objects.get(process_guid="web")
    form = {"instances": 4, "routes": '{"cf-router": [{"port": 8080}]}', "annotation": "v2",
            "actual_lrps-TOTAL_FORMS": 0, "actual_lrps-INITIAL_FORMS": 0,
            "start_delay_s": 3, "crash_probability": 0.5, "crash_after_s": 10,
            # Read-only members sent anyway are ignored, not applied.
            "memory_mb": 9999}
    response = admin_client_logged_in.post(f"/admin/auction/desiredlrp/{lrp.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    lrp.refresh_from_db()
    assert (lrp.instances, lrp.annotation, lrp.memory_mb) == (4, "v2", 256)
    assert lrp.routes == {"cf-router": [{"port": 8080}]}
    assert lrp.modification_tag_index == 1
    assert lrp.crash_probability == 0.5  # the simulator's knob, saved too
    assert ActualLRP.objects.filter(desired_id="web").count() == 4
    bad = admin_client_logged_in.post(f"/admin/auction/desiredlrp/{lrp.pk}/change/",
                                      {**form, "instances": -1})
    assert bad.status_code == 200 and "Invalid field: instances" in bad.content.decode()
    form["instances"] = 1
    admin_client_logged_in.post(f"/admin/auction/desiredlrp/{lrp.pk}/change/", form)
    # Scale-down deletes UNCLAIMED rows at once (bbs.md 1.4).
    assert ActualLRP.objects.filter(desired_id="web").count() == 1


def test_task_create_and_bad_input(admin_client_logged_in: Client) -> None:
    """AD1/AD2, bbs.md 7: a task is desired PENDING; bad input is a form error."""
    form = {"task_guid": "job-1", "domain": "cf-tasks", "placement_mode": "diego", "duration_s": 30,
            "completion_callback_url": "", "rootfs": "docker:///busybox", "memory_mb": 128,
            "disk_mb": 128, "max_pids": 0, "placement_tags": "", "volume_drivers": "",
            "annotation": ""}
    response = admin_client_logged_in.post("/admin/auction/task/add/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    task = Task.objects.get(task_guid="job-1")
    assert task.state == "PENDING"
    bad = admin_client_logged_in.post("/admin/auction/task/add/",
                                      {**form, "task_guid": "job 2", "rootfs": "busybox"})
    assert bad.status_code == 200
    assert "Invalid field: task_guid" in bad.content.decode()
    assert "Invalid field: rootfs" in bad.content.decode()
    change = admin_client_logged_in.post(f"/admin/auction/task/{task.pk}/change/",
                                         {"placement_mode": "otto"})
    assert change.status_code == 302
    task.refresh_from_db()
    assert task.placement_mode == "otto"


def test_domain_upsert_sets_expiry(admin_client_logged_in: Client) -> None:
    """bbs.md 5: expiry = now + ttl; ttl 0 never expires; empty name is refused."""
    response = admin_client_logged_in.post("/admin/auction/domain/add/", {"name": "cf-apps", "ttl_s": 120})
    assert response.status_code == 302
    domain = Domain.objects.get(name="cf-apps")
    assert domain.expires_at is not None and domain.expires_at >= 120
    admin_client_logged_in.post(f"/admin/auction/domain/{domain.pk}/change/", {"name": "cf-apps", "ttl_s": 0})
    domain.refresh_from_db()
    assert domain.expires_at is None
    bad = admin_client_logged_in.post("/admin/auction/domain/add/", {"name": "", "ttl_s": 5})
    assert bad.status_code == 200 and "Invalid field: domain" in bad.content.decode()


def test_clock_edit_reanchors(admin_client_logged_in: Client) -> None:
    """The clock row is edited as controls: pause freezes sim time; bad speed is refused."""
    clock, _ = SimClock.objects.get_or_create(pk=1)  # the migration made it; a flush may not
    url = f"/admin/auction/simclock/{clock.pk}/change/"
    response = admin_client_logged_in.post(url, {"speed": 4, "paused": "on", "convergence_interval_s": 15})
    assert response.status_code == 302
    clock.refresh_from_db()
    assert (clock.speed, clock.paused, clock.convergence_interval_s) == (4, True, 15)
    bad = admin_client_logged_in.post(url, {"speed": 1000, "convergence_interval_s": 15})
    assert bad.status_code == 200 and "Invalid field: speed" in bad.content.decode()
    assert SimClock.objects.count() == 1


def test_admin_cell_saves_go_through_the_services(admin_client_logged_in: Client, zone: Zone) -> None:
    """Services are the only writers (docs/architecture.md): a cell the admin marks failed
    gets the chaos rule's presence lapse, every save is audited, a zone with cells stays."""
    from auction.models import AuditEntry

    assert admin_client_logged_in.post("/admin/auction/cell/add/", cell_form(zone)).status_code == 302
    cell = Cell.objects.get(cell_id="cell-9")
    assert AuditEntry.objects.filter(action="cell_add", target="cell-9").exists()
    response = admin_client_logged_in.post(f"/admin/auction/cell/{cell.pk}/change/",
                                           cell_form(zone, state="failed"))
    assert response.status_code == 302
    cell.refresh_from_db()
    assert cell.state == "failed" and cell.presence_lost_at is not None  # lapses 10-15 s later
    entry = AuditEntry.objects.get(action="cell_update", target="cell-9")
    assert entry.diff["state"] == ["healthy", "failed"] and entry.source == "admin"
    refused = admin_client_logged_in.post(f"/admin/auction/zone/{zone.pk}/delete/", {"post": "yes"})
    assert refused.status_code == 200 and Zone.objects.filter(pk=zone.pk).exists()  # it has a cell


def test_admin_knob_save_is_no_bbs_update(admin_client_logged_in: Client) -> None:
    """Changing only the simulator's knobs is not a DesiredLRPUpdateRequest: the
    modification tag stays, and the knob change is audited on its own."""
    from auction.models import AuditEntry

    scenario_load("seed-example")
    desired = DesiredLRP.objects.get(process_guid="lrp-a")
    tag = desired.modification_tag_index
    form = lrp_form(process_guid="lrp-a", instances=3, memory_mb=2048, crash_probability=0.5)
    response = admin_client_logged_in.post(f"/admin/auction/desiredlrp/{desired.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    desired.refresh_from_db()
    assert desired.crash_probability == 0.5 and desired.modification_tag_index == tag
    assert AuditEntry.objects.filter(action="desired_lrp_simulate", target="lrp-a").exists()
    assert not AuditEntry.objects.filter(action="desired_lrp_update", target="lrp-a").exists()


def test_reading_the_clock_never_writes_it(db: None) -> None:
    """A read selector creates nothing: before any writer ran there is no row, and sim
    time reads as 0; the first control creates it, audited."""
    from auction.models import AuditEntry
    from auction.selectors.clock import clock_view
    from auction.services.clock import clock_change

    SimClock.objects.all().delete()
    assert clock_view().now == 0.0 and not SimClock.objects.exists()
    clock_change(speed=4, source="cli")
    assert SimClock.objects.get(pk=1).speed == 4
    assert AuditEntry.objects.get(action="clock_speed").diff["speed"] == [1.0, 4]
