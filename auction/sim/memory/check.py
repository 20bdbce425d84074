"""The check mode: every index and kept answer of a memory world proves itself.

With ``DIEGO_CHECK_DERIVED=1`` (``checking``, the one place it is read), a world

- after every ``apply`` makes each derived field of ``state.WorldState`` anew from the
  truth (``rebuild``) and compares it with the kept one: rows by guid and by cell, each
  cell's load, the copies, sizes and proxies, the draining and lapsing cells, every live
  timer's heap entry, the new work by instant, the kept loads and states of the cells
  not marked to be fetched again, the DesiredLRPs, the listing in key order, the quiet
  LRP half and the plain apps of the last pass;
- before a pass is applied, runs the same pass the plain way (every row read, no quiet
  half, no plain apps) and compares the two answers;
- before a round reads the fetch, compares the answering cells, their states in order
  and the engine's columns with a fresh fetch; and before a round is applied, runs the
  same round over a fresh fetch with nothing kept (no columns, heaps or holders) and
  compares the two answers.

The first difference raises ``DerivedMismatch`` naming the index, the key, and what the
truth gives against what was kept (``auction.sim.check_mode``, the setting and the
error the database store's check shares).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from auction.bbs import types as core
from auction.engine import CellState
from auction.engine.state import CellColumns
from auction.sim.check_mode import CHECK_SETTING, DerivedMismatch, checking
from auction.sim.converge import convergence_pass
from auction.sim.loads import FETCH_ORDER, add_lrp, add_task, answering, cell_state, holds_container
from auction.sim.model import DRAINING, Load, SimCell
from auction.sim.round import RoundInput, auction_round

__all__ = ["CHECK_SETTING", "DerivedMismatch", "after_apply", "checking", "fetch_answer", "fresh_loads",
           "pass_answer", "rebuild", "round_answer"]

if TYPE_CHECKING:
    from auction.sim.changes import ChangeSet
    from auction.sim.memory.state import WorldState as World

def _same(index: str, expected: Mapping[Any, Any], found: Mapping[Any, Any]) -> None:
    """Two maps equal key by key; the first key that differs is the error."""
    for key in sorted(expected.keys() | found.keys(), key=repr):
        want, got = expected.get(key, _ABSENT), found.get(key, _ABSENT)
        if want != got:
            raise DerivedMismatch(index, key, want, got)


_ABSENT = "(absent)"


# ----------------------------------------------------------------------------- after apply
def after_apply(world: World) -> None:
    """Every derived field of ``world`` against the one its truth gives (``rebuild``)."""
    for name, expected, found in rebuild(world):
        _same(name, expected, found)


def rebuild(world: World) -> Iterable[tuple[str, Mapping[Any, Any], Mapping[Any, Any]]]:
    """(index name, made anew from the truth, as kept) for every index of the world, in
    the order they are compared; each made from the truth alone."""
    rows = world.rows
    table = rows.table
    by_guid: dict[str, set[core.RowKey]] = {}
    by_cell: dict[str, set[core.RowKey]] = {}
    for key, row in table.items():
        by_guid.setdefault(row.process_guid, set()).add(key)
        if row.cell_id:
            by_cell.setdefault(row.cell_id, set()).add(key)
    yield "rows.by_guid", by_guid, rows.by_guid
    yield "rows.by_cell", by_cell, rows.by_cell
    yield ("rows.copies", {"copies": sum(1 for key in table if key[2] != core.ORDINARY)},
           {"copies": rows.copies})
    sizes = {guid: (app.memory_mb, app.disk_mb) for guid, app in world.apps.items()}
    yield "sizes", sizes, {g: s for g, s in world.sizes.items() if g in sizes or s != (0, 0)}
    yield "proxy", {c: cell.proxy_memory_mb for c, cell in world.cells.items()}, \
        {c: p for c, p in world.proxy.items() if c in world.cells}
    yield "rows.loads", _lrp_loads(world), {c: _load_key(load) for c, load in rows.loads.items()
                                             if _load_key(load) != _load_key(Load())}
    yield "draining", {c: True for c, cell in world.cells.items() if cell.state == DRAINING}, \
        dict.fromkeys(world.draining, True)
    yield "lapsing", {c: cell.presence_lost_at for c, cell in world.cells.items()
                      if cell.presence_lost_at is not None}, world.lapsing
    yield from _timers(world)
    yield from _kept_fetch(world)
    yield from _kept_pass(world)


def _load_key(load: Load) -> tuple[object, ...]:
    """A load as compared: what each process has on the cell in any order (the order
    instances came and went is not the truth's to give)."""
    return (load.memory_mb, load.disk_mb, load.containers, load.starting, dict(load.lrps),
            sorted(load.tasks))


def _lrp_loads(world: World) -> dict[str, tuple[object, ...]]:
    loads: dict[str, Load] = {}
    for row in world.rows.table.values():
        if holds_container(row.state, row.cell_id):
            app = world.apps.get(row.process_guid)
            memory, disk = (app.memory_mb, app.disk_mb) if app is not None else (0, 0)
            cell = world.cells.get(row.cell_id)
            add_lrp(loads.setdefault(row.cell_id, Load()), row.process_guid, row.state, memory, disk,
                    world.proxy.get(row.cell_id, 0) if cell is None else cell.proxy_memory_mb)
    return {c: _load_key(load) for c, load in loads.items()}


def fresh_loads(world: World) -> dict[str, Load]:
    """Every cell's load made from its rows and running tasks alone (``loads.cell_loads``)."""
    loads = {cell_id: Load() for cell_id in world.cells}
    for row in world.rows.table.values():
        load = loads.get(row.cell_id)
        if load is not None and holds_container(row.state, row.cell_id):
            app = world.apps.get(row.process_guid)
            memory, disk = (app.memory_mb, app.disk_mb) if app is not None else (0, 0)
            add_lrp(load, row.process_guid, row.state, memory, disk, world.cells[row.cell_id].proxy_memory_mb)
    for sim_task in world.tasks.values():
        task = sim_task.task
        load = loads.get(task.cell_id)
        if load is not None and task.state == core.TASK_RUNNING:
            add_task(load, task.task_guid, sim_task.memory_mb, sim_task.disk_mb)
    return loads


def _timers(world: World) -> Iterable[tuple[str, Mapping[Any, Any], Mapping[Any, Any]]]:
    """Every live timer has its entry (in its heap, or set aside while its cell is
    silent), and every heap is a heap."""
    timers = world.timers
    held: dict[str, set[Any]] = {}
    for entries in timers.held.values():
        for kind, entry in entries:
            held.setdefault(kind, set()).add(tuple(entry))
    heaps: tuple[tuple[str, list[Any]], ...] = (("timers.starts", timers.starts), ("timers.crashes", timers.crashes),
        ("timers.completions", timers.completions), ("timers.lapses", timers.lapses),
        ("timers.new_work_heap", timers.new_work_heap))
    for name, heap in heaps:
        for pos in range(1, len(heap)):
            if heap[(pos - 1) // 2] > heap[pos]:
                raise DerivedMismatch(name, pos, "a heap", f"{heap[(pos - 1) // 2]!r} above {heap[pos]!r}")
    starts_at = set(timers.starts)
    start_entries = {(at, guid, index) for at, due in timers.start_keys.items() if at in starts_at
                     for guid, index in due}
    crash_entries = set(timers.crashes)
    want: dict[Any, bool] = {}
    found: dict[Any, bool] = {}
    for row in world.rows.table.values():
        if row.ready_at is not None and row.state == core.CLAIMED and row.presence == core.ORDINARY:
            entry = (row.ready_at, row.process_guid, row.index)
            want[("start", *entry)] = True
            found[("start", *entry)] = entry in start_entries or entry in held.get("start", ())
        if row.crash_at is not None and row.state in (core.CLAIMED, core.RUNNING):
            entry4 = (row.crash_at, row.process_guid, row.index, row.presence)
            want[("crash", *entry4)] = True
            found[("crash", *entry4)] = entry4 in crash_entries or entry4 in held.get("crash", ())
    completions = set(timers.completions)
    for guid, sim_task in world.tasks.items():
        task = sim_task.task
        if task.finishes_at is not None and task.state == core.TASK_RUNNING:
            entry2 = (task.finishes_at, guid)
            want[("complete", *entry2)] = True
            found[("complete", *entry2)] = entry2 in completions or entry2 in held.get("complete", ())
    lapses = set(timers.lapses)
    for cell_id, at in world.lapsing.items():
        if at > world.now:
            want[("lapse", at, cell_id)] = True
            found[("lapse", at, cell_id)] = (at, cell_id) in lapses
    yield "timers (live timer -> its entry)", want, found
    silent = {c for c, cell in world.cells.items() if cell.silent}
    yield ("timers.held (set aside for a silent cell)", {c: True for c in timers.held if timers.held[c]},
           {c: c in silent for c in timers.held if timers.held[c]})
    new_work = {seq: q.queued_at for seq, q in world.queue.items() if not q.carried}
    yield "timers.new_work", new_work, timers.new_work
    waiting = dict(Counter(new_work.values()))
    yield "timers.new_work_waiting", waiting, timers.new_work_waiting
    instants = set(timers.new_work_heap)
    yield "timers.new_work_heap", dict.fromkeys(waiting, True), {at: at in instants for at in waiting}


def _kept_fetch(world: World) -> Iterable[tuple[str, Mapping[Any, Any], Mapping[Any, Any]]]:
    """The kept loads and states of every cell not marked to be fetched again."""
    marked = world.unfetched | world.rows.stale
    fresh_all = fresh_loads(world)
    expected_loads, kept_loads = {}, {}
    expected_states, kept_states = {}, {}
    for cell_id, cell in world.cells.items():
        if cell_id in marked or cell_id not in world.fetched_loads:
            continue
        fresh = fresh_all[cell_id]
        expected_loads[cell_id] = _load_key(fresh)
        kept_loads[cell_id] = _load_key(world.fetched_loads[cell_id])
        expected_states[cell_id] = _state_key(cell_state(cell, fresh))
        kept = world.fetched_states.get(cell_id)
        kept_states[cell_id] = None if kept is None else _state_key(kept)
    yield "fetched_loads", expected_loads, kept_loads
    yield "fetched_states", expected_states, kept_states
    if world.fetch_order is not None:
        fresh_order = sorted(world.cells.values(), key=FETCH_ORDER)
        yield ("fetch_order", dict(enumerate(map(_identity, fresh_order))),
               dict(enumerate(map(_identity, world.fetch_order))))


def _identity(cell: SimCell) -> tuple[str, int]:
    return cell.cell_id, id(cell)


def _state_key(state: CellState) -> CellState:
    """A state as compared: its instances in any order (as ``_load_key``)."""
    return replace(state, lrps=tuple(sorted(state.lrps)), tasks=tuple(sorted(state.tasks)))


def _kept_pass(world: World) -> Iterable[tuple[str, Mapping[Any, Any], Mapping[Any, Any]]]:
    """The DesiredLRPs, the listing in key order, the quiet half and the plain apps, each
    as the rows and apps now give them, where the world would hand them to a pass."""
    if world.desired_kept is not None and world.desired_kept[0] is world.apps:
        fresh = [core.DesiredLRP(a.process_guid, a.domain, a.instances)
                 for a in sorted(world.apps.values(), key=lambda a: a.process_guid)]
        yield "desired_kept", dict(enumerate(fresh)), dict(enumerate(world.desired_kept[1]))
    rows = world.rows
    table = rows.table
    pending = rows.pending()
    listing = rows.listing()
    if listing is not None:
        order, listed = listing
        # Each key listed and not written since is listed as the row it is now.
        want = {key: (id(row), row) for key, row in table.items() if key not in pending}
        found = {key: (id(row), row) for key, row in zip(order, listed, strict=True) if key not in pending}
        yield "rows.listing", want, found
    quiet = world.lrp_quiet
    if quiet is not None and rows.listing_holds():
        # The rows the quiet half answers for: those it read and the plain apps' it merged.
        seen = {row.key: row for row in quiet.snapshot.actual}
        for merged in quiet.selection.ordinary_by_guid.values():
            seen.update((row.key, row) for row in merged)
        yield ("lrp_quiet (rows it answers for)", {key: (id(row), row) for key, row in table.items()},
               {key: (id(row), row) for key, row in seen.items()})
    plain = world.lrp_plain
    if plain is not None:
        written = rows.written
        pending_apps = {key[0] for key in pending}
        want_apps, kept_apps = {}, {}
        for guid, (kept_rows, _claimed) in plain.apps.items():
            if guid in written or guid in pending_apps:
                continue  # read anew by the next pass
            keys = sorted(rows.by_guid.get(guid, ()))
            want_apps[guid] = [(id(table[key]), table[key]) for key in keys]
            kept_apps[guid] = [(id(row), row) for row in kept_rows]
        yield "lrp_plain.apps (rows not written since)", want_apps, kept_apps


# ----------------------------------------------------------------------------- a pass
def pass_answer(world: World, change: ChangeSet) -> None:
    """The pass ``change`` carries against the same pass run the plain way over the same
    truth: every row read, no quiet half, no plain apps."""
    at = change.at
    table = world.rows.table
    snapshot = core.Snapshot(
        now=at, cells=frozenset(c.cell_id for c in world.cells.values() if c.has_presence(at)),
        domains=dict(world.domains),
        desired=[core.DesiredLRP(a.process_guid, a.domain, a.instances)
                 for a in sorted(world.apps.values(), key=lambda a: a.process_guid)],
        actual=[table[key] for key in sorted(table)], tasks=[t.task for t in world.tasks.values()],
        config=world.convergence, ordered=True)
    silent = {c.cell_id for c in world.cells.values() if c.silent}
    otto = {g for g, t in world.tasks.items() if t.placement_mode != "diego"}
    fresh = convergence_pass(snapshot, silent, otto, world.convergence_interval_s)
    for name in ("lrp_ops", "task_ops", "events", "domains_removed", "queue_add", "callbacks",
                 "next_convergence_at", "touched"):
        want, got = getattr(fresh, name), getattr(change, name)
        if want != got:
            raise DerivedMismatch(f"convergence pass at {change.at:g}: {name}", _first_difference(want, got),
                                  want, got)
    want_metrics = _metrics(fresh.convergence.metrics)
    got_metrics = _metrics(change.convergence.metrics)
    _same(f"convergence pass at {change.at:g}: metrics", want_metrics, got_metrics)


def _metrics(metrics: Mapping[str, int]) -> dict[str, int]:
    return {k: v for k, v in metrics.items() if not k.endswith("Duration")}


def _first_difference(want: Any, got: Any) -> object:
    if isinstance(want, list) and isinstance(got, list):
        for pos, (a, b) in enumerate(zip(want, got, strict=False)):
            if a != b:
                return pos
        return min(len(want), len(got))
    return "value"


# ----------------------------------------------------------------------------- a round
def round_answer(world: World, change: ChangeSet) -> None:
    """The round ``change`` carries against the same round over a fresh fetch, with no
    kept columns, heaps or holders: every kept answer a round reads, end to end."""
    at = change.at
    queue = list(world.queue.values())
    unclaimed = {}
    for q in queue:
        if q.kind == "lrp":
            row = world.rows.table.get((q.process_guid, q.index, core.ORDINARY))
            if row is not None and row.state == core.UNCLAIMED:
                unclaimed[(q.process_guid, q.index)] = row
    fresh = auction_round(RoundInput(at=at, queue=queue, cells=list(world.cells.values()),
                                     loads=fresh_loads(world), apps=world.apps, unclaimed=unclaimed,
                                     tasks=world.tasks, config=world.config, cached=world.cached))
    for name in ("lrp_ops", "task_ops", "events", "queue_put", "queue_remove", "counters", "touched",
                 "callbacks"):
        want, got = getattr(fresh, name), getattr(change, name)
        if want != got:
            raise DerivedMismatch(f"auction at {at:g}: {name}", _first_difference(want, got), want, got)



def fetch_answer(world: World, at: float, fetched: list[SimCell], states: list[CellState],
                 columns: CellColumns) -> None:
    """The kept fetch a round is about to read against a fresh fetch at ``at``."""
    fresh_cells = answering(world.cells.values(), at)
    _same("fetched (the answering cells)", dict(enumerate(map(_identity, fresh_cells))),
          dict(enumerate(map(_identity, fetched))))
    objective = world.config.placement_strategy == "objective"
    loads = fresh_loads(world)
    fresh_states = [cell_state(c, loads[c.cell_id],
                               world.cached.get(c.cell_id, ()) if objective else ()) for c in fresh_cells]
    _same("fetched states (in fetch order)",
          {c.cell_id: _state_key(s) for c, s in zip(fresh_cells, fresh_states, strict=True)},
          {c.cell_id: _state_key(s) for c, s in zip(fetched, states, strict=True)})
    # The columns as this round's engine will take them (a refresh with the same states
    # is a no-op), against columns gathered from the fresh states.
    columns.refresh(states)
    made = CellColumns(fresh_states)
    for name in _COLUMNS:
        kept_column, fresh_column = getattr(columns, name), getattr(made, name)
        if name == "lrp_counts":
            kept_column, fresh_column = list(map(dict, kept_column)), list(map(dict, fresh_column))
        _same(f"columns.{name}", dict(enumerate(fresh_column)), dict(enumerate(kept_column)))


_COLUMNS = ("cell_ids", "zone_of", "zones", "a_mem", "a_disk", "a_cont", "starting", "t_mem", "t_disk",
            "t_cont", "in_use", "proxy", "index", "n_tasks", "lrp_counts", "kinds")

