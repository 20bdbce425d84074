"""The check mode of the memory store (``auction.sim.memory.check``, bbs.md 4.5 for the
pass it reruns): each cache's invalidation broken on purpose fails the check at a write
that skipped it, naming the index; and the plain-apps shortcut of bbs.md 4.2 restarts a
repeatedly crashing instance (bbs.md 4.2 step 10) as a full read does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from auction.bbs import types as core
from auction.engine import AuctionConfig
from auction.engine.state import CellColumns
from auction.sim import loads as loads_rules
from auction.sim.changes import ChangeSet
from auction.sim.memory import SimApp, SimCell, SimTask, World
from auction.sim.memory import rows as rows_module
from auction.sim.memory.check import CHECK_SETTING, DerivedMismatch, checking
from auction.sim.memory.fetch import Fetch
from auction.sim.memory.rows import RowTable
from auction.sim.memory.timers import TimerHeaps


@dataclass
class Applies:
    """Which apply is running (numbered from 1) and the applies that carried a skipped
    invalidation (one made outside an apply is carried by the next)."""

    started: int = 0
    inside: bool = False
    skipped: set[int] = field(default_factory=set)
    failed: int | None = None  # the apply that raised; None: a read before the next one

    def failing(self) -> int:
        return self.started + 1 if self.failed is None else self.failed

    def skip(self) -> None:
        self.skipped.add(self.started if self.inside else self.started + 1)


@pytest.fixture
def applies(monkeypatch: pytest.MonkeyPatch) -> Applies:
    monkeypatch.setenv(CHECK_SETTING, "1")
    seen = Applies()
    real = World.apply

    def counted(self: World, change: ChangeSet) -> None:
        seen.started += 1
        seen.inside = True
        try:
            real(self, change)
        except DerivedMismatch:
            seen.failed = seen.started
            raise
        finally:
            seen.inside = False

    monkeypatch.setattr(World, "apply", counted)
    return seen


def busy_world() -> World:
    """Cells failing, draining and lapsing, apps crashing and scaled, tasks, a domain
    that expires, and a proxy: every index of the world is written (``run``: an app and
    a cell resized too)."""
    world = World(seed=4, config=AuctionConfig(seed=4))
    for n in range(12):
        world.add_cell(SimCell(f"cell-{n:03d}", ("z1", "z2", "z3")[n % 3], n // 3, memory_mb=8192,
                               disk_mb=32768, containers=40, proxy_memory_mb=32 if n == 4 else 0))
    world.upsert_domain("cf-apps", 0)
    world.upsert_domain("short", 200)
    for a in range(12):
        world.desire_lrp(SimApp(f"app-{a:03d}", domain="short" if a == 7 else "cf-apps",
                                instances=1 + a % 4, memory_mb=(128, 256, 512)[a % 3],
                                start_delay_s=1 + a % 3, crash_probability=1.0 if a % 5 == 0 else 0.0,
                                crash_after_s=40))
    for t in range(3):
        world.desire_task(SimTask(core.Task(f"task-{t}", core.PENDING, domain="cf-apps"), memory_mb=64,
                                  duration_s=40 + 30 * t))
    world.schedule_action(100, "cell_fail", cell="cell-003")
    world.schedule_action(190, "cell_restore", cell="cell-003")
    world.schedule_action(220, "cell_drain", cell="cell-005")
    world.schedule_action(280, "scale", process_guid="app-002", instances=6)
    world.schedule_action(330, "zone_fail", zone="z2")
    world.schedule_action(420, "zone_restore", zone="z2")
    return world


def run(world: World) -> None:
    world.run_until(250)
    app = world.apps["app-001"]  # a new size: its instances are accounted anew
    cell = world.cells["cell-004"]  # a new proxy: its instances are accounted anew
    world.apply(ChangeSet(world.now, apps_put=[replace(app, memory_mb=app.memory_mb * 2)],
                          cells_put=[replace(cell, proxy_memory_mb=64)]))
    world.desire_task(SimTask(core.Task("task-late", core.PENDING, domain="cf-apps"), duration_s=30))
    world.run_until(700)


class Deaf(set[Any]):
    """A set of marks that forgets what it is told (an invalidation broken)."""

    def __init__(self, seen: Applies) -> None:
        super().__init__()
        self.seen = seen

    def add(self, item: Any) -> None:
        if item not in self:
            self.seen.skip()

    def update(self, *items: Any) -> None:
        if any(items):
            self.seen.skip()

    def __ior__(self, other: Any) -> Deaf:
        if other:
            self.seen.skip()
        return self


def _no_op(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, seen: Applies,
           when: Callable[..., bool] = lambda *args: True) -> None:
    def broken(*args: Any) -> None:
        if when(*args):
            seen.skip()

    monkeypatch.setattr(owner, name, broken)


def _holds(self: RowTable, row: core.ActualLRP, sign: int) -> bool:
    return loads_rules.holds_container(row.state, row.cell_id)


def _listing_ignores_writes(monkeypatch: pytest.MonkeyPatch, seen: Applies) -> None:
    real = RowTable.listing_holds

    def broken(self: RowTable) -> bool:
        if not real(self) and self._listed is not None:
            seen.skip()
        return self._listed is not None

    monkeypatch.setattr(RowTable, "listing_holds", broken)


def _columns_ignore_changes(monkeypatch: pytest.MonkeyPatch, seen: Applies) -> None:
    real = CellColumns.refresh

    def broken(self: CellColumns, cells: Any) -> list[int]:
        cells = list(cells)
        if len(cells) != len(self.cells) or any(a.cell_id != b.cell_id for a, b in zip(cells, self.cells, strict=True)):
            return real(self, cells)
        if any(a is not b for a, b in zip(cells, self.cells, strict=True)):
            seen.skip()
        self.cells = cells
        return []

    monkeypatch.setattr(CellColumns, "refresh", broken)


def _heaps_miss_changes(monkeypatch: pytest.MonkeyPatch, seen: Applies) -> None:
    real = CellColumns.refresh

    def broken(self: CellColumns, cells: Any) -> list[int]:
        dirty = None if self.dirty is None else set(self.dirty)
        changed = real(self, cells)
        if dirty is not None and self.dirty is not None and self.dirty - dirty:
            seen.skip()
            self.dirty = dirty  # the kept heaps are not told which cells changed
        return changed

    monkeypatch.setattr(CellColumns, "refresh", broken)


# (cache, how its invalidation is broken, the index the check names)
BREAKAGES: list[tuple[str, Callable[[pytest.MonkeyPatch, World, Applies], None], tuple[str, ...]]] = [
    ("each cell's load (RowTable._account)",
     lambda mp, w, s: _no_op(mp, RowTable, "_account", s, _holds), ("rows.loads",)),
    ("rows by guid and by cell (_index_key)",
     lambda mp, w, s: _no_op(mp, rows_module, "_index_key", s, lambda index, name, key, add: bool(name)),
     ("rows.by_guid", "rows.by_cell")),
    ("an app's size (RowTable.resize)",
     lambda mp, w, s: _no_op(mp, RowTable, "resize", s), ("sizes",)),
    ("a cell's proxy (RowTable.reproxy)",
     lambda mp, w, s: _no_op(mp, RowTable, "reproxy", s), ("proxy",)),
    ("start and crash timers (TimerHeaps.row_written)",
     lambda mp, w, s: _no_op(mp, TimerHeaps, "row_written", s,
                             lambda self, row: row.ready_at is not None or row.crash_at is not None),
     ("timers (live timer",)),
    ("task completions (TimerHeaps.task_written)",
     lambda mp, w, s: _no_op(mp, TimerHeaps, "task_written", s, lambda self, task: task.finishes_at is not None),
     ("timers (live timer",)),
    ("presence lapses (TimerHeaps.lapse_at)",
     lambda mp, w, s: _no_op(mp, TimerHeaps, "lapse_at", s), ("timers (live timer",)),
    ("new work by instant (TimerHeaps.new_work_add)",
     lambda mp, w, s: _no_op(mp, TimerHeaps, "new_work_add", s), ("timers.new_work",)),
    ("timers held for a silent cell (TimerHeaps.release)",
     lambda mp, w, s: _no_op(mp, TimerHeaps, "release", s, lambda self, cell_id: bool(self.held.get(cell_id))),
     ("timers.held",)),
    ("draining cells", lambda mp, w, s: setattr(w, "draining", Deaf(s)), ("draining",)),
    ("the key-order listing (RowTable._changed)",
     lambda mp, w, s: setattr(w.rows, "_changed", Deaf(s)), ("rows.listing",)),
    ("loads copied for the fetch (RowTable.stale)",
     lambda mp, w, s: setattr(w.rows, "stale", Deaf(s)), ("fetched_loads", "fetched_states")),
    ("cells to fetch again on a task change (Fetch._tasks_changed)",
     lambda mp, w, s: _no_op(mp, Fetch, "_tasks_changed", s), ("fetched_loads",)),
    ("fetch order and answering cells on a cell put (Fetch._cell_changed)",
     lambda mp, w, s: _no_op(mp, Fetch, "_cell_changed", s),
     ("fetch_order", "fetched_loads", "fetched_states", "fetched (the answering cells)")),
    ("states in fetch order (World.restated)",
     lambda mp, w, s: setattr(w, "restated", Deaf(s)), ("fetched states (in fetch order)",)),
    ("the engine's columns (CellColumns.refresh)",
     lambda mp, w, s: _columns_ignore_changes(mp, s), ("columns.",)),
    ("the diego heaps kept with the columns (CellColumns.dirty)",
     lambda mp, w, s: _heaps_miss_changes(mp, s), ("auction at",)),
    ("the pass's DesiredLRPs (Fetch._forget_desired)",
     lambda mp, w, s: _no_op(mp, Fetch, "_forget_desired", s), ("desired_kept",)),
    ("the quiet LRP half (RowTable.listing_holds)",
     lambda mp, w, s: _listing_ignores_writes(mp, s), ("lrp_quiet", "convergence pass")),
    ("the plain apps (RowTable._fold_written)",
     lambda mp, w, s: _no_op(mp, RowTable, "_fold_written", s), ("lrp_plain", "lrp_quiet", "convergence pass")),
]


@pytest.mark.parametrize(("cache", "brake", "named"), BREAKAGES, ids=[b[0] for b in BREAKAGES])
def test_a_broken_invalidation_fails_the_check_at_a_write_that_skipped_it(
        cache: str, brake: Callable[[pytest.MonkeyPatch, World, Applies], None], named: tuple[str, ...],
        applies: Applies, monkeypatch: pytest.MonkeyPatch) -> None:
    world = busy_world()
    brake(monkeypatch, world, applies)
    with pytest.raises(DerivedMismatch) as failed:
        run(world)
    assert failed.value.index.startswith(named), (cache, str(failed.value))
    assert applies.failing() in applies.skipped, (cache, applies.failing(), sorted(applies.skipped)[:10])


def test_the_busy_world_passes_the_check_unbroken(applies: Applies) -> None:
    """The control: the same run with every invalidation in place raises nothing."""
    world = busy_world()
    run(world)
    assert checking() and applies.started > 100 and not applies.skipped


def crashing_world() -> World:
    world = World(seed=2, config=AuctionConfig(seed=2))
    for n in range(3):
        world.add_cell(SimCell(f"cell-{n}", f"z{n}", 0, memory_mb=4096, disk_mb=16384, containers=20))
    world.upsert_domain("cf-apps", 0)
    world.desire_lrp(SimApp("steady", instances=3, start_delay_s=2))
    world.desire_lrp(SimApp("crashy", instances=1, start_delay_s=2, crash_probability=1.0, crash_after_s=40))
    return world


def test_a_repeatedly_crashing_instance_is_restarted_with_the_plain_apps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """bbs.md 4.2 step 10 with the plain-apps shortcut of the memory store: an instance
    found plain (RUNNING) at one pass that crashed since is read anew and restarted, again
    and again; with the shortcut's invalidation broken it never is, and the check mode
    fails at the listing that kept its crashed row's app plain."""
    monkeypatch.setenv(CHECK_SETTING, "1")
    world = crashing_world()
    world.run_until(700)
    # The rep restarts the first three crashes itself; from the third on, the pass does
    # after the back-off (bbs.md 4.2 step 10), each time.
    assert world.rows[("crashy", 0, core.ORDINARY)].crash_count >= 5

    monkeypatch.setattr(RowTable, "_fold_written", lambda self: None)
    monkeypatch.setenv(CHECK_SETTING, "0")
    broken = crashing_world()
    broken.run_until(700)
    row = broken.rows[("crashy", 0, core.ORDINARY)]
    assert (row.state, row.crash_count) == (core.CRASHED, 3)  # never restarted once CRASHED
    monkeypatch.setenv(CHECK_SETTING, "1")
    with pytest.raises(DerivedMismatch, match=r"(lrp_plain.apps|lrp_quiet).*crashy"):
        crashing_world().run_until(700)


def test_the_check_mode_is_on_in_this_directory() -> None:
    """tests/sim runs with ``DIEGO_CHECK_DERIVED=1`` (its conftest) unless the environment
    chose otherwise (``0`` to time the suite without it)."""
    from check_derived import CHOSEN

    if CHOSEN:
        pytest.skip("the environment chose the check mode's setting")
    assert checking()
