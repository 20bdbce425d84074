"""The memory store's answer to the auctioneer's state fetch, kept between auctions.

Each cell's load and fetched state are kept as of its last change (a 1,000-cell world
runs thousands of auctions and few cells change between two), with the answering cells,
their states in fetch order and the engine's columns over them; each is remade only where
a cell, its instances, its blob cache or a task changed. ``check`` compares every one of
them with a fresh fetch before a round reads it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from operator import attrgetter

from auction.bbs import types as core
from auction.engine import CellState
from auction.sim.loads import FETCH_ORDER, add_task, answering, cell_state
from auction.sim.memory import check
from auction.sim.memory.check import checking
from auction.sim.memory.state import WorldState
from auction.sim.model import Load, SimCell
from auction.sim.replay_record import explain_wanted
from auction.sim.round import FetchAnswer, RoundInput


class Fetch(WorldState):
    """The state fetch over the kept loads and states (see the module docstring)."""

    __slots__ = ()

    def _cell_changed(self, cell_id: str) -> None:
        """A cell put: the fetch order and the answering cells are made again, and the
        cell's load and state."""
        self.fetch_order = None
        self.fetched = None
        self.unfetched.add(cell_id)

    def _tasks_changed(self) -> None:
        """A task put or written: every cell's load again (its running tasks are a walk
        of every task)."""
        self.unfetched.update(self.cells)

    def _forget_desired(self) -> None:
        """An app put or removed: the pass's DesiredLRPs are made again."""
        self.desired_kept = None

    def answering(self) -> list[SimCell]:
        return answering(self.cells.values(), self.now)

    def loads(self) -> dict[str, Load]:
        """Each rep's reserved resources (``auction.sim.loads``); copies the world keeps
        until the cell changes, so they must not be changed."""
        return dict(self._refetch())

    def _refetch(self) -> dict[str, Load]:
        """The kept loads and states, the cells that changed made anew."""
        if not self.unfetched and not self.rows.stale:
            return self.fetched_loads
        changed = (self.unfetched | self.rows.stale) & self.cells.keys()
        self.unfetched.clear()
        self.rows.stale.clear()
        loads, states = self.fetched_loads, self.fetched_states
        for cell_id in changed:
            held = self.rows.loads.get(cell_id)
            loads[cell_id] = Load() if held is None else Load(
                held.memory_mb, held.disk_mb, held.containers, held.starting, dict(held.lrps))
        for sim_task in self.tasks.values():
            task = sim_task.task
            if task.state == core.TASK_RUNNING and task.cell_id in changed:
                add_task(loads[task.cell_id], task.task_guid, sim_task.memory_mb, sim_task.disk_mb)
        for cell_id in changed:
            states[cell_id] = cell_state(self.cells[cell_id], loads[cell_id])
        self.restated |= changed
        return loads

    def _states(self) -> Mapping[str, CellState]:
        """Every cell's answer to a state fetch (``loads.cell_state``), kept like its load;
        the ``objective`` strategy's blob caches are read anew (a clone may change it)."""
        loads = self._refetch()
        if self.config.placement_strategy == "objective":
            return {c: cell_state(self.cells[c], load, self.cached.get(c, ())) for c, load in loads.items()}
        return self.fetched_states

    def cell_states(self, cells: Iterable[SimCell] | None = None) -> list[CellState]:
        loads = self._refetch()
        chosen = self.answering() if cells is None else list(cells)
        # The states kept for the auctions are the same answer (``_refetch``): a cell's
        # state lists every instance on it, a quarter of a million at a real size.
        kept, current = self.fetched_states, self.cells
        return [kept[c.cell_id] if current.get(c.cell_id) is c else cell_state(c, loads[c.cell_id])
                for c in chosen]

    def round_input(self, at: float) -> RoundInput:
        queue = list(self.queue.values())
        unclaimed = {}
        for q in queue:
            if q.kind == "lrp":
                row = self.rows.get((q.process_guid, q.index, core.ORDINARY))
                if row is not None and row.state == core.UNCLAIMED:
                    unclaimed[(q.process_guid, q.index)] = row
        states = self._states()
        explain = self.replay_sink is not None and explain_wanted(len(queue), len(self.answering()))
        if self.fetch_order is None:
            self.fetch_order = sorted(self.cells.values(), key=FETCH_ORDER)
        fetched = self._fetched(at)
        if states is self.fetched_states:
            in_order = self._fetched_states(fetched)
        else:  # the objective strategy's states, made anew
            in_order = [states[c.cell_id] for c in fetched]
        if checking():
            check.fetch_answer(self, at, fetched, in_order, self.columns)
        return RoundInput(at=at, queue=queue, cells=self.fetch_order, loads=self.fetched_loads,
                          apps=self.apps, unclaimed=unclaimed, tasks=self.tasks,
                          config=self.config, cached=self.cached, holders=self.rows.holders,
                          explain=explain, fetch=FetchAnswer(fetched, in_order, self.cells, self.columns))

    def _fetched_states(self, fetched: list[SimCell]) -> list[CellState]:
        """The kept states of ``fetched`` in its order: made again when the answering cells
        change, else only the cells restated since (``_refetch``) are written in."""
        kept = self.states_in_order
        states = self.fetched_states
        if kept is None or kept[0] is not fetched:
            in_order = list(map(states.__getitem__, map(_cell_id, fetched)))
            kept = self.states_in_order = (fetched, {c.cell_id: n for n, c in enumerate(fetched)}, in_order)
        else:
            positions, in_order = kept[1], kept[2]
            for cell_id in self.restated:
                pos = positions.get(cell_id)
                if pos is not None:
                    in_order[pos] = states[cell_id]
        self.restated.clear()
        return kept[2]

    def _fetched(self, at: float) -> list[SimCell]:
        """``loads.answering`` at ``at``, kept while no cell is put and no presence lapses."""
        if self.fetched is None or not self.fetched_at <= at < self.fetched_until:
            if self.fetch_order is None:
                self.fetch_order = sorted(self.cells.values(), key=FETCH_ORDER)
            self.fetched = answering(self.fetch_order, at)
            self.fetched_at = at
            self.fetched_until = min((c.presence_lost_at for c in self.fetch_order
                                      if c.presence_lost_at is not None and c.presence_lost_at > at),
                                     default=math.inf)
        return self.fetched



_cell_id = attrgetter("cell_id")
