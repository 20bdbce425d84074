"""Moving a simulated cluster forward in sim time: one loop for both stores.

``advance(store, until)`` handles every instant at which something is due, in time
order, each at its own instant. At one instant the phases run in this fixed order, so
the database store and the memory store make the same decisions in the same order:

1. the scenario's timed actions (chaos, deploys),
2. the reps: starts, then crashes, then task completions, then evacuation syncs,
   then presence lapses (the grid shows the cell as missing),
3. a convergence pass when one is due (timer only, bbs.md 4.1),
4. auctions, back to back while new work waits (auction.md 1 step 2).

The instant is handled again until nothing more is due at it (an app with no start
delay starts at the instant it was claimed). Each phase reads the store, asks a rule of
``auction.sim`` for a ``ChangeSet`` and has the store apply it (the database in one
transaction per phase).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from functools import partial
from operator import is_not
from typing import Protocol, cast

from auction.bbs import types as core
from auction.bbs.convergence import KeptParts
from auction.engine import AuctionConfig
from auction.sim.changes import ChangeSet, Note
from auction.sim.chaos import ChaosError, ChaosReader, chaos_args, chaos_change
from auction.sim.converge import convergence_pass
from auction.sim.model import SimApp, SimCell, SimTask
from auction.sim.reps import evacuation_sync, instances_crash, instances_start, tasks_complete
from auction.sim.round import MAX_AUCTIONS_PER_RUN, RoundInput, auction_round

#: A guard against a rule that keeps making work due at the same instant.
MAX_STEPS_PER_INSTANT = 1000


class Store(ChaosReader, Protocol):
    """A simulated cluster's state, wherever it is kept (the database, or memory)."""

    seed: int

    @property
    def now(self) -> float:
        """How far the store has been advanced."""
        ...

    def next_due(self) -> float | None:
        """The earliest instant something is due: a rep timer on a cell that reports, an
        evacuation sync, a presence lapse, a timed action, the next pass, new work. The
        timers and their boundary are ``auction.sim.timers``' declarations, as for every
        ``due_*`` read and ``has_new_work``."""
        ...

    def due_actions(self, at: float) -> list[tuple[str, str, dict[str, object]]]:
        """Timed actions due at ``at``: (marker, action name, raw arguments)."""
        ...

    def due_starts(self, at: float) -> tuple[list[core.ActualLRP],
                                             Mapping[core.LRPKey, list[core.ActualLRP]],
                                             Mapping[str, SimApp]]:
        """ORDINARY CLAIMED rows ready at ``at`` on reporting cells, the EVACUATING and
        SUSPECT copies of their indices, and their apps."""
        ...

    def due_crashes(self, at: float) -> list[core.ActualLRP]: ...
    def due_completions(self, at: float) -> list[SimTask]: ...

    def due_evacuations(self, at: float) -> list[SimCell]:
        """Draining cells whose rep syncs at ``at`` (``evacuation_view`` reads each)."""
        ...

    def due_lapses(self, at: float) -> list[SimCell]: ...
    def convergence_due(self, at: float) -> bool: ...

    def convergence_input(self, at: float) -> tuple[core.Snapshot, set[str], set[str], float,
                                                    KeptParts | None]:
        """(snapshot, failed cells, pending Otto tasks, interval, what the store kept of its
        last pass and vouches for: its quiet LRP half, the plain apps it left out of the
        snapshot; see ``KeptParts``)."""
        ...

    def has_new_work(self) -> bool: ...
    def round_input(self, at: float) -> RoundInput: ...
    def auction_config(self) -> AuctionConfig: ...
    def apply(self, change: ChangeSet) -> None: ...
    def advanced(self, to: float) -> None: ...

    def phase(self) -> AbstractContextManager[object]:
        """Around one read and its apply: the database's transaction."""
        ...

    def read_apart(self) -> AbstractContextManager[object | None]:
        """Around an auction's read where the store can read a consistent state without
        holding its writers up: yields a mark of that state, or None (read in ``phase``)."""
        ...

    def unchanged_since(self, mark: object) -> bool:
        """Inside ``phase``: nothing an auction reads was written since ``mark``."""
        ...

    def prepare(self, change: ChangeSet) -> None:
        """Before ``phase``: whatever of ``apply(change)`` needs neither the lock nor the
        database (a store may do nothing)."""
        ...


