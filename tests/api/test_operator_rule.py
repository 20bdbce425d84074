"""One meaning of "operator" (auction/permissions.py): the ``auction.control`` permission.

On every write path (each dashboard control URL, the panel's cell actions, each API
write) a staff user without the permission gets 403 and nothing changes, and a user
with only the permission (not staff) succeeds. The tables below are checked against
auction/urls.py and the API's URL conf, so a new write path must be added here.
"""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import URLPattern

from auction.api.openapi import routed_operations
from auction.models import AuditEntry
from auction.permissions import CONTROL_PERMISSION, is_operator
from auction.services.sim import auctioneer_run
from auction.services.tasks import task_cancel
from tests.api.cluster_state import fingerprint

pytestmark = pytest.mark.django_db

# URL name → (URL, form): one request that succeeds on seed-example after an auction.
DASHBOARD_WRITES: dict[str, tuple[str, dict[str, str]]] = {
    "control-clock": ("/controls/clock/", {"action": "resume"}),
    "control-chaos cell_fail": ("/controls/chaos/", {"action": "cell_fail", "cell": "cell-1"}),
    "control-chaos zone_fail": ("/controls/chaos/", {"action": "zone_fail", "zone": "z2"}),
    "control-chaos crash": ("/controls/chaos/", {"action": "crash", "instance": "lrp-a.0"}),
    "control-chaos scale": ("/controls/chaos/", {"action": "scale", "process_guid": "lrp-a",
                                                 "instances": "5"}),
    "control-scenario": ("/controls/scenario/", {"name": "seed-example"}),
    "control-domain": ("/controls/domain/", {"action": "expire", "domain": "cf-apps"}),
    "control-auction": ("/controls/auction/", {"order": "go"}),
    "panel-cell-action drain": ("/panel/cell/cell-1/drain/", {}),
    "panel-cell-action fail": ("/panel/cell/cell-1/fail/", {}),
    "panel-cell-action restore": ("/panel/cell/cell-1/restore/", {}),
}

# (OpenAPI path, METHOD) → (URL under /api/v1/, body): one request that succeeds.
API_WRITES: dict[tuple[str, str], tuple[str, Any]] = {
    ("/desired_lrps", "POST"): ("desired_lrps", {"process_guid": "web", "domain": "cf-apps",
                                                 "rootfs": "preloaded:cflinuxfs4", "instances": 1}),
    ("/desired_lrps/{process_guid}", "PATCH"): ("desired_lrps/lrp-a", {"instances": 4}),
    ("/desired_lrps/{process_guid}", "DELETE"): ("desired_lrps/lrp-a", None),
    ("/actual_lrps/{process_guid}/{index}", "DELETE"): ("actual_lrps/lrp-a/0", None),
    ("/domains/{domain}", "PUT"): ("domains/cf-apps", {"ttl": 60}),
    ("/tasks", "POST"): ("tasks", {"task_guid": "t-1", "domain": "cf-tasks",
                                   "rootfs": "docker:///busybox", "memory_mb": 64}),
    ("/tasks/{task_guid}", "DELETE"): ("tasks/task-d", None),
    ("/tasks/{task_guid}/cancel", "POST"): ("tasks/task-c/cancel", None),
    ("/cells/{cell_id}/fail", "POST"): ("cells/cell-1/fail", None),
    ("/cells/{cell_id}/restore", "POST"): ("cells/cell-1/restore", None),
    ("/cells/{cell_id}/drain", "POST"): ("cells/cell-1/drain", None),
    ("/clock", "POST"): ("clock", {"paused": False}),
    ("/foundations", "POST"): ("foundations", {"name": "kept", "files": [{"name": "cells.jsonl", "content": (
        '{"cell_id":"c-9","rep_address":"http://10.0.0.9:1800","zone":"z1",'
        '"capacity":{"memory_mb":8192,"disk_mb":32768,"containers":250}}')}]}),
    ("/foundations/{name}", "PUT"): ("foundations/kept-foundation", {"files": [{"name": "c.jsonl", "content": (
        '{"cell_id":"c-9","rep_address":"http://10.0.0.9:1800","zone":"z1",'
        '"capacity":{"memory_mb":8192,"disk_mb":32768,"containers":250}}')}]}),
    ("/foundations/{name}", "DELETE"): ("foundations/kept-foundation", None),
    ("/plans", "POST"): ("plans", {"changes": [{"action": "fail_zone", "zone": "z2"}], "horizon_s": 60}),
    ("/plans/{plan_id}", "DELETE"): ("plans/latest", None),
}


@pytest.fixture
def world(cluster: None) -> None:
    auctioneer_run()  # lrp-a.0 is CLAIMED: it can crash
    task_cancel("task-d")  # COMPLETED: it can be deleted
    from auction.services.plans import plan_create

    plan_create({"changes": [], "horizon_s": 30})  # a plan to discard
    from auction.services.foundations import foundation_keep
    from auction.services.store import DbStore

    foundation_keep("kept-foundation", DbStore().cluster_view())  # one to replace and delete


@pytest.fixture
def staff() -> User:
    """Staff created after the data migration: no ``control`` until an admin grants it."""
    return User.objects.create_user("staff", password="pw", is_staff=True)


