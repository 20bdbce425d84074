"""Keeping a named foundation current (plans.md 3.3): replace and delete from the command
line, the page and the API, operator only and audited; the list's size, capture time and
age; a plan names the version it ran on; a capture kept aside touches nothing live."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from auction.models import ApiToken, AuditEntry, BBSEvent, Cell, Foundation, Plan
from auction.services.foundations import (
    FoundationError,
    FoundationNotFound,
    foundation_delete,
    foundation_import,
    foundation_list,
    foundation_view,
)
from auction.services.plans import plan_start
from auction.services.scenarios import scenario_load

pytestmark = pytest.mark.django_db
CAPTURES = Path(__file__).parent / "captures"
SHAPES = Path(__file__).parent / "shapes"


def capture() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(CAPTURES.glob("*.jsonl"))]


def pretty() -> list[tuple[str, bytes]]:
    """A smaller capture, as a person pastes it (jq-pretty, a transcript)."""
    return [(n, (SHAPES / n).read_bytes()) for n in ("cells-pretty.json", "groups-transcript.txt")]


@pytest.fixture
def operator() -> User:
    user = User.objects.create_user("op", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="control"))
    return user


def test_replace_makes_the_next_version_and_delete_removes_it_plans_md_3_3() -> None:
    first = foundation_import(capture(), as_name="eu-1")
    assert (first.version.startswith("v1 sha256:"), first.replaced) == (True, False)
    with pytest.raises(FoundationError, match="exists already; choose another name or replace it"):
        foundation_import(pretty(), as_name="eu-1")
    second = foundation_import(pretty(), as_name="eu-1", replace=True)
    assert second.version.startswith("v2 sha256:") and second.replaced
    assert second.version.split(":")[1] != first.version.split(":")[1]
    view = foundation_view("eu-1")
    assert len(view.cells) == 2 and view.version == second.version
    # Replace with no such name keeps a new one (a PUT's meaning).
    assert foundation_import(pretty(), as_name="eu-2", replace=True).version.startswith("v1 ")
    with pytest.raises(FoundationError, match="only a named foundation is replaced"):
        foundation_import(pretty(), replace=True)
    assert foundation_delete("eu-1") == second.version
    with pytest.raises(FoundationNotFound):
        foundation_delete("eu-1")
    actions = list(AuditEntry.objects.order_by("id").values_list("action", "target"))
    assert actions == [("foundation_keep", "eu-1"), ("foundation_replace", "eu-1"),
                       ("foundation_keep", "eu-2"), ("foundation_delete", "eu-1")]
    replaced = AuditEntry.objects.get(action="foundation_replace").diff
    assert replaced["version"] == [first.version, second.version]


def test_the_list_says_size_capture_time_and_age_plans_md_3_3() -> None:
    foundation_import(capture(), as_name="eu-1")
    [row] = foundation_list()
    assert row["captured_at"] == "2024-06-10T07:11:10+00:00"  # the capture's newest second
    assert row["age_s"] > 86400 * 365
    kept = Foundation.objects.get(name="eu-1")
    assert row["size_bytes"] == len(bytes(kept.capture)) > 0
    assert row["version"] == kept.label() and row["replaced_at"] is None


def test_a_capture_kept_aside_touches_nothing_live(caplog: pytest.LogCaptureFixture,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """No event, no live-layer message, no Redis: keeping, replacing and deleting a named
    foundation never reach the live layer (issue 29: ``--as`` warned of Redis)."""
    import auction.live.publish as publish

    touched: list[str] = []
    for name in ("_client", "state_redis", "mark_dirty", "mark_dirty_after_commit",
                 "publish_after_commit"):
        if hasattr(publish, name):
            monkeypatch.setattr(publish, name, lambda *a, _n=name, **k: touched.append(_n))
    import auction.services.events as events_module

    for name in ("mark_dirty_after_commit", "publish_after_commit"):
        if hasattr(events_module, name):
            monkeypatch.setattr(events_module, name, lambda *a, _n=name, **k: touched.append(_n))
    caplog.set_level(logging.WARNING)
    events = BBSEvent.objects.count()
    out = io.StringIO()
    call_command("import_cfdot", *[str(p) for p in sorted(CAPTURES.glob("*.jsonl"))], "--as", "eu-1",
                 stdout=out, stderr=out)
    call_command("import_cfdot", str(SHAPES / "cells-pretty.json"), "--as", "eu-1", "--replace",
                 stdout=out, stderr=out)
    call_command("import_cfdot", "--delete", "eu-1", stdout=out, stderr=out)
    assert touched == [] and BBSEvent.objects.count() == events
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert "Redis" not in out.getvalue() and "redis" not in out.getvalue()


def test_the_command_replaces_deletes_and_lists_plans_md_3_3(tmp_path: Path) -> None:
    paths = [str(p) for p in sorted(CAPTURES.glob("*.jsonl"))]
    out = io.StringIO()
    call_command("import_cfdot", *paths, "--as", "eu-1", stdout=out)
    assert "kept as foundation eu-1 (v1 sha256:" in out.getvalue()
    out = io.StringIO()
    call_command("import_cfdot", str(SHAPES / "groups-transcript.txt"), str(SHAPES / "cells-pretty.json"),
                 "--as", "eu-1", "--replace", stdout=out)
    said = out.getvalue()
    assert "replaced foundation eu-1 (v2 sha256:" in said
    assert "groups-transcript.txt:2: skipped, not JSON: Command \"actual-lrp-groups\" is deprecated" in said
    out = io.StringIO()
    call_command("import_cfdot", "--list", stdout=out)
    assert "eu-1" in out.getvalue() and "v2 sha256:" in out.getvalue()
    assert "captured 2024-06-10T07:11:00+00:00 (" in out.getvalue()  # the replacement's newest and " d ago)" in out.getvalue()
    with pytest.raises(CommandError, match="--replace replaces a named foundation"):
        call_command("import_cfdot", *paths, "--replace")
    out = io.StringIO()
    call_command("import_cfdot", "--delete", "eu-1", stdout=out)
    assert "deleted foundation eu-1 (v2 sha256:" in out.getvalue()
    with pytest.raises(CommandError, match="no foundation named 'eu-1'"):
        call_command("import_cfdot", "--delete", "eu-1")


def test_a_plan_says_which_version_of_its_foundation_it_ran_on_plans_md_3_3() -> None:
    foundation_import(capture(), as_name="eu-1")
    replaced = foundation_import(capture()[:3] + pretty()[:0], as_name="eu-1", replace=True)
    plan, _ = plan_start({"base": "eu-1", "changes": [], "horizon_s": 30}, inline=True)
    plan.refresh_from_db()
    assert plan.status == Plan.Status.DONE, plan.error
    assert plan.base_version == replaced.version
    assert f"eu-1 ({replaced.version})" in plan.report
    from auction.services.plans import plan_json

    assert plan_json(plan)["base_version"] == replaced.version


def test_the_page_replaces_and_deletes_after_confirmation_plans_md_3_3(client: Client, operator: User) -> None:
    scenario_load("seed-example")
    foundation_import(capture(), as_name="eu-1")
    client.force_login(operator)
    page = client.get("/foundations/").content.decode()
    assert 'data-confirm="Replace foundation eu-1 (v1 sha256:' in page
    assert 'data-confirm="Delete foundation eu-1 (v1 sha256:' in page
    files = [SimpleUploadedFile(n, c) for n, c in pretty()]
    # Not confirmed: nothing happens.
    answer = client.post("/foundations/", {"replace": "eu-1", "file": files})
    assert answer.status_code == 400 and "confirm first" in answer.content.decode()
    assert Foundation.objects.get(name="eu-1").version == 1
    files = [SimpleUploadedFile(n, c) for n, c in pretty()]
    answer = client.post("/foundations/", {"replace": "eu-1", "confirm": "yes", "file": files})
    text = answer.content.decode()
    assert answer.status_code == 200 and "Replaced foundation <strong>eu-1</strong>, now v2 sha256:" in text
    assert "groups-transcript.txt:1: skipped, not JSON" in text  # the warnings are shown
    assert not Cell.objects.filter(cell_id="0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a").exists()  # live untouched
    assert client.post("/foundations/", {"delete": "eu-1"}).status_code == 400
    answer = client.post("/foundations/", {"delete": "eu-1", "confirm": "yes"})
    assert answer.status_code == 200 and "Deleted foundation <strong>eu-1</strong> (v2" in answer.content.decode()
    assert not Foundation.objects.exists()
    # Not an operator: refused.
    foundation_import(capture(), as_name="eu-1")
    client.force_login(User.objects.create_user("viewer", password="pw"))
    assert client.post("/foundations/", {"delete": "eu-1", "confirm": "yes"}).status_code == 403
    assert Foundation.objects.filter(name="eu-1").exists()


def test_the_api_puts_and_deletes_operator_only_plans_md_3_3(client: Client, operator: User) -> None:
    auth = {"Authorization": f"Bearer {ApiToken.issue(operator, 'tests')[1]}"}
    body = {"files": [{"name": n, "content": c.decode()} for n, c in capture()]}
    put = client.put("/api/v1/foundations/eu-1", json.dumps(body), content_type="application/json",
                     headers=auth)
    assert put.status_code == 200 and put.json()["version"].startswith("v1 ") and not put.json()["replaced"]
    files = [SimpleUploadedFile(n, c) for n, c in pretty()]
    from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

    put = client.put("/api/v1/foundations/eu-1", encode_multipart(BOUNDARY, {"file": files}),
                     content_type=MULTIPART_CONTENT, headers=auth)
    assert put.status_code == 200, put.content
    assert put.json()["replaced"] and put.json()["version"].startswith("v2 ")
    assert put.json()["warnings"][0].startswith("groups-transcript.txt:1: skipped, not JSON")
    assert client.put("/api/v1/foundations/eu-1", json.dumps({**body, "name": "x"}),
                      content_type="application/json", headers=auth).status_code == 400
    viewer = User.objects.create_user("viewer", password="pw")
    other = {"Authorization": f"Bearer {ApiToken.issue(viewer, 'tests')[1]}"}
    assert client.delete("/api/v1/foundations/eu-1", headers=other).status_code == 403
    assert client.delete("/api/v1/foundations/eu-1").status_code == 401
    gone = client.delete("/api/v1/foundations/eu-1", headers=auth)
    assert gone.status_code == 200 and gone.json()["version"].startswith("v2 ")
    assert client.delete("/api/v1/foundations/eu-1", headers=auth).status_code == 404
    listed = client.get("/api/v1/foundations", headers=auth).json()["foundations"]
    assert listed == []
    assert [a for a, in AuditEntry.objects.order_by("id").values_list("action")] == [
        "foundation_keep", "foundation_replace", "foundation_delete"]
