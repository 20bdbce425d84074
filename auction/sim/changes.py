"""One change set: everything a rule of the simulation decided, as data.

Every rule in ``auction.sim`` (the auction round, the reps, chaos, convergence, desiring
and scaling) reads plain data and returns a ``ChangeSet``; each store applies it whole
(the database in one transaction). Nothing in a change set is specific to a store, not
even the names of new things (``auction.sim.ids``).

What must happen once a change is kept, outside the store (a worker asked to run the
auctioneer, Otto's open auction fed again, callbacks posted, open pages told), is an
*intent*: plain data, never an action. A rule carries the intents it decides in
``ChangeSet.intents``; the database store adds those that follow from what it wrote and
the shell runs them all after the commit (``auction.services.intents``). The memory
store keeps no workers, Otto or pages, and has none to run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from auction.bbs.changes import RowOp, TaskOp
from auction.bbs.events import Event
from auction.sim.model import QueuedWork, SimApp, SimCell, SimTask


@dataclass(slots=True, frozen=True)
class Note:
    """An entry of the simulator's own feed (an auction, a pass, a chaos action)."""

    type: str
    key: str = ""
    cell_id: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class AuctionWanted:
    """New work waits: the auctioneer should run now, not at the next tick (auction.md 1.2)."""


@dataclass(slots=True, frozen=True)
class OttoRefeed:
    """PENDING Otto tasks with no live auction go back to the open auction (otto.md 7, 9)."""

    at: float


@dataclass(slots=True, frozen=True)
class CallbacksDue:
    """Completed tasks whose results are to be POSTed to their callbacks (bbs.md 7)."""

    task_guids: tuple[str, ...]


@dataclass(slots=True, frozen=True)
class CellsChanged:
    """The cluster as open pages draw it changed (dashboard.md L3): these cells, and with
    them the tray and desired vs actual (work queued, or a row moved on no cell)."""

    cells: tuple[str, ...]


@dataclass(slots=True, frozen=True)
class LiveChanged:
    """Other live elements changed, by name (``auctions``: the auction list, dashboard.md A1)."""

    elements: tuple[str, ...]


@dataclass(slots=True, frozen=True)
class WorldMoved:
    """The world epoch moved: every open page draws the cluster anew, and the Otto
    processes look at the clock again (dashboard.md L1, otto.md 11)."""


Intent = AuctionWanted | OttoRefeed | CallbacksDue | CellsChanged | LiveChanged | WorldMoved


@dataclass(slots=True)
class ChangeSet:
    at: float
    apps_put: list[SimApp] = field(default_factory=list)
    apps_removed: list[str] = field(default_factory=list)
    cells_put: list[SimCell] = field(default_factory=list)
    lrp_ops: list[RowOp] = field(default_factory=list)
    # New tasks (definition and record), then changes to stored ones.
    tasks_put: list[SimTask] = field(default_factory=list)
    task_ops: list[TaskOp] = field(default_factory=list)
    domains_put: dict[str, float | None] = field(default_factory=dict)
    domains_removed: list[str] = field(default_factory=list)
    queue_add: list[QueuedWork] = field(default_factory=list)
    queue_put: list[QueuedWork] = field(default_factory=list)
    queue_remove: list[int] = field(default_factory=list)
    # (process_guid, keep): start requests for indices >= keep are void (a scale-down or
    # a removal); they leave the queue now, not at the next auction, so "waiting" is true.
    # Applied before queue_add.
    queue_drop: list[tuple[str, int]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    counters: Counter[str] = field(default_factory=Counter)
    gauges: dict[str, float] = field(default_factory=dict)
    # Records for replay and metrics (the round's and the pass's own dataclasses).
    auction: Any = None
    convergence: Any = None
    next_convergence_at: float | None = None
    # Tasks whose completion callback is due (bbs.md 7).
    callbacks: list[str] = field(default_factory=list)
    # Timed scenario steps handled (their markers), never to be handled again.
    steps_done: list[str] = field(default_factory=list)
    # Cells whose drawing changed, for the live layer.
    touched: set[str] = field(default_factory=set)
    # What the rule wants done once this change is kept (see the module docstring).
    intents: list[Intent] = field(default_factory=list)

    def merge(self, other: ChangeSet) -> ChangeSet:
        """Append ``other`` (same instant or later) to this set, in order."""
        for name in ("apps_put", "apps_removed", "cells_put", "lrp_ops", "tasks_put", "task_ops",
                     "domains_removed", "queue_add", "queue_put", "queue_remove", "queue_drop", "events",
                     "notes", "callbacks", "steps_done", "intents"):
            getattr(self, name).extend(getattr(other, name))
        self.domains_put.update(other.domains_put)
        self.counters.update(other.counters)
        self.gauges.update(other.gauges)
        self.touched |= other.touched
        if other.next_convergence_at is not None:
            self.next_convergence_at = other.next_convergence_at
        self.auction = other.auction or self.auction
        self.convergence = other.convergence or self.convergence
        return self

    def cells_changed(self) -> set[str]:
        """Every cell whose drawing this change alters: cells written, the cells rows and
        tasks leave and land on (a removal reaches the cell it leaves), and ``touched``."""
        cells = set(self.touched) | {c.cell_id for c in self.cells_put}
        for op in self.lrp_ops:
            for row in (getattr(op, "before", None), getattr(op, "after", None), getattr(op, "row", None)):
                if row is not None and row.cell_id:
                    cells.add(row.cell_id)
        for top in self.task_ops:
            for task in (top.before, getattr(top, "after", None)):
                if task is not None and task.cell_id:
                    cells.add(task.cell_id)
        cells |= {t.task.cell_id for t in self.tasks_put if t.task.cell_id}
        return cells

    def request_lrps(self, keys: list[tuple[str, int]], at: float, reason: str) -> None:
        """One start request listing LRP instances (auction.md 1 step 1)."""
        self.queue_add.extend(QueuedWork(0, "lrp", process_guid=g, index=i, queued_at=at,
                                         reason=reason) for g, i in keys)

    def request_tasks(self, guids: list[str], at: float, reason: str) -> None:
        self.queue_add.extend(QueuedWork(0, "task", task_guid=g, queued_at=at, reason=reason)
                              for g in guids)
