"""Advancing the simulation to the clock's now: reps, then convergence when due.

Beat calls this every tick. Events due between the last advance and now happen in
time order: rep events up to the next convergence instant, then that pass at its own
instant (timer only, bbs.md 4.1: the next pass one interval after this one), and so on.
One advance at a time in the whole cluster (a Redis lock), so duplicated beats or two
workers never run a pass twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction

from auction.live.groups import group
from auction.live.publish import publish_after_commit
from auction.models import PendingWork, SimClock
from auction.selectors.clock import clock_row
from auction.services.convergence import convergence_run
from auction.services.events import events_trim
from auction.services.locks import cluster_lock
from auction.services.reps import RepReport, reps_advance

MAX_PASSES_PER_ADVANCE = 20


@dataclass(slots=True)
class AdvanceReport:
    now: float
    passes: list[int] = field(default_factory=list)
    reps: list[RepReport] = field(default_factory=list)
    work_waiting: bool = False


def sim_advance(now: float | None = None) -> AdvanceReport | None:
    """Advance to ``now`` (default: the clock's now); None when another advance runs."""
    with cluster_lock("sim-advance") as held:
        if not held:
            return None
        clock = clock_row()
        target = clock.now() if now is None else now
        report = AdvanceReport(target)
        for _ in range(MAX_PASSES_PER_ADVANCE):
            due = clock.next_convergence_at
            with transaction.atomic():
                reps = reps_advance(min(target, due), seed=clock.seed)
                report.reps.append(reps)
                # Starts, crashes and completions change what the grid shows on those cells.
                if reps.cells:
                    publish_after_commit(group("zones"), {"type": "live.cells", "cells": sorted(reps.cells)})
            if due > target:
                break
            summary = convergence_run(due)
            report.passes.append(summary.run_id)
            clock.next_convergence_at = due + clock.convergence_interval_s
            SimClock.objects.filter(pk=clock.pk).update(next_convergence_at=clock.next_convergence_at)
        SimClock.objects.filter(pk=clock.pk).update(advanced_to=target)
        events_trim()
        report.work_waiting = PendingWork.objects.filter(carried=False).exists()
    return report
