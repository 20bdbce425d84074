"""The dashboard's upload page (plans.md 3.6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from auction.models import Cell, Foundation
from auction.services.scenarios import scenario_load

pytestmark = pytest.mark.django_db
CAPTURES = Path(__file__).parent / "captures"


def files() -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(CAPTURES.glob("*.jsonl"))]


@pytest.fixture
def op_client(client: Client) -> Client:
    user = User.objects.create_user("op", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="control"))
    client.force_login(user)
    return client


def test_the_page_is_in_the_navigation_and_operator_only_plans_md_3_6(client: Client) -> None:
    scenario_load("seed-example")
    page = client.get("/foundations/").content.decode()
    assert 'href="/foundations/"' in page and "Sign in as an operator" in page and "<form id" not in page
    response = client.post("/foundations/", {"file": files()})
    assert response.status_code == 403 and Cell.objects.filter(cell_id="old-rep-cell").count() == 0
    User.objects.create_user("viewer", password="pw")
    client.login(username="viewer", password="pw")
    assert client.post("/foundations/", {"file": files()}).status_code == 403


def test_upload_keep_then_load_plans_md_3_6(op_client: Client) -> None:
    scenario_load("seed-example")
    page = op_client.post("/foundations/", {"file": files(), "mode": "keep", "name": "eu-1"})
    assert page.status_code == 200 and "Kept as foundation <strong>eu-1</strong>" in page.content.decode()
    assert Foundation.objects.filter(name="eu-1").exists() and not Cell.objects.filter(cell_id="old-rep-cell")
    page = op_client.post("/foundations/", {"load": "eu-1"})
    assert "Loaded into the live cluster" in page.content.decode()
    assert Cell.objects.filter(cell_id="old-rep-cell").exists()


def test_a_bad_capture_shows_its_line_and_changes_nothing_plans_md_3_6(op_client: Client) -> None:
    scenario_load("seed-example")
    cells = set(Cell.objects.values_list("cell_id", flat=True))
    bad = SimpleUploadedFile("actual.jsonl", b'{"process_guid":"x","index":0,"state":"RUNNING",'
                                             b'"presence":"SUSPICIOUS"}\n')
    page = op_client.post("/foundations/", {"file": [bad], "mode": "live"})
    assert page.status_code == 400
    assert 'actual.jsonl:1: presence: unknown value &quot;SUSPICIOUS&quot;' in page.content.decode()
    assert set(Cell.objects.values_list("cell_id", flat=True)) == cells
    page = op_client.post("/foundations/", {"file": files(), "mode": "keep", "name": ""})
    assert page.status_code == 400 and "give the foundation a name" in page.content.decode()


def test_an_upload_over_the_limit_is_refused_before_any_parsing_plans_md_3_6(op_client: Client) -> None:
    """plans.md 3.6: a session upload over DIEGO_UPLOAD_MAX_MB answers 413 at the edge, before
    the CSRF check (which reads a form's fields) or the view parses the body; nothing changes."""
    from django.test import override_settings

    scenario_load("seed-example")
    cells = set(Cell.objects.values_list("cell_id", flat=True))
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(User.objects.get(username="op"))
    with override_settings(DIEGO_UPLOAD_MAX_MB=0.001):
        page = csrf_client.post("/foundations/", {"file": files(), "mode": "live"})
    assert page.status_code == 413 and "capture too large" in page.content.decode()
    assert set(Cell.objects.values_list("cell_id", flat=True)) == cells
