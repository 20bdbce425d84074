"""The /plans/ page, its capacity form, the grid's zone-loss chips and the panel's
"N more of this size fit" (plans.md 1.5, 1.6, 2.1, 2.2), through the Django client."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from auction.models import AuditEntry, Plan
from auction.services.lrps import desired_lrp_desire
from auction.services.sim import simulate_in_database
from tests.pages.page_html import parse

pytestmark = pytest.mark.django_db


@pytest.fixture
def placed(db: None) -> None:
    simulate_in_database("seed-example", 60.0)


@pytest.fixture
def operator_client(db: None) -> Client:
    user = User.objects.create_user("planner", password="pw-for-tests")
    user.user_permissions.add(Permission.objects.get(codename="control"))
    client = Client()
    client.force_login(user)
    return client


def test_the_page_composes_with_the_chaos_controls_choices_plans_md_1_5(placed, client) -> None:  # type: ignore[no-untyped-def]
    page = parse(client.get("/plans/").content.decode())
    assert page.find("a", aria_current="page").text == "Plans"
    kinds = [o.attrs["value"] for o in page.find("select", id="change-kind").find_all("option")]
    assert {"fail_zone", "scale", "add_cells", "auction_config", "remove_cell"} <= set(kinds)
    zones = page.find("fieldset", data_kind="fail_zone").find("select")
    assert [o.text for o in zones.find_all("option")] == ["z1", "z2"]
    assert page.find_all("a", class_="signin")  # not an operator: no Run button
    assert client.post("/plans/", {"changes": "fail_zone zone=z2"}).status_code == 403
    assert not Plan.objects.exists()


def test_run_read_the_diff_download_and_apply_plans_md_1_6(placed, operator_client) -> None:  # type: ignore[no-untyped-def]
    response = operator_client.post("/plans/", {"changes": "scale process_guid=lrp-a instances=5\n", "horizon": "300"})
    assert response.status_code == 302
    plan = Plan.objects.get()
    page = parse(operator_client.get(response["Location"]).content.decode())
    row = page.find("tr", data_app="lrp-a")
    assert "changed" in row.classes()
    assert page.find("dd", data_stopped=True).text.strip() == "0"
    report = operator_client.get(f"/plans/{plan.pk}/report/")
    assert report["Content-Disposition"] == f'attachment; filename="plan-{plan.pk}.html"'
    assert report.content.startswith(b"<!DOCTYPE html>")
    assert page.find_all("button", id="plan-apply")
    applied = operator_client.post(f"/plans/{plan.pk}/apply/")
    assert applied.status_code == 302
    assert AuditEntry.objects.filter(action="plan_apply", target=f"plan-{plan.pk}").exists()
    after = parse(operator_client.get(f"/plans/{plan.pk}/").content.decode())
    assert after.find_all("table", id="plan-beside")
    assert not after.find_all("button", id="plan-apply")
    again = operator_client.post(f"/plans/{plan.pk}/apply/")
    assert again.status_code == 400 and b"applied already" in again.content


def test_a_bad_change_is_said_on_the_page_plans_md_1_2(placed, operator_client) -> None:  # type: ignore[no-untyped-def]
    response = operator_client.post("/plans/", {"changes": "scale process_guid=lrp-a instances=-3"})
    assert response.status_code == 400
    error = parse(response.content.decode()).find("p", class_="plan-error").text
    assert error == "changes[0] (scale): Invalid field: instances"
    assert "instances=-3" in response.content.decode()  # the text is kept to fix
    assert not Plan.objects.exists()


def test_the_capacity_form_answers_in_place_plans_md_2_1(placed, client) -> None:  # type: ignore[no-untyped-def]
    answer = parse(client.get("/plans/capacity/?memory_mb=1024&disk_mb=512").content.decode())
    assert int(answer.find("strong", data_fits=True).text) > 0
    bad = client.get("/plans/capacity/?memory_mb=x")
    assert bad.status_code == 400 and b"Invalid field: memory_mb" in bad.content


def test_the_grid_loads_zone_loss_chips_after_itself_plans_md_2_2(placed, client) -> None:  # type: ignore[no-untyped-def]
    grid = parse(client.get("/grid/").content.decode())
    assert grid.find(id="zone-loss").attrs["hx-get"] == "/plans/zone-loss/"
    chips = parse(client.get("/plans/zone-loss/").content.decode()).find_all("span", class_="zl-chip")
    assert [c.attrs["data-zone"] for c in chips] == ["z1", "z2"]
    assert all(c.text.startswith(f"survives the loss of {c.attrs['data-zone']}: ") for c in chips)


def test_an_unplaced_instance_says_how_many_more_of_its_size_fit_plans_md_2_1(placed, client) -> None:  # type: ignore[no-untyped-def]
    desired_lrp_desire({"process_guid": "huge", "domain": "cf-apps", "rootfs": "preloaded:cflinuxfs4",
                        "instances": 1, "memory_mb": 7000, "disk_mb": 10})
    from auction.services.sim import auctioneer_run

    auctioneer_run()
    panel = parse(client.get("/panel/instance/huge/0/", HTTP_HX_REQUEST="true").content.decode())
    more = panel.find("p", class_="capacity-more")
    assert "memory_mb=7000" in more.attrs["hx-get"]
    fragment = parse(client.get(more.attrs["hx-get"]).content.decode())
    assert fragment.find("span", data_fits="0").text == "0 more of this size fit"
