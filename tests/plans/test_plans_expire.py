"""Plans expire (plans.md 1.8): applied plans stay; unapplied ones go past the newest
``DIEGO_PLANS_KEEP`` or past ``DIEGO_PLANS_MAX_AGE_DAYS``, their auctions with them; an
expired plan is a 404 that says so."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from auction import tasks
from auction.models import AuditEntry, Plan, PlanAuction
from auction.services.plans import plans_expire

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


@pytest.fixture
def retention(settings):  # type: ignore[no-untyped-def]
    settings.DIEGO_PLANS_KEEP = 3
    settings.DIEGO_PLANS_MAX_AGE_DAYS = 7.0
    return settings


def make(age: timedelta = timedelta(0), *, applied: bool = False, status: str = Plan.Status.DONE) -> int:
    """A plan of that age with two kept auctions."""
    now = timezone.now()
    plan = Plan.objects.create(status=status, result={}, applied_at=now if applied else None)
    Plan.objects.filter(pk=plan.pk).update(created_at=now - age)
    PlanAuction.objects.bulk_create(PlanAuction(plan=plan, number=n, started_at=0.0, record={}) for n in (1, 2))
    return int(plan.pk)


def kept() -> list[int]:
    return list(Plan.objects.order_by("pk").values_list("pk", flat=True))


def test_the_newest_unapplied_plans_are_kept_and_applied_ones_always_plans_md_1_8(retention) -> None:  # type: ignore[no-untyped-def]
    applied = make(applied=True)
    plans = [make() for _ in range(5)]
    assert plans_expire() == 2
    assert kept() == [applied, *plans[2:]]  # exactly DIEGO_PLANS_KEEP unapplied, the newest
    assert set(PlanAuction.objects.values_list("plan_id", flat=True)) == {applied, *plans[2:]}
    entry = AuditEntry.objects.get(action="plans_expire")
    assert entry.diff == {"plans": [plans[:2], None]} and entry.source == "system"
    assert plans_expire() == 0 and AuditEntry.objects.filter(action="plans_expire").count() == 1


def test_an_unapplied_plan_goes_past_the_age_limit_plans_md_1_8(retention) -> None:  # type: ignore[no-untyped-def]
    now = timezone.now()
    limit = 7 * DAY
    young = make(limit - timedelta(minutes=1))
    old = make(limit + timedelta(minutes=1))
    old_applied = make(limit * 10, applied=True)
    assert plans_expire(now=now) == 1
    assert old not in kept() and {young, old_applied} <= set(kept())


def test_a_running_plan_goes_by_age_only_plans_md_1_8(retention) -> None:  # type: ignore[no-untyped-def]
    running = make(status=Plan.Status.RUNNING)
    newer = [make() for _ in range(3)]
    assert plans_expire() == 0 and kept() == [running, *newer]  # beyond the count, but running
    lost = make(8 * DAY, status=Plan.Status.RUNNING)  # expired by age: it takes no place among the newest
    assert plans_expire() == 1 and lost not in kept()


def test_beat_prunes_every_hour_on_the_plans_queue_plans_md_1_8(retention) -> None:  # type: ignore[no-untyped-def]
    from diego_web.celery import app

    entry = retention.CELERY_BEAT_SCHEDULE["plans-expire"]
    assert entry["task"] == "auction.tasks.plans_expire" and entry["schedule"] == 3600.0
    assert app.amqp.router.route({}, entry["task"])["queue"].name == "plans"
    stale = make(8 * DAY)
    assert tasks.plans_expire() == 1 and stale not in kept()

