"""The reps' timers and the auctioneer's new work, declared once (issue 26).

Each ``Timer`` says which record holds it, which field holds its instant, which states
and presence it applies to (``where``), whether it waits while its cell is silent (a
failed cell's rep reports nothing, bbs.md 6.2), and how it is named in a heap. Both
stores answer ``next_due`` and the ``due_*`` reads of ``auction.sim.driver.Store`` from
these declarations alone: the database store turns each into a query filter
(``auction/services/where.py``); the memory store keeps heaps of ``Timer.entry`` and
checks an entry against its record with ``Timer.live`` when it surfaces.

One boundary for all: a timer is due at ``at`` when its instant is at or before ``at``;
a presence lapse only while its instant is still after ``now`` (bbs.md 6.1: one already
past stays past, it is never handled again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from auction.bbs import types as core
from auction.sim.model import DRAINING, SILENT_STATES, SimCell
from auction.sim.reps import next_evacuation_sync
from auction.sim.where import EQ, IN, Where, holds_all

#: The records a timer can be held by: an ActualLRP row, a task, a cell, a queued item.
ACTUAL: Final = "actual"
TASK: Final = "task"
CELL: Final = "cell"
QUEUE: Final = "queue"


@dataclass(frozen=True, slots=True)
class Timer:
    """One kind of timer (see the module docstring). ``field`` holds the instant, unless
    ``compute`` derives it from the record (an evacuation sync); ``identity`` names the
    record in a heap entry; ``cell`` is the field naming the cell whose silence holds it."""

    kind: str
    record: str
    field: str
    where: tuple[Where, ...] = ()
    identity: tuple[str, ...] = ()
    silent_waits: bool = False
    past_stays_past: bool = False
    cell: str = "cell_id"
    compute: Callable[[Any], float | None] | None = None

    def applies(self, record: Any) -> bool:
        """The record is one this timer runs on (its state, presence, ...)."""
        return holds_all(self.where, record)

    def instant(self, record: Any) -> float | None:
        """The record's instant for this timer, or None when none runs on it."""
        for condition in self.where:  # a loop, not ``holds_all``: the memory store asks per row write
            if not condition.holds(record):
                return None
        if self.compute is not None:
            return self.compute(record)
        return getattr(record, self.field)  # type: ignore[no-any-return]

    def ahead(self, instant: float, now: float) -> bool:
        """The instant can still come due (a lapse at or before ``now`` never does)."""
        return not self.past_stays_past or instant > now

    def reached(self, instant: float, at: float, now: float) -> bool:
        """An instant of this timer is due at ``at``: the one boundary of every store."""
        return instant <= at and self.ahead(instant, now)

    def due(self, record: Any, at: float, now: float) -> bool:
        """The record's timer is due at ``at`` (its cell's silence aside: ``waits``)."""
        instant = self.instant(record)
        return instant is not None and self.reached(instant, at, now)

    def entry(self, record: Any) -> tuple[Any, ...] | None:
        """The record's heap entry, (instant, *identity), or None when no timer runs."""
        instant = self.instant(record)
        if instant is None:
            return None
        return (instant, *(getattr(record, name) for name in self.identity))

    def live(self, record: Any | None, instant: float) -> bool:
        """A heap entry of ``instant`` still stands for ``record`` (the record is there,
        still one this timer runs on, at the same instant); else it is stale."""
        return record is not None and self.instant(record) == instant

    def waits(self, cell: SimCell | None) -> bool:
        """The timer waits while its cell is silent, until the cell reports again."""
        return self.silent_waits and cell is not None and cell.state in SILENT_STATES


def _states(*states: str) -> Where:
    return Where("state", IN, frozenset(states))


#: The cells whose rep reports nothing (their held timers wait): the records' filter.
SILENT: Final = (Where("state", IN, SILENT_STATES),)

#: An ORDINARY CLAIMED instance starts when its start delay has passed (bbs.md 2.3).
START: Final = Timer("start", ACTUAL, "ready_at",
                     (_states(core.CLAIMED), Where("presence", IN, frozenset({core.ORDINARY}))), identity=("process_guid", "index"), silent_waits=True)
#: A seeded crash of a CLAIMED or RUNNING instance, of any presence (bbs.md 3).
CRASH: Final = Timer("crash", ACTUAL, "crash_at", (_states(core.CLAIMED, core.RUNNING),),
                     identity=("process_guid", "index", "presence"), silent_waits=True)
#: A RUNNING task completes after its run time (bbs.md 7).
COMPLETION: Final = Timer("completion", TASK, "finishes_at", (_states(core.TASK_RUNNING),),
                          identity=("task_guid",), silent_waits=True)
#: A draining cell's rep syncs at once, then every 10 s (bbs.md 6.3).
EVACUATION_SYNC: Final = Timer("evacuation_sync", CELL, "", (_states(DRAINING),), identity=("cell_id",),
                               compute=next_evacuation_sync)
#: A cell's presence lapses (bbs.md 6.1); whatever the cell's state.
LAPSE: Final = Timer("lapse", CELL, "presence_lost_at", identity=("cell_id",), past_stays_past=True)
#: Work not carried over starts an auction as soon as it is queued (auction.md 1.2, 1.8).
NEW_WORK: Final = Timer("new_work", QUEUE, "queued_at", (Where("carried", EQ, False),), identity=("seq",))

#: Every timer, in the order the driver's phases handle them at one instant.
TIMERS: Final = (START, CRASH, COMPLETION, EVACUATION_SYNC, LAPSE, NEW_WORK)
