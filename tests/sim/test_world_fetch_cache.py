"""The in-memory world keeps each cell's load and fetched state between auctions; what an
auction reads is always what the rep would report now (auction.md 1.3, ``sim.loads``)."""

from __future__ import annotations

from dataclasses import replace

from auction.bbs import types as core
from auction.sim.bench import build, main
from auction.sim.loads import answering, cell_loads, cell_state
from auction.sim.lrps import lrp_remove
from auction.sim.memory import FAILED, HEALTHY, SimApp, SimTask, World


def fresh_states(world: World) -> dict[str, object]:
    """Every cell's state counted from scratch from the rows and tasks."""
    rows = [(r.cell_id, r.process_guid, r.state) for r in world.rows.values()]
    tasks = [(t.task.cell_id, g, t.memory_mb, t.disk_mb) for g, t in world.tasks.items()
             if t.task.state == core.TASK_RUNNING]
    loads = cell_loads(list(world.cells), world.proxy, rows, world.sizes, tasks)
    return {c: cell_state(world.cells[c], loads[c]) for c in world.cells}


def test_kept_states_match_a_fresh_count_through_failure_crash_and_scale_auction_md_1_3() -> None:
    """Cold start, crashes, a zone failure and restore, a scale and a task: after each step
    the kept states equal states counted anew (the counted lrps included)."""
    world = build(12, seed=3, per_cell=6)
    world.desire_task(SimTask(core.Task("t-1", core.PENDING, domain="cf-apps"), memory_mb=64, duration_s=50))
    for until in (1, 5, 30, 61, 125, 130, 200, 301, 320, 400):
        world.run_until(until)
        if until == 200:
            world.scale("app-00001", 7)
        kept = world._states()
        assert kept == fresh_states(world), until
        assert {c: dict(s.lrp_counts or {}) for c, s in kept.items()} == {
            c: {g: s.lrps.count(g) for g in set(s.lrps)} for c, s in kept.items()}


def test_bench_real_size_mode_and_density_flag(capsys) -> None:  # type: ignore[no-untyped-def]
    """``--per-cell`` packs more instances per cell (figures only, no timed assertion)."""
    main(["--cells", "6", "--per-cell", "30", "--sim-seconds", "20"])
    out = capsys.readouterr().out
    assert "30 instances per cell" in out
    assert build(6, per_cell=30).cells["cell-0000"].memory_mb == 8192 * 3


def test_kept_fetch_follows_presence_lapses_and_put_cells_auction_md_1_3() -> None:
    """The cells that answer are kept between auctions: a presence that lapses, or a cell
    put (failed, back), changes them at once, as a fetch counted anew sees it."""
    world = build(6, seed=1, per_cell=2)
    world.run_until(10)
    lapsing = replace(world.cells["cell-0001"], presence_lost_at=20.0)
    world._cell_put(lapsing)
    for at in (10.0, 19.5, 20.0, 25.0):
        assert world._fetched(at) == answering(world.cells.values(), at), at
    assert world.cells["cell-0001"] not in world._fetched(25.0)
    world._cell_put(replace(world.cells["cell-0002"], state=FAILED))
    assert world._fetched(26.0) == answering(world.cells.values(), 26.0)
    assert world.cells["cell-0002"] not in world._fetched(26.0)
    world._cell_put(replace(world.cells["cell-0002"], state=HEALTHY))
    assert world.cells["cell-0002"] in world._fetched(27.0)
    assert world.cells["cell-0001"] not in world._fetched(27.0)


def test_kept_desired_lrps_follow_scale_desire_and_removal_bbs_md_4_2() -> None:
    """The convergence pass reads the DesiredLRPs as the apps are now, though the world
    keeps them between passes: a scale, a new app and a removed one show at the next pass."""
    world = build(6, seed=2, per_cell=3)
    world.run_until(40)

    def fresh() -> list[core.DesiredLRP]:
        return [core.DesiredLRP(a.process_guid, a.domain, a.instances)
                for a in sorted(world.apps.values(), key=lambda a: a.process_guid)]

    assert world.convergence_input(world.now)[0].desired == fresh()
    world.scale("app-00001", 9)
    world.run_until(45)
    desired = world.convergence_input(world.now)[0].desired
    assert desired == fresh()
    assert next(d.instances for d in desired if d.process_guid == "app-00001") == 9
    world.desire_lrp(SimApp("app-new", instances=2))
    world.apply(lrp_remove(world.apps["app-00002"], world.app_rows("app-00002"),
                           lambda cell_id: True, world.now))
    world.run_until(50)
    assert world.convergence_input(world.now)[0].desired == fresh()
