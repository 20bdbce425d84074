"""The reps' timers and the queue rules, declared once (``auction.sim.timers``,
``auction.sim.where``): bbs.md 2.3 (a start after its delay), bbs.md 3 (crashes),
bbs.md 7 (task completion), bbs.md 6.1 (presence lapse), bbs.md 6.3 (evacuation syncs),
auction.md 1.8 (carried work starts no auction), bbs.md 1.4 (a scale-down's void
requests) and dashboard.md A3 (the copy a replay names).

The memory store keeps its own heaps; the last tests check that what they answer is
what the declarations answer over the same records, through a scenario's run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from auction.bbs import types as core
from auction.bbs.lrp_operations import new_unclaimed
from auction.sim import timers
from auction.sim.lrps import void_requests
from auction.sim.memory import World
from auction.sim.model import DRAINING, FAILED, QueuedWork, SimApp, SimCell, SimTask
from auction.sim.replay_record import named_copy
from auction.sim.round import has_new_work
from auction.sim.scenario import world_from_scenario
from auction.sim.timers import COMPLETION, CRASH, EVACUATION_SYNC, LAPSE, NEW_WORK, START
from auction.sim.where import EQ, GE, IN, Where, holds_all


def claimed(index: int = 0, *, ready_at: float | None = 10.0, **fields: Any) -> core.ActualLRP:
    row = new_unclaimed("web", index, "cf-apps", 0.0)
    return core.evolve(row, **{"state": core.CLAIMED, "cell_id": "c1", "ready_at": ready_at, **fields})


def test_a_condition_holds_as_its_operator_says() -> None:
    row = claimed(3)
    assert Where("state", IN, frozenset({core.CLAIMED, core.RUNNING})).holds(row)
    assert not Where("state", IN, frozenset({core.RUNNING})).holds(row)
    assert Where("index", EQ, 3).holds(row) and not Where("index", EQ, 2).holds(row)
    assert Where("index", GE, 3).holds(row) and not Where("index", GE, 4).holds(row)
    assert not Where("crash_at", GE, 0.0).holds(row)  # no instant is before every bound
    assert holds_all((), row)
    with pytest.raises(ValueError, match="operator"):
        Where("index", "<", 3)
    with pytest.raises(TypeError, match="frozenset"):
        Where("state", IN, [core.CLAIMED])


def test_a_start_is_due_at_its_ready_instant_on_an_ordinary_claimed_row() -> None:
    row = claimed(2)
    assert START.instant(row) == 10.0
    assert START.due(row, 10.0, now=0.0) and not START.due(row, 9.99, now=0.0)
    assert START.due(row, 10.0, now=10.0)  # a start at now is still due (not a lapse)
    assert START.entry(row) == (10.0, "web", 2)
    for other in (replace(row, state=core.RUNNING), replace(row, presence=core.EVACUATING),
                  replace(row, ready_at=None)):
        assert START.instant(other) is None and START.entry(other) is None
    assert START.live(row, 10.0)
    assert not START.live(replace(row, ready_at=12.0), 10.0)  # claimed again since: stale
    assert not START.live(replace(row, state=core.RUNNING), 10.0)
    assert not START.live(None, 10.0)


def test_a_silent_cell_holds_the_reps_timers_and_not_the_others() -> None:
    failed, healthy = SimCell("c1", "z1", state=FAILED), SimCell("c1", "z1")
    for timer in (START, CRASH, COMPLETION):
        assert timer.waits(failed) and not timer.waits(healthy) and not timer.waits(None)
    for timer in (LAPSE, EVACUATION_SYNC, NEW_WORK):
        assert not timer.waits(failed)
    assert holds_all(timers.SILENT, failed) and not holds_all(timers.SILENT, healthy)


def test_a_crash_runs_on_claimed_and_running_rows_of_any_presence() -> None:
    row = claimed(1, crash_at=40.0)
    assert CRASH.entry(row) == (40.0, "web", 1, core.ORDINARY)
    assert CRASH.instant(replace(row, state=core.RUNNING, presence=core.SUSPECT)) == 40.0
    assert CRASH.instant(replace(row, state=core.CRASHED)) is None
    assert CRASH.instant(replace(row, state=core.UNCLAIMED)) is None


def test_a_running_task_completes_at_its_finish() -> None:
    task = core.Task("t1", core.TASK_RUNNING, cell_id="c1", finishes_at=70.0)
    assert COMPLETION.entry(task) == (70.0, "t1")
    assert COMPLETION.due(task, 70.0, now=0.0) and not COMPLETION.due(task, 69.0, now=0.0)
    assert COMPLETION.instant(replace(task, state=core.COMPLETED)) is None


def test_a_lapse_at_or_before_now_stays_past() -> None:
    cell = SimCell("c1", "z1", presence_lost_at=60.0)
    assert LAPSE.due(cell, 60.0, now=50.0)
    assert not LAPSE.due(cell, 59.0, now=50.0)
    assert not LAPSE.due(cell, 60.0, now=60.0) and not LAPSE.due(cell, 70.0, now=65.0)
    assert LAPSE.ahead(60.0, 59.0) and not LAPSE.ahead(60.0, 60.0)
    assert LAPSE.instant(replace(cell, state=FAILED)) == 60.0  # whatever the state
    assert LAPSE.instant(SimCell("c2", "z1")) is None
    assert LAPSE.entry(cell) == (60.0, "c1")


def test_a_draining_cell_syncs_at_once_then_every_ten_seconds() -> None:
    cell = SimCell("c1", "z1", state=DRAINING, evacuating_since=5.0)
    assert EVACUATION_SYNC.instant(cell) == 5.0
    assert EVACUATION_SYNC.instant(replace(cell, evacuation_synced_at=5.0)) == 15.0
    assert EVACUATION_SYNC.instant(replace(cell, presence_lost_at=605.0)) is None
    assert EVACUATION_SYNC.instant(replace(cell, state="healthy")) is None


def test_only_work_not_carried_over_is_new() -> None:
    new = QueuedWork(1, "lrp", "web", 0, queued_at=3.0)
    carried = replace(new, seq=2, carried=True, batch_position=0)
    assert NEW_WORK.entry(new) == (3.0, 1) and NEW_WORK.instant(carried) is None
    assert has_new_work([carried, new]) and not has_new_work([carried])


def test_a_scale_down_voids_the_apps_lrp_requests_from_the_new_count_on() -> None:
    void = void_requests("web", 2)
    items = [QueuedWork(1, "lrp", "web", 1), QueuedWork(2, "lrp", "web", 2),
             QueuedWork(3, "lrp", "web", 7, carried=True), QueuedWork(4, "lrp", "web-2", 5),
             QueuedWork(5, "task", task_guid="web", index=3)]
    assert [q.seq for q in items if holds_all(void, q)] == [2, 3]


def test_a_replay_names_an_evacuating_copy_before_a_suspect_one() -> None:
    assert named_copy({}) is None
    assert named_copy({core.SUSPECT: "c2"}) == (core.SUSPECT, "c2")
    assert named_copy({core.SUSPECT: "c2", core.EVACUATING: "c1"}) == (core.EVACUATING, "c1")
    assert named_copy({core.ORDINARY: "c3"}) is None


# -- the memory store's heaps answer as the declarations do ------------------------------

def declared_next_due(world: World) -> float | None:
    """``World.next_due`` from the declarations over every record the world holds."""
    now, cells = world.now, world.cells

    def ahead(timer: timers.Timer, records: Any, cell: Any = None) -> list[float]:
        instants = []
        for record in records:
            instant = timer.instant(record)
            if (instant is not None and timer.ahead(instant, now)
                    and not (cell and timer.waits(cells.get(record.cell_id)))):
                instants.append(instant)
        return instants

    candidates = (ahead(START, world.rows.values(), cell=True) + ahead(CRASH, world.rows.values(), cell=True)
                  + ahead(COMPLETION, [t.task for t in world.tasks.values()], cell=True)
                  + ahead(EVACUATION_SYNC, cells.values()) + ahead(LAPSE, cells.values())
                  + ahead(NEW_WORK, world.queue.values()))
    candidates += [at for at, _, marker, _, _ in world.timeline if marker not in world.done_steps]
    if world.next_convergence_at is not None:
        candidates.append(world.next_convergence_at)
    return min(candidates, default=None)


def crashing_world() -> World:
    """Seeded crashes, a task, a cell failed and restored (held timers), a drain."""
    world = World(seed=11)
    for i in range(3):
        world.add_cell(SimCell(f"c{i}", "z1", i))
    world.upsert_domain("cf-apps", 0)
    world.desire_lrp(SimApp("web", instances=6, crash_probability=0.7, crash_after_s=9.0))
    world.desire_task(SimTask(core.Task("t1", core.PENDING, domain="cf-apps"), duration_s=50.0))
    world.schedule_action(6.0, "cell_fail", cell="c1")
    world.schedule_action(80.0, "cell_restore", cell="c1")
    world.schedule_action(120.0, "cell_drain", cell="c2")
    return world


def due_now(world: World, at: float) -> dict[str, list[Any]]:
    """What the memory store's ``due_*`` answer at ``at`` (they pop its heaps: a clone)."""
    return {"start": sorted(r.key for r in world.due_starts(at)[0]),
            "crash": sorted(r.key for r in world.due_crashes(at)),
            "completion": sorted(t.task_guid for t in world.due_completions(at)),
            "evacuation": [c.cell_id for c in world.due_evacuations(at)],
            "lapse": [c.cell_id for c in world.due_lapses(at)]}


