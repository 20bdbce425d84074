"""The shell's runner of after-commit intents (``auction.sim.changes``).

A change set's intents say what must happen once the change is kept: the auctioneer
asked to run, Otto's open auction fed again, completed tasks' callbacks posted, open
pages told what changed. ``intents_after_commit`` is called inside the transaction that
keeps the change and runs each intent after that transaction commits, never before and
never when it rolls back: a worker never looks for work that is not there yet, and a
page never shows a change that was undone (dashboard.md L3).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from django.db import transaction

from auction.live.publish import cells_changed, clock_changed, mark_dirty_after_commit
from auction.services.callbacks import task_callbacks_request
from auction.services.otto import otto_refeed
from auction.services.work import trigger_auction_after_commit
from auction.sim.changes import (
    AuctionWanted,
    CallbacksDue,
    CellsChanged,
    Intent,
    LiveChanged,
    OttoRefeed,
    WorldMoved,
)


def intents_after_commit(intents: Iterable[Intent]) -> None:
    """Run ``intents`` once the current transaction commits (each kind once)."""
    cells: dict[str, None] | None = None
    elements: dict[str, None] = {}
    callbacks: dict[str, None] = {}
    refeed_at: float | None = None
    auction = world = False
    for intent in intents:
        if isinstance(intent, CellsChanged):
            cells = (cells or {}) | dict.fromkeys(intent.cells)
        elif isinstance(intent, LiveChanged):
            elements.update(dict.fromkeys(intent.elements))
        elif isinstance(intent, CallbacksDue):
            callbacks.update(dict.fromkeys(intent.task_guids))
        elif isinstance(intent, OttoRefeed):
            refeed_at = intent.at if refeed_at is None else max(refeed_at, intent.at)
        elif isinstance(intent, AuctionWanted):
            auction = True
        elif isinstance(intent, WorldMoved):
            world = True
        else:  # pragma: no cover - a new kind of intent must be run here
            raise TypeError(f"no runner for intent {intent!r}")
    # The transaction's marks go out as one after its commit (``mark_dirty_after_commit``).
    keys = (*(cells_changed(sorted(cells)) if cells is not None else ()), *elements,
            *(("epoch",) if world else ()))
    if keys:
        mark_dirty_after_commit(*keys)
    if world:
        # The Otto processes look again too (otto.md 11): a scenario may have been loaded
        # while the clock's own messages were suppressed (``simulate``).
        transaction.on_commit(clock_changed)
    if refeed_at is not None:
        transaction.on_commit(partial(otto_refeed, refeed_at))
    if callbacks:
        task_callbacks_request(callbacks)
    if auction:
        trigger_auction_after_commit()