def advance(store: Store, until: float) -> int:
    """Handle everything due up to ``until``; returns the number of instants handled."""
    instants = 0
    due = store.next_due()
    while due is not None and due <= until:
        due = step(store, max(due, store.now))
        instants += 1
    store.advanced(until)
    return instants


def step(store: Store, at: float) -> float | None:
    """Every phase at ``at``, again while something is still due at ``at``; returns
    what ``next_due`` answers after it (nothing changes the store in between: asking
    again cost one more look at every timer per instant)."""
    for _ in range(MAX_STEPS_PER_INSTANT):
        _actions(store, at)
        _reps(store, at)
        with store.phase():
            if store.convergence_due(at):
                snapshot, silent, otto, interval, kept = store.convergence_input(at)
                store.apply(convergence_pass(snapshot, silent, otto, interval, kept))
        auctions_run(store, at)
        store.advanced(at)
        due = store.next_due()
        if due is None or due > at:
            return due
    store.apply(ChangeSet(at, notes=[Note("instant_abandoned", data={
        "reason": f"still due after {MAX_STEPS_PER_INSTANT} steps"})]))
    store.advanced(at)
    return store.next_due()


def auctions_run(store: Store, at: float) -> int:
    """auction.md 1 step 2: auctions back to back while new work waits (carried-over work
    alone never starts one), at most ``MAX_AUCTIONS_PER_RUN``."""
    runs = 0
    while runs < MAX_AUCTIONS_PER_RUN and auction_one(store, at, store.has_new_work):
        runs += 1
    return runs


def auction_one(store: Store, at: float, work_waits: Callable[[], bool]) -> bool:
    """One auction at ``at`` if ``work_waits()``; False when none ran.

    Where the store can (``read_apart``), the round is read and the engine run while other
    writers go on, and the answer is applied only to the state it was computed from;
    if something the round reads was written meanwhile, it is read and run again inside
    the writing phase. An answer is never applied to a state it did not see."""
    change: ChangeSet | None = None
    with store.read_apart() as mark:
        if mark is not None:
            if not work_waits():
                return False
            round_in = store.round_input(at)
    if mark is not None:
        change = auction_round(round_in)
        store.prepare(change)
    with store.phase():
        if change is None or mark is None or not store.unchanged_since(mark):
            if not work_waits():
                return False
            change = auction_round(store.round_input(at))
        store.apply(change)
    return True


def _actions(store: Store, at: float) -> None:
    with store.phase():
        due = store.due_actions(at)
    for marker, name, raw in due:
        with store.phase():
            try:
                change = chaos_change(store, name, chaos_args(name, raw), at)
                outcome = "done"
            except ChaosError as exc:
                # A step the cluster refuses now (draining a failed cell) is recorded with
                # its reason and never retried.
                change, outcome = ChangeSet(at), f"refused: {exc.message}"
            change.notes.append(Note("scenario_step", marker,
                                     data={"action": name, "outcome": outcome}))
            change.steps_done.append(marker)
            store.apply(change)


def _reps(store: Store, at: float) -> None:
    with store.phase():
        rows, copies, apps = store.due_starts(at)
        if rows:
            store.apply(instances_start(rows, copies, apps, at, store.seed))
    with store.phase():
        crashes = store.due_crashes(at)
        if crashes:
            store.apply(instances_crash(crashes, at))
    with store.phase():
        done = store.due_completions(at)
        if done:
            store.apply(tasks_complete(done, at))
    with store.phase():
        draining = store.due_evacuations(at)
    for cell in draining:
        with store.phase():
            on_cell, ordinary, desired, tasks_left = store.evacuation_view(cell.cell_id)
            store.apply(evacuation_sync(cell, on_cell, ordinary, desired, tasks_left, at))
    with store.phase():
        lapsed = store.due_lapses(at)
        if lapsed:
            store.apply(ChangeSet(at, notes=[Note("cell_presence_lost", c.cell_id, c.cell_id)
                                             for c in lapsed],
                                  touched={c.cell_id for c in lapsed}))


def next_instant(candidates: Iterable[float | None]) -> float | None:
    """The smallest of the due instants that exist."""
    # The first of the smallest, as ``min`` of the list of those present returned it.
    return min(cast("Iterator[float]", filter(_present, candidates)), default=None)


_present = partial(is_not, None)
