"""The core's declared conditions and timers as query filters (issue 26).

``auction.sim.where`` and ``auction.sim.timers`` declare which records a rule picks and
when a timer is due; the memory store asks them of its objects, the database store
builds its queries here from the very same declarations, so a boundary is written once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db.models import Min, Q, QuerySet

from auction.models import ActualLRP, Cell, PendingWork, Task
from auction.sim import timers
from auction.sim.timers import Timer
from auction.sim.where import EQ, GE, IN, Where

MODELS: dict[str, Any] = {timers.ACTUAL: ActualLRP, timers.TASK: Task, timers.CELL: Cell,
                          timers.QUEUE: PendingWork}
_LOOKUPS = {IN: "__in", EQ: "", GE: "__gte"}


def where_q(conditions: Iterable[Where]) -> Q:
    """The conditions, all of them, as one ``Q``."""
    q = Q()
    for w in conditions:
        value = sorted(w.value) if w.op == IN else w.value
        q &= Q(**{f"{w.field}{_LOOKUPS[w.op]}": value})
    return q


def silent_cells() -> list[str]:
    """The cells whose held timers wait (``timers.SILENT``)."""
    return list(Cell.objects.filter(where_q(timers.SILENT)).values_list("cell_id", flat=True))


def timer_records(timer: Timer, silent: Sequence[str] = ()) -> QuerySet[Any]:
    """The records the timer runs on, less those its silent cells hold."""
    query = MODELS[timer.record].objects.filter(where_q(timer.where))
    if timer.field:
        query = query.filter(**{f"{timer.field}__isnull": False})
    if timer.silent_waits and silent:
        query = query.exclude(**{f"{timer.cell}__in": silent})
    return query  # type: ignore[no-any-return]


def _ahead(timer: Timer, query: QuerySet[Any], now: float) -> QuerySet[Any]:
    if not timer.field:
        raise ValueError(f"the {timer.kind} timer's instant is computed: read its records")
    return query.filter(**{f"{timer.field}__gt": now}) if timer.past_stays_past else query


def timer_due(timer: Timer, at: float, now: float, silent: Sequence[str] = ()) -> QuerySet[Any]:
    """The records whose timer is due at ``at`` (``Timer.reached``)."""
    return _ahead(timer, timer_records(timer, silent), now).filter(**{f"{timer.field}__lte": at})


def timer_next(timer: Timer, now: float, silent: Sequence[str] = ()) -> float | None:
    """The earliest instant of the timer that can still come due."""
    return _ahead(timer, timer_records(timer, silent), now).aggregate(m=Min(timer.field))["m"]  # type: ignore[no-any-return]
