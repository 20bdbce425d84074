"""The in-memory cluster follows the same rules as the database shell (bbs.md 2-7, auction.md 1)."""

from __future__ import annotations

import pytest

from auction.bbs import types as core
from auction.sim.memory import SimApp, SimCell, SimTask, World, WorldError
from auction.sim.scenario import world_from_scenario


def small_world(**app: object) -> World:
    world = World(seed=5)
    for zone in ("z1", "z2"):
        for i in range(2):
            world.add_cell(SimCell(f"{zone}-c{i}", zone, i))
    world.upsert_domain("cf-apps", 0)
    world.desire_lrp(SimApp("web", instances=2, memory_mb=512, **app))  # type: ignore[arg-type]
    return world


def test_seed_example_auction_order_and_start_after_delay() -> None:
    """auction.md 2 (A2's order) and bbs.md 2.3 Start: CLAIMED, then RUNNING after the delay."""
    world = world_from_scenario("seed-example")
    world.run_until(1)
    assert world.auctions[0].order == ["lrp-b.0", "lrp-a.0", "task-c", "task-d", "lrp-b.1", "lrp-a.1", "lrp-a.2"]
    assert {r.state for r in world.rows.values()} == {core.CLAIMED}
    world.run_until(3)
    rows = list(world.rows.values())
    assert {r.state for r in rows} == {core.RUNNING}
    assert all(r.since == 3.0 and r.address for r in rows)


def test_tasks_complete_then_convergence_deletes_them() -> None:
    """bbs.md 7: RUNNING → COMPLETED after its run time; gone 120 s after completion."""
    world = world_from_scenario("seed-example")
    world.run_until(91)
    task = world.tasks["task-d"].task
    assert (task.state, task.failed, task.first_completed_at) == (core.COMPLETED, False, 90.0)
    world.run_until(240)
    assert "task-d" not in world.tasks


def test_convergence_every_interval() -> None:
    """bbs.md 4.1: timer only, first pass at 30 s, then every 30 s."""
    world = world_from_scenario("seed-example")
    world.run_until(95)
    assert [at for at, _ in world.passes] == [30.0, 60.0, 90.0]
    assert world.passes[-1][1]["LRPsRunning"] == 5


def test_crash_back_off() -> None:
    """bbs.md 3 / dashboard.md C3: 1st and 2nd crash restart at once; the 3rd waits."""
    world = small_world(start_delay_s=1.0)
    world.run_until(5)
    for expected_state in (core.UNCLAIMED, core.UNCLAIMED):
        world.crash_instance("web", 0)
        assert world.rows[("web", 0, core.ORDINARY)].state == expected_state
        world.run_for(2)
        assert world.rows[("web", 0, core.ORDINARY)].state == core.RUNNING
    world.crash_instance("web", 0)
    row = world.rows[("web", 0, core.ORDINARY)]
    assert (row.state, row.crash_count) == (core.CRASHED, 3)
    world.run_for(20)
    assert world.rows[("web", 0, core.ORDINARY)].state == core.CRASHED


def test_seeded_crashes_replay() -> None:
    """bbs.md 3 with the simulator's crash odds: same seed, same crashes."""
    def crashes(seed: int) -> int:
        world = small_world(crash_probability=0.5, crash_after_s=5.0)
        world.seed = seed
        world.run_until(300)
        return world.counters["CrashesReported"]

    assert crashes(1) == crashes(1) > 0


def test_crash_draw_is_spread_evenly_and_fixed_by_the_instance() -> None:
    """bbs.md 1.1, the simulator's crash odds: each start draws once, by its identity,
    so about ``crash_probability`` of the starts crash, whatever order they start in."""
    from auction.sim.reps import crash_time

    starts = [(f"app-{a:04d}", i, tag) for a in range(2000) for i in range(5) for tag in (0, 1)]

    def crashing(order: list[tuple[str, int, int]], probability: float) -> set[tuple[str, int, int]]:
        return {s for s in order if crash_time(7, *s, 10.0, probability, 60.0) is not None}

    tenth = crashing(starts, 0.1)
    assert 0.09 < len(tenth) / len(starts) < 0.11
    assert crashing(list(reversed(starts)), 0.1) == tenth
    assert crashing(starts, 0.5) > tenth  # the same draws, a higher bar
    assert crashing(starts, 0.0) == set() and len(crashing(starts, 1.0)) == len(starts)
    assert crash_time(7, "app-0001", 0, 0, 10.0, 1.0, 60.0) == 70.0
    other_seed = {s for s in starts if crash_time(8, *s, 10.0, 0.1, 60.0) is not None}
    assert other_seed != tenth and 0.09 < len(other_seed) / len(starts) < 0.11


def test_failed_cell_tasks_fail_and_events_are_held() -> None:
    """bbs.md 6.2, 7 / C3: a failed cell's task fails at the next pass; its rep reports nothing."""
    world = world_from_scenario("seed-example")
    world.run_until(1)
    cell = world.tasks["task-c"].task.cell_id
    world.cell_fail(cell)
    world.run_until(31)
    task = world.tasks["task-c"].task
    assert task.state == core.COMPLETED and task.failed
    assert task.failure_reason == "cell disappeared before completion"


def test_drain_evacuates_running_instances() -> None:
    """bbs.md 6.3 / C3: EVACUATING copies stay until the replacements run; then the cell leaves."""
    world = small_world(start_delay_s=2.0)
    world.run_until(5)
    victim = world.rows[("web", 0, core.ORDINARY)].cell_id
    world.cell_drain(victim)
    evac = world.rows.get(("web", 0, core.EVACUATING))
    assert evac is not None and evac.cell_id == victim and evac.state == core.RUNNING
    world.run_for(1)
    replacement = world.rows[("web", 0, core.ORDINARY)]
    assert replacement.state == core.CLAIMED and replacement.cell_id != victim
    world.run_for(2)
    assert ("web", 0, core.EVACUATING) not in world.rows
    world.run_for(10)
    assert world.cells[victim].presence_lost_at is not None


