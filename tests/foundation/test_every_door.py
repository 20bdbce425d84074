"""One validation for every door (bbs.md 1.6): the API, the admin, the dashboard's
controls, ``manage.py diego`` and scenario files refuse the same values with the same
message, from the one registry (``auction.bbs.validation.LIMITS``); a limit is a clear
error at each, never an overflow or a 500, and nothing is written."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from auction.bbs.validation import INT32_MAX, LIMITS, MAX_INSTANCES, TEXT_LIMITS
from auction.models import Cell, DesiredLRP, Domain
from auction.scenarios import Scenario, ScenarioError
from auction.services.clock import clock_reset
from auction.services.scenarios import scenario_load

pytestmark = pytest.mark.django_db

LRP = {"process_guid": "door", "domain": "cf-apps", "rootfs": "preloaded:cflinuxfs4",
       "instances": 1, "memory_mb": 64, "disk_mb": 64}
# (field, value the registry refuses): each door must answer "Invalid field: <field>".
BAD_LRP = [("instances", MAX_INSTANCES + 1), ("instances", 10**20), ("instances", 2**63 - 1),
           ("memory_mb", INT32_MAX + 1), ("memory_mb", 2**63 - 1), ("disk_mb", 2**40),
           ("instances", -1)]
BAD_PORTS = [[70000], ["a"], [-1], list(range(65))]
BAD_DOMAIN = [("ttl", 1e300), ("ttl", LIMITS["ttl"].maximum * 2), ("ttl", -1),
              ("domain", "d" * (TEXT_LIMITS["domain"] + 1))]


@pytest.fixture
def world(db: None) -> Client:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    admin = User.objects.create_superuser("door-admin", password="pw-for-tests")
    client = Client()
    client.force_login(admin)
    return client


def _nothing_written(guid: str = "door") -> bool:
    return not DesiredLRP.objects.filter(process_guid=guid).exists()


# -- the doors, each as "send this desire; return the message it answered" -----------

def api_desire(client: Client, spec: dict[str, Any]) -> str:
    response = client.post("/api/v1/desired_lrps", json.dumps(spec), content_type="application/json",
                           headers={"X-CSRFToken": "unused"})
    assert response.status_code == 400, response.content[:300]
    return json.loads(response.content)["error"]["message"]


def admin_desire(client: Client, spec: dict[str, Any]) -> str:
    form = {"process_guid": spec["process_guid"], "domain": spec["domain"], "rootfs": spec["rootfs"],
            "instances": spec["instances"], "memory_mb": spec["memory_mb"],
            "disk_mb": spec["disk_mb"], "max_pids": 0, "placement_tags": "[]",
            "volume_drivers": "[]", "ports": json.dumps(spec.get("ports", [])),
            "start_timeout_ms": 0, "routes": "{}", "annotation": "", "start_delay_s": 1,
            "crash_probability": 0, "crash_after_s": 1,
            "actual_lrps-TOTAL_FORMS": 0, "actual_lrps-INITIAL_FORMS": 0}
    response = client.post("/admin/auction/desiredlrp/add/", form)
    assert response.status_code == 200, response.status_code  # the form again, with errors
    return response.content.decode()


def cli_desire(client: Client, spec: dict[str, Any]) -> str:
    with pytest.raises(CommandError) as info:
        call_command("diego", "desire", spec["process_guid"], f"--instances={spec['instances']}",
                     f"--memory={spec['memory_mb']}", f"--disk={spec['disk_mb']}")
    return str(info.value)


def scenario_desire(client: Client, spec: dict[str, Any]) -> str:
    data = {"name": "door", "zones": ["z1"],
            "cells": [{"cell_id": "cell-1", "zone": "z1"}], "desired_lrps": [spec]}
    with pytest.raises(ScenarioError) as info:
        scenario_load(Scenario(name="door", title="door", description="", seed=1, data=data))
    return str(info.value)


DOORS: dict[str, Callable[[Client, dict[str, Any]], str]] = {
    "api": api_desire, "admin": admin_desire, "cli": cli_desire, "scenario": scenario_desire}


@pytest.mark.parametrize("door", sorted(DOORS))
@pytest.mark.parametrize(("field", "value"), BAD_LRP, ids=[f"{f}={v}" for f, v in BAD_LRP])
def test_every_door_refuses_the_same_lrp_values_bbs_md_1_6(world, door, field, value) -> None:
    """bbs.md 1.6: the same limit, the same message, nothing written, whatever the door."""
    if door == "api":
        world.logout()
        from auction.models import ApiToken
        world.defaults["HTTP_AUTHORIZATION"] = "Bearer " + ApiToken.issue(
            User.objects.get(username="door-admin"), "door")[1]
    answer = DOORS[door](world, {**LRP, field: value})
    assert f"Invalid field: {field}" in answer
    assert _nothing_written()


@pytest.mark.parametrize("door", ["api", "admin"])
@pytest.mark.parametrize("ports", BAD_PORTS, ids=["70000", "a", "-1", "65-ports"])
def test_ports_are_checked_at_every_door_that_takes_them_bbs_md_1_6(world, door, ports) -> None:
    if door == "api":
        world.logout()
        from auction.models import ApiToken
        world.defaults["HTTP_AUTHORIZATION"] = "Bearer " + ApiToken.issue(
            User.objects.get(username="door-admin"), "door")[1]
    assert "Invalid field: ports" in DOORS[door](world, {**LRP, "ports": ports})
    assert _nothing_written()


@pytest.mark.parametrize(("field", "value"), BAD_DOMAIN, ids=["1e300", "2x-max", "-1", "256-chars"])
def test_every_door_refuses_the_same_domain_values_bbs_md_1_6(world, field, value) -> None:
    """bbs.md 1.6: a domain's TTL and name, at the API, the admin, the dashboard's bump
    control, the CLI and a scenario file; GET /api/v1/domains still answers afterwards."""
    name = value if field == "domain" else "door-domain"
    ttl = value if field == "ttl" else 120
    message = f"Invalid field: {field}"
    from auction.models import ApiToken

    token = ApiToken.issue(User.objects.get(username="door-admin"), "door")[1]
    api = Client().put(f"/api/v1/domains/{name}", json.dumps({"ttl": ttl}),
                       content_type="application/json", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 400 and message in api.json()["error"]["message"]
    admin = world.post("/admin/auction/domain/add/", {"name": name, "ttl_s": ttl})
    assert admin.status_code == 200 and message in admin.content.decode()
    control = world.post("/controls/domain/", {"action": "bump", "domain": name, "ttl": str(ttl)},
                         headers={"HX-Request": "true"})
    assert control.status_code == 400 and message in control.content.decode()
    with pytest.raises(CommandError, match=message):
        call_command("diego", "domain", name, str(ttl))
    data = {"name": "door", "zones": ["z1"], "cells": [{"cell_id": "cell-1", "zone": "z1"}],
            "domains": [{"name": name, "ttl": ttl}]}
    with pytest.raises(ScenarioError, match=message):
        scenario_load(Scenario(name="door", title="door", description="", seed=1, data=data))
    assert not Domain.objects.filter(name=name).exists()
    assert Client().get("/api/v1/domains").status_code == 200


@pytest.mark.parametrize("instances", [str(MAX_INSTANCES + 1), str(10**20), str(2**63 - 1), "-1", "²"])
def test_the_dashboards_scale_control_refuses_what_the_api_refuses_bbs_md_1_6(world, instances) -> None:
    """bbs.md 1.6: 10^20 instances on the dashboard was a 500; now the same 400 as the API."""
    before = DesiredLRP.objects.get(process_guid="lrp-a").instances
    response = world.post("/controls/chaos/", {"action": "scale", "process_guid": "lrp-a",
                                               "instances": instances}, headers={"HX-Request": "true"})
    assert response.status_code == 400 and "Invalid field: instances" in response.content.decode()
    assert DesiredLRP.objects.get(process_guid="lrp-a").instances == before
    if instances.isascii() and instances.isdigit():  # what the CLI's argument parser admits
        with pytest.raises(CommandError, match="Invalid field: instances"):
            call_command("diego", "scale", "lrp-a", instances)


@pytest.mark.parametrize(("field", "value"), [("memory_mb", 2**63 - 1), ("index", 2**40),
                                              ("cell_id", "c" * 65), ("containers", 0)])
def test_cells_share_the_limits_at_the_admin_and_in_scenarios_bbs_md_1_6(world, field, value) -> None:
    form = {"cell_id": "door-cell", "zone": 1, "index": 9, "memory_mb": 1024, "disk_mb": 1024,
            "containers": 10, "proxy_memory_mb": 0, field: value}
    from auction.models import Zone

    form["zone"] = Zone.objects.first().pk
    response = world.post("/admin/auction/cell/add/", form)
    assert response.status_code == 200 and f"Invalid field: {field}" in response.content.decode()
    assert not Cell.objects.filter(cell_id=form["cell_id"]).exists()


def test_the_api_schema_reads_the_registry_bbs_md_1_6() -> None:
    """bbs.md 1.6: the OpenAPI document's maxima are the registry's, not copies."""
    from auction.api.openapi import document

    schemas = document()["components"]["schemas"]
    lrp = schemas["DesiredLRPCreate"]["properties"] if "DesiredLRPCreate" in schemas else next(
        s["properties"] for s in schemas.values() if "process_guid" in s.get("properties", {})
        and "ports" in s.get("properties", {}))
    assert lrp["instances"]["maximum"] == LIMITS["instances"].maximum
    assert lrp["memory_mb"]["maximum"] == LIMITS["memory_mb"].maximum
    assert lrp["ports"]["items"]["maximum"] == LIMITS["port"].maximum
    assert lrp["process_guid"]["maxLength"] == TEXT_LIMITS["process_guid"]

