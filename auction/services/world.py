"""Structural changes of the live cluster: every open view starts again from the truth.

A change a frame cannot express (a cell or zone added, removed or edited, a scenario
loaded or reset, a foundation imported) moves the world epoch in the same transaction;
after commit the live layer sends the new epoch to every page, and a page whose epoch
differs from the one it was rendered with loads itself again (docs/architecture.md
"The live layer"). A page that was disconnected meanwhile finds the new epoch in its
reconnect snapshot.
"""

from __future__ import annotations

import time

from django.db.models import F

from auction.models import (
    ActualLRP,
    BBSEvent,
    Cell,
    Counter,
    DesiredLRP,
    Domain,
    PendingWork,
    SimClock,
    Task,
    Zone,
)
from auction.services.intents import intents_after_commit
from auction.sim.changes import WorldMoved


def world_changed() -> int:
    """Move the world epoch (inside the caller's transaction); returns the new epoch."""
    SimClock.objects.get_or_create(pk=1, defaults={"anchor_wall": time.time()})
    SimClock.objects.filter(pk=1).update(world_epoch=F("world_epoch") + 1)
    intents_after_commit([WorldMoved()])
    return SimClock.objects.filter(pk=1).values_list("world_epoch", flat=True).get()


def cluster_empty() -> None:
    """Remove the whole cluster (inside the caller's transaction) before another is put in
    its place: a scenario loaded, a foundation imported. Its event log goes with it: its
    instants are another world's; so do its queued start requests."""
    for model in (ActualLRP, DesiredLRP, Task, Domain, Cell, Zone, BBSEvent, PendingWork):
        model.objects.all().delete()
    # The metrics' counters count this world (dashboard.md M1): they start again with it.
    Counter.objects.all().delete()