def test_refused_requests_name_the_field() -> None:
    """bbs.md 1.2: the BBS's own wording for a bad desire; duplicates are refused."""
    world = small_world()
    with pytest.raises(WorldError, match="already exists"):
        world.desire_lrp(SimApp("web"))
    with pytest.raises(WorldError, match="Invalid field: domain"):
        world.desire_lrp(SimApp("other", domain=""))
    with pytest.raises(WorldError, match="Invalid field: memory_mb"):
        world.add_cell(SimCell("z9-c0", "z9", 0, memory_mb=0))
    with pytest.raises(WorldError, match="unknown action"):
        world.schedule_action(1, "explode")
    with pytest.raises(WorldError, match="no instance web.7"):
        world.crash_instance("web", 7)
    task = SimTask(core.Task("t1", core.PENDING, domain="cf-apps"))
    world.desire_task(task)
    with pytest.raises(WorldError, match="already exists"):
        world.desire_task(SimTask(core.Task("t1", core.PENDING, domain="cf-apps")))


def test_evacuation_plan_row_by_row() -> None:
    """bbs.md 6.3: CLAIMED is unclaimed; RUNNING is copied EVACUATING then unclaimed; an
    EVACUATING copy goes once its replacement runs (or crashed, or is undesired); a
    starting SUSPECT copy goes."""
    from auction.sim.reps import evacuation_over, evacuation_plan

    rows = [
        core.ActualLRP("a", 0, core.CLAIMED, cell_id="c"),
        core.ActualLRP("a", 1, core.RUNNING, cell_id="c"),
        core.ActualLRP("b", 0, core.RUNNING, core.EVACUATING, cell_id="c"),
        core.ActualLRP("b", 1, core.RUNNING, core.EVACUATING, cell_id="c"),
        core.ActualLRP("gone", 0, core.RUNNING, core.EVACUATING, cell_id="c"),
        core.ActualLRP("s", 0, core.CLAIMED, core.SUSPECT, cell_id="c"),
    ]
    state = {("b", 0): core.RUNNING, ("b", 1): core.CLAIMED, ("gone", 0): core.CLAIMED}
    plan = evacuation_plan(rows, state, {"a", "b", "s"})
    assert [core.lrp_id(r.key) for r in plan.unclaim] == ["a.0", "a.1"]
    assert [core.lrp_id(r.key) for r in plan.evacuate] == ["a.1"]
    assert sorted(core.lrp_id(r.key) for r in plan.delete) == ["b.0", "gone.0", "s.0"]
    assert plan.restart == [("a", 0), ("a", 1)] and plan.removed == 4
    assert evacuation_over(100, 0, containers_left=True) == (False, False)
    assert evacuation_over(100, 0, containers_left=False) == (True, False)
    assert evacuation_over(600, 0, containers_left=True) == (True, True)


def test_world_follows_the_sim_clock() -> None:
    """bbs.md 0 / dashboard.md C1: the world runs on the one sim clock (pause, speed, step)."""
    from auction.sim.clock import ClockState

    world = world_from_scenario("seed-example")
    clock = ClockState(anchor_sim=0.0, anchor_wall=1000.0, speed=2.0)
    world.follow(clock, wall=1001.0)  # 1 wall s at 2x
    assert world.now == 2.0 and {r.state for r in world.rows.values()} == {core.CLAIMED}
    clock = clock.paused_at(1001.0).stepped(1.0, 1002.0)
    world.follow(clock, wall=5000.0)  # paused: wall time does not move sim time
    assert world.now == 3.0 and {r.state for r in world.rows.values()} == {core.RUNNING}


def test_a_rep_reserves_memory_plus_proxy_and_nothing_for_0_mb_auction_md_7() -> None:
    """auction.md 7 (cell bookkeeping, auction.sim.loads): a claimed LRP takes its memory
    plus the cell's proxy overhead; a 0 MB LRP takes 0 MB; disk and a container either way."""
    world = World(seed=1)
    world.add_cell(SimCell("c1", "z1", 0, memory_mb=1000, disk_mb=1000, containers=10,
                           proxy_memory_mb=32))
    world.upsert_domain("cf-apps", 0)
    world.desire_lrp(SimApp("web", instances=1, memory_mb=256, disk_mb=100))
    world.desire_lrp(SimApp("zero", instances=1, memory_mb=0, disk_mb=50))
    world.run_until(1)
    (state,) = world.cell_states()
    assert state.available.memory_mb == 1000 - (256 + 32)
    assert (state.available.disk_mb, state.available.containers) == (850, 8)


def test_a_queued_item_numbered_keeps_every_field_auction_md_1_4() -> None:
    """auction.md 1.4: the world numbers each arrival; every other field of the request
    stays as it was (a field added to QueuedWork and forgotten here fails this)."""
    from dataclasses import fields, replace

    from auction.sim.model import QueuedWork

    values = {f.name: (f"v-{f.name}" if f.type in ("str", str) else 7 if f.type in ("int", int)
                       else 2.5 if f.type in ("float", float) else True) for f in fields(QueuedWork)}
    item = QueuedWork(**values)
    assert item.numbered(99) == replace(item, seq=99)
    assert {f.name for f in fields(QueuedWork) if getattr(item.numbered(99), f.name) != values[f.name]} == {"seq"}
