"""An expired plan through the API and its page (plans.md 1.8): creating a plan prunes,
and the plan that went is a 404 that says so."""

from __future__ import annotations

import pytest

from auction.models import Plan
from auction.services.sim import simulate_in_database

pytestmark = pytest.mark.django_db


@pytest.fixture
def retention(settings):  # type: ignore[no-untyped-def]
    settings.DIEGO_PLANS_KEEP = 3
    settings.DIEGO_PLANS_MAX_AGE_DAYS = 7.0
    return settings


def kept() -> list[int]:
    return list(Plan.objects.order_by("pk").values_list("pk", flat=True))


def test_creating_a_plan_prunes_and_an_expired_plan_is_a_404_that_says_so_plans_md_1_8(  # type: ignore[no-untyped-def]
        retention, api, client) -> None:
    simulate_in_database("seed-example", 60.0)
    retention.DIEGO_PLANS_KEEP = 1
    body = {"changes": [{"action": "fail_zone", "zone": "z2"}], "horizon_s": 60}
    first = api("POST", "plans", body)[1]["plan"]["id"]
    second = api("POST", "plans", body)[1]["plan"]["id"]
    assert kept() == [second]
    retention.DIEGO_PLANS_KEEP, retention.DIEGO_PLANS_MAX_AGE_DAYS = 0, 0.0
    third = api("POST", "plans", body)[1]["plan"]["id"]
    assert kept() == [third]  # the plan just created stays, whatever the settings say
    Plan.objects.filter(pk=third).delete()
    assert api("GET", f"plans/{first}") == (404, {"error": {
        "type": "ResourceNotFound", "message": f"plan {first} expired or never existed"}})
    assert api("GET", "plans/999999")[1]["error"]["message"] == "plan 999999 expired or never existed"
    page = client.get(f"/plans/{first}/")
    assert page.status_code == 404
    assert f"plan {first} expired or never existed" in page.content.decode()
    assert "Plans: what if?" in page.content.decode()  # the plans page, to start another
    Plan.objects.all().delete()
    assert api("GET", "plans/latest")[1]["error"]["message"] == "no plan yet"
