"""What happens next on the sim clock (dashboard.md C1 "step to the next scheduled event")."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Min

from auction.models import ActualLRP, Cell, Domain, Task
from auction.selectors.clock import clock_row
from auction.sim.reps import EVACUATION_SYNC_S


@dataclass(frozen=True, slots=True)
class NextEvent:
    at: float
    what: str


def next_scheduled_event(now: float) -> NextEvent | None:
    """The soonest instant after ``now`` at which the simulation changes by itself.

    Candidates: the convergence timer (bbs.md 4.1), a claimed instance becoming RUNNING,
    an injected crash, a task completing, a failed cell's presence lapsing (bbs.md 6.1),
    a draining cell's sync (6.3), a domain expiring (5). Back-offs and task
    timers are acted on by passes, so the pass covers them.
    """
    candidates = [NextEvent(clock_row().next_convergence_at, "convergence pass")]

    def soonest(qs, column: str, what: str) -> None:  # type: ignore[no-untyped-def]
        at = qs.filter(**{f"{column}__gt": now}).aggregate(m=Min(column))["m"]
        if at is not None:
            candidates.append(NextEvent(at, what))

    silent = Cell.objects.filter(state=Cell.State.FAILED).values_list("cell_id", flat=True)
    soonest(ActualLRP.objects.filter(state=ActualLRP.State.CLAIMED).exclude(cell_id__in=silent),
            "ready_at", "instance start")
    soonest(ActualLRP.objects.filter(state=ActualLRP.State.RUNNING).exclude(cell_id__in=silent),
            "crash_at", "instance crash")
    soonest(Task.objects.filter(state=Task.State.RUNNING).exclude(cell_id__in=silent),
            "finishes_at", "task completion")
    soonest(Cell.objects.all(), "presence_lost_at", "cell presence lapses")
    soonest(Domain.objects.all(), "expires_at", "domain expires")
    # A draining rep syncs every 10 s while its presence lasts; the timeout is a sync too.
    for since, synced in Cell.objects.filter(state=Cell.State.DRAINING, presence_lost_at__isnull=True) \
            .values_list("evacuating_since", "evacuation_synced_at"):
        if since is not None and (synced or since) + EVACUATION_SYNC_S > now:
            candidates.append(NextEvent((synced or since) + EVACUATION_SYNC_S, "evacuation sync"))
    future = [c for c in candidates if c.at > now]
    return min(future, key=lambda c: c.at, default=None)
