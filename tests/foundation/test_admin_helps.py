"""An admin that helps (dashboard.md AD2, G9): warnings for work no cell can fit, new
cells like the cluster's usual ones, each field's message once with the rootfs forms,
no change links on read-only rows, beat's schedule out of reach."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from auction.models import DesiredLRP
from auction.services.scenarios import scenario_load
from tests.foundation.test_admin import lrp_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client: Client) -> Client:
    get_user_model().objects.create_superuser("admin", "a@example.invalid", "pw")
    client.login(username="admin", password="pw")
    return client


def test_work_no_cell_can_fit_is_saved_with_a_warning(staff: Client) -> None:
    """AD2 with G9's advice: saved (the BBS accepts it), and a warning says what would fit."""
    scenario_load("seed-example")
    response = staff.post("/admin/auction/desiredlrp/add/", lrp_form(memory_mb=20_000), follow=True)
    assert DesiredLRP.objects.filter(process_guid="web").exists()
    text = response.content.decode()
    assert "no cell can ever run web: add a cell of &gt;= 20000 MB memory with cflinuxfs4" in text
    assert 'class="warning"' in text
    staff.post("/admin/auction/desiredlrp/add/", lrp_form(process_guid="small"), follow=True)
    assert "no cell can ever run small" not in staff.get("/admin/auction/desiredlrp/").content.decode()


def test_each_field_message_once_with_the_rootfs_forms(staff: Client) -> None:
    """AD2 / bbs.md 1.2: a field's message shows once on the form; rootfs errors name the
    expected forms."""
    response = staff.post("/admin/auction/desiredlrp/add/", lrp_form(domain="", rootfs="cflinuxfs4"))
    text = response.content.decode()
    assert text.count("Invalid field: domain") == 1
    assert "Invalid field: rootfs" in text
    assert "preloaded:cflinuxfs4" in text and "docker:///image" in text


def test_new_cell_starts_like_the_usual_cell_and_read_only_rows_have_no_change_link(staff: Client) -> None:
    """AD1: the add form's defaults are the cluster's usual stacks, providers and size."""
    scenario_load("seed-example")
    page = staff.get("/admin/auction/cell/add/").content.decode()
    assert re.search(r'name="preloaded_rootfses"[^>]*value="cflinuxfs4"', page)
    assert re.search(r'name="rootfs_providers"[^>]*value="docker"', page)
    lrp = DesiredLRP.objects.get(process_guid="lrp-a")
    page = staff.get(f"/admin/auction/desiredlrp/{lrp.pk}/change/").content.decode()
    assert "inlinechangelink" not in page


def test_beat_schedule_is_not_in_the_admin(staff: Client) -> None:
    """L9: the beat schedule drives the clock; it is not editable beside the cluster."""
    assert staff.get("/admin/django_celery_beat/periodictask/").status_code == 404
    assert "Periodic tasks" not in staff.get("/admin/").content.decode()
