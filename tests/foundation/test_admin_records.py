"""Records in the admin are read-only (dashboard.md AD1)."""

from __future__ import annotations

import pytest

from auction.services.clock import clock_reset, clock_step
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run, sim_advance

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", ["auctionrun", "convergencerun", "bbsevent", "auditentry"])
def test_records_list_but_cannot_be_added_or_changed(admin_client, model) -> None:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    clock_step(31)
    sim_advance()
    listing = admin_client.get(f"/admin/auction/{model}/")
    assert listing.status_code == 200
    assert admin_client.get(f"/admin/auction/{model}/add/").status_code == 403
    first = listing.context["cl"].result_list[0]
    page = admin_client.get(f"/admin/auction/{model}/{first.pk}/change/")
    assert page.status_code == 200 and b'type="submit" value="Save"' not in page.content