def declared_due(world: World, at: float) -> dict[str, list[Any]]:
    now, cells = world.now, world.cells

    def reporting(timer: timers.Timer, record: Any) -> bool:
        return timer.due(record, at, now) and not timer.waits(cells.get(record.cell_id))

    return {"start": sorted(r.key for r in world.rows.values() if reporting(START, r)),
            "crash": sorted(r.key for r in world.rows.values() if reporting(CRASH, r)),
            "completion": sorted(g for g, t in world.tasks.items() if reporting(COMPLETION, t.task)),
            "evacuation": sorted(c for c, cell in cells.items() if EVACUATION_SYNC.due(cell, at, now)),
            "lapse": sorted(c for c, cell in cells.items() if LAPSE.due(cell, at, now))}


@pytest.mark.parametrize("name", ["az-loss", "seed-example", "cold-start", "crashing"])
def test_the_memory_stores_next_due_is_the_declared_one(name: str) -> None:
    world = crashing_world() if name == "crashing" else world_from_scenario(name)
    checked = 0
    for until in range(0, 400, 7):
        world.run_until(float(until))
        assert world.next_due() == declared_next_due(world), f"at {until}"
        assert due_now(world.clone(), world.now + 20) == declared_due(world, world.now + 20), f"at {until}"
        checked += 1
    assert checked > 50


def test_the_memory_store_holds_a_silent_cells_start_as_declared() -> None:
    """A claimed instance whose cell fails before its start: no start is due until the
    cell reports again (``Timer.waits``)."""
    world = World(seed=2)
    world.add_cell(SimCell("c1", "z1"))
    world.upsert_domain("cf-apps", 0)
    world.desire_lrp(SimApp("web", instances=1, start_delay_s=5.0))
    world.run_until(1.0)
    (row,) = world.rows.values()
    assert row.state == core.CLAIMED and START.instant(row) == 5.0
    world.cell_fail("c1")
    assert world.next_due() == declared_next_due(world) != 5.0
    assert world.due_starts(5.0)[0] == []
