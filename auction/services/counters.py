"""Running totals (bbs.md 9: counters such as ConvergenceLRPRuns, TasksStarted)."""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models import F

from auction.models import Counter


def counters_add(increments: Mapping[str, int]) -> None:
    for name, amount in increments.items():
        if not amount:
            continue
        updated = Counter.objects.filter(name=name).update(value=F("value") + amount)
        if not updated:
            _, created = Counter.objects.get_or_create(name=name, defaults={"value": amount})
            if not created:
                Counter.objects.filter(name=name).update(value=F("value") + amount)


def counters_all() -> dict[str, int]:
    return dict(Counter.objects.values_list("name", "value"))