@pytest.fixture
def controller() -> User:
    """Not staff, not superuser: only the permission."""
    user = User.objects.create_user("controller", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="control", content_type__app_label="auction"))
    return User.objects.get(pk=user.pk)


def _session(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _token(user: User) -> str:
    from auction.models import ApiToken

    return ApiToken.issue(user, "tests")[1]


def _api(client: Client, method: str, url: str, body: Any, **headers: str) -> tuple[int, Any]:
    response = client.generic(method, f"/api/v1/{url}", json.dumps(body) if body is not None else "",
                              content_type="application/json", headers=headers)
    return response.status_code, json.loads(response.content)


def test_the_tables_name_every_write_path() -> None:
    from auction.urls import urlpatterns

    routes = {p.name: str(p.pattern) for p in urlpatterns if isinstance(p, URLPattern)}
    controls = {name for name, route in routes.items() if route.startswith("controls/")}
    actions = {name for name, route in routes.items() if "<str:action>" in route}
    assert controls | actions == {key.split()[0] for key in DASHBOARD_WRITES}
    from auction.views.panel import CELL_ACTIONS

    assert {key.split()[1] for key in DASHBOARD_WRITES if key.startswith("panel-")} == set(CELL_ACTIONS)
    assert set(API_WRITES) == {op for op in routed_operations() if op[1] != "GET"}


@pytest.mark.parametrize("name", DASHBOARD_WRITES)
def test_dashboard_write_needs_the_permission(name: str, world: None, staff: User,
                                              controller: User) -> None:
    url, form = DASHBOARD_WRITES[name]
    before = fingerprint()
    refused = _session(staff).post(url, form, HTTP_HX_REQUEST="true")
    assert refused.status_code == 403 and "control permission" in refused.content.decode()
    assert fingerprint() == before
    done = _session(controller).post(url, form, HTTP_HX_REQUEST="true")
    assert done.status_code == 200, done.content.decode()[:300]
    assert AuditEntry.objects.filter(user=controller).exists()


@pytest.mark.parametrize("operation", API_WRITES, ids=[f"{m} {p}" for p, m in API_WRITES])
def test_api_write_needs_the_permission(operation: tuple[str, str], world: None, staff: User,
                                        controller: User) -> None:
    url, body = API_WRITES[operation]
    method = operation[1]
    before = fingerprint()
    for client, headers in ((Client(), {"Authorization": f"Bearer {_token(staff)}"}),
                            (_session(staff), {})):
        status, answer = _api(client, method, url, body, **headers)
        assert status == 403, answer
        assert answer["error"] == {"type": "Unauthorized", "message": (
            "user staff may not change the cluster (needs the control permission)")}
    assert fingerprint() == before
    status, answer = _api(Client(), method, url, body, Authorization=f"Bearer {_token(controller)}")
    assert 200 <= status < 300, answer
    assert AuditEntry.objects.filter(user=controller, source="api").count() == 1


def test_one_rule_for_every_kind_of_user(staff: User, controller: User) -> None:
    from django.contrib.auth.models import AnonymousUser

    superuser = User.objects.create_superuser("root", password="pw")
    inactive = User.objects.create_user("gone", is_active=False)
    inactive.user_permissions.add(Permission.objects.get(codename="control", content_type__app_label="auction"))
    assert [is_operator(u) for u in (staff, controller, superuser, inactive, AnonymousUser(), None)] == [
        False, True, True, False, False, False]
    assert CONTROL_PERMISSION == "auction.control"


def test_the_migration_granted_control_to_existing_staff(staff: User) -> None:
    """0009 made every staff user of the time an operator, so no one lost the controls."""
    plain = User.objects.create_user("plain")
    migration = importlib.import_module("auction.migrations.0009_grant_control_to_staff")
    migration.grant_control_to_staff(apps, None)
    assert is_operator(User.objects.get(pk=staff.pk))
    assert not is_operator(User.objects.get(pk=plain.pk))


def test_bootstrap_admin_is_an_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    from auction.management.commands.bootstrap import Command

    monkeypatch.setenv("DIEGO_ADMIN_PASSWORD", "pw-for-tests")
    Command()._ensure_admin()
    assert is_operator(User.objects.get(username="admin"))


def test_controls_show_only_to_operators(world: None, staff: User, controller: User) -> None:
    """The page and the panel offer the controls by the same rule they enforce."""
    staff_page = _session(staff).get("/lrps/").content.decode()
    controller_page = _session(controller).get("/lrps/").content.decode()
    assert 'data-can-control="false"' in staff_page and 'data-can-control="true"' in controller_page
    panel = _session(staff).get("/panel/cell/cell-1/", HTTP_HX_REQUEST="true").content.decode()
    assert not re.search(r'data-action="(drain|fail)"', panel)
    panel = _session(controller).get("/panel/cell/cell-1/", HTTP_HX_REQUEST="true").content.decode()
    assert re.search(r'data-action="drain"', panel)


def test_api_token_command_names_non_operators(staff: User, controller: User) -> None:
    from io import StringIO

    from django.core.management import call_command

    for user, warned in ((staff, True), (controller, False)):
        err = StringIO()
        call_command("api_token", user.username, stdout=StringIO(), stderr=err)
        assert ("is not an operator" in err.getvalue()) is warned
