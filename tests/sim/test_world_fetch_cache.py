"""The in-memory world keeps each cell's load and fetched state between auctions; what an
auction reads is always what the rep would report now (auction.md 1.3, ``sim.loads``)."""

from __future__ import annotations

from auction.bbs import types as core
from auction.sim.bench import build, main
from auction.sim.loads import cell_loads, cell_state
from auction.sim.memory import SimTask, World


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
