"""The database store's filters are the core's declarations (``auction/services/where.py``):
over the same records, each timer's query answers what ``auction.sim.timers`` answers of
the records read back (bbs.md 2.3 starts, bbs.md 3 crashes, bbs.md 7 completions,
bbs.md 6.1 lapses, auction.md 1.8 new work), a scale-down's queue filter picks what
``void_requests`` picks (bbs.md 1.4), and both stores name the same copy in a replay
(dashboard.md A3).
"""

from __future__ import annotations

from itertools import product
from typing import Any

import pytest

from auction.bbs import types as core
from auction.bbs.changes import RowCreate
from auction.bbs.lrp_operations import new_unclaimed
from auction.models import ActualLRP, Cell, DesiredLRP, PendingWork, Task, Zone
from auction.selectors.cells import sim_cell
from auction.services import where
from auction.services.store import DbStore, _copies, queued
from auction.sim import timers
from auction.sim.changes import ChangeSet
from auction.sim.lrps import void_requests
from auction.sim.memory import World
from auction.sim.model import SimCell
from auction.sim.where import holds_all

pytestmark = pytest.mark.django_db

NOW = 10.0
INSTANTS = (None, 5.0, 10.0, 12.0, 20.0)
STATES = (core.UNCLAIMED, core.CLAIMED, core.RUNNING, core.CRASHED)
PRESENCES = (core.ORDINARY, core.SUSPECT, core.EVACUATING)
CELLS = {"ok": "healthy", "down": "failed", "drain": "draining"}


@pytest.fixture
def records() -> dict[str, list[Any]]:
    """Every combination of state, presence, cell and instants the timers look at."""
    zone = Zone.objects.create(name="z1")
    for n, (name, state) in enumerate(CELLS.items()):
        Cell.objects.create(cell_id=name, zone=zone, index=n, state=state, presence_lost_at=INSTANTS[n + 1])
    DesiredLRP.objects.create(process_guid="web")
    index = 0
    for state, presence, cell, ready, crash in product(STATES, PRESENCES, CELLS, INSTANTS, INSTANTS[:3]):
        ActualLRP.objects.create(desired_id="web", index=index, presence=presence, state=state, domain="d",
                                 cell_id=cell, ready_at=ready, crash_at=crash)
        index += 1
    for n, (state, cell, at) in enumerate(product((core.PENDING, core.TASK_RUNNING, core.COMPLETED),
                                                  CELLS, INSTANTS)):
        Task.objects.create(task_guid=f"t{n}", state=state, cell_id=cell, finishes_at=at)
    for n, (carried, at) in enumerate(product((False, True), (1.0, 5.0, 30.0))):
        PendingWork.objects.create(kind="lrp", ident=f"web.{n}", process_guid="web", index=n,
                                   queued_at=at, carried=carried)
    PendingWork.objects.create(kind="task", ident="t0", task_guid="t0", queued_at=2.0)
    store = DbStore(trigger_auctions=False)
    return {timers.ACTUAL: store._rows(ActualLRP.objects.all()),
            timers.TASK: [t.task for t in store._tasks(Task.objects.all())],
            timers.CELL: [sim_cell(c) for c in Cell.objects.select_related("zone")],
            timers.QUEUE: [queued(q) for q in PendingWork.objects.all()]}


def ident(record: Any) -> Any:
    for name in ("key", "seq", "task_guid", "cell_id"):
        if hasattr(record, name) and not (name == "cell_id" and hasattr(record, "process_guid")):
            return getattr(record, name)
    raise AssertionError(record)


def model_ident(timer: timers.Timer, value: dict[str, Any]) -> Any:
    if timer.record == timers.ACTUAL:
        return (value["desired_id"], value["index"], value["presence"])
    return {timers.TASK: value.get("task_guid"), timers.CELL: value.get("cell_id"),
            timers.QUEUE: value.get("id")}[timer.record]


@pytest.mark.parametrize("timer", [timers.START, timers.CRASH, timers.COMPLETION, timers.LAPSE,
                                   timers.NEW_WORK], ids=lambda t: t.kind)
def test_each_timers_query_answers_as_its_declaration(records: dict[str, list[Any]], timer: timers.Timer) -> None:
    silent = where.silent_cells()
    assert silent == ["down"]
    cells = {c.cell_id: c for c in records[timers.CELL]}
    ours = records[timer.record]

    def reporting(record: Any) -> bool:
        return not timer.waits(cells.get(getattr(record, "cell_id", "")))

    for at in (NOW, 12.0, 19.0, 20.0, 25.0):
        query = where.timer_due(timer, at, NOW, silent)
        got = sorted(model_ident(timer, v) for v in query.values())
        declared = sorted(ident(r) for r in ours if timer.due(r, at, NOW) and reporting(r))
        assert got == declared, (timer.kind, at)
    instants = [i for r in ours if (i := timer.instant(r)) is not None and timer.ahead(i, NOW) and reporting(r)]
    assert where.timer_next(timer, NOW, silent) == min(instants, default=None)
    assert any(timer.instant(r) is not None for r in ours), "the records test nothing"


def test_the_evacuation_sync_query_finds_every_cell_it_runs_on(records: dict[str, list[Any]]) -> None:
    found = sorted(c.cell_id for c in map(sim_cell, where.timer_records(timers.EVACUATION_SYNC)))
    assert found == sorted(c.cell_id for c in records[timers.CELL] if timers.EVACUATION_SYNC.applies(c))
    assert found == ["drain"]
    with pytest.raises(ValueError, match="computed"):
        where.timer_due(timers.EVACUATION_SYNC, 10.0, NOW)


@pytest.mark.parametrize("keep", [0, 2, 3, 6, 7])
def test_a_scale_downs_queue_filter_picks_what_the_rule_picks(records: dict[str, list[Any]], keep: int) -> None:
    void = void_requests("web", keep)
    got = sorted(PendingWork.objects.filter(where.where_q(void)).values_list("id", flat=True))
    assert got == sorted(q.seq for q in records[timers.QUEUE] if holds_all(void, q))


def test_both_stores_name_the_same_copy_in_a_replay() -> None:
    """An instance with a SUSPECT and an EVACUATING copy, and one with a SUSPECT only."""
    rows = [new_unclaimed("web", 0, "d", 0.0)]
    for index, presence, cell in ((0, core.SUSPECT, "lost"), (0, core.EVACUATING, "drain"),
                                  (1, core.SUSPECT, "lost")):
        rows.append(core.evolve(new_unclaimed("web", index, "d", 0.0), presence=presence,
                                state=core.RUNNING, cell_id=cell))
    change = ChangeSet(0.0, cells_put=[SimCell("lost", "z1"), SimCell("drain", "z1", 1)],
                      lrp_ops=[RowCreate(r) for r in rows])
    world = World()
    world.apply(change)
    DbStore(trigger_auctions=False).apply(change)
    keys = {("web", 0), ("web", 1), ("web", 2)}
    assert _copies(keys) == world._copies(keys) == {("web", 0): (core.EVACUATING, "drain"),
                                                     ("web", 1): (core.SUSPECT, "lost")}
