"""The ``Store``'s timing half of the memory store: ``next_due`` and the ``due_*`` reads.

Each reads the heaps of ``timers.TimerHeaps`` and checks an entry against the record it
names when it comes due (the one rule of a live timer); what comes due on a silent cell
is set aside until its rep reports again.
"""

from __future__ import annotations

import heapq

from auction.bbs import types as core
from auction.sim.driver import next_instant
from auction.sim.memory.state import WorldState
from auction.sim.model import SimApp, SimCell, SimTask
from auction.sim.timers import COMPLETION, CRASH, EVACUATION_SYNC, LAPSE, START


class Due(WorldState):
    """The ``Store``'s timing reads over the world's ``TimerHeaps``."""

    __slots__ = ()

    def next_due(self) -> float | None:
        # Runs twice per instant: the walk of draining cells only when there are some.
        # The order of the candidates is kept: of equal instants the first is returned
        # (a timed action at 120 before a pass at 120.0).
        draining = None
        if self.draining:
            draining = min((t for t in (EVACUATION_SYNC.instant(c) for c in self._draining())
                            if t is not None), default=None)
        action = None
        for at, _, marker, _, _ in self.timeline:
            if marker not in self.done_steps:
                action = at
                break
        return next_instant((self._peek_start(), self._peek_crash(), self._peek_completion(),
                             draining, self._next_lapse(), action, self.next_convergence_at,
                             self._next_new_work()))

    def _next_lapse(self) -> float | None:
        """The earliest presence lapse still ahead (one already past stays past)."""
        heap = self.timers.lapses
        while heap:
            at, cell_id = heap[0]
            if not LAPSE.ahead(at, self.now) or self.lapsing.get(cell_id) != at:
                heapq.heappop(heap)
                continue
            return at
        return None

    def _next_new_work(self) -> float | None:
        heap, waiting = self.timers.new_work_heap, self.timers.new_work_waiting
        while heap:
            at = heap[0]
            if at not in waiting:
                heapq.heappop(heap)
                continue
            return at
        return None

    def _draining(self) -> list[SimCell]:
        return [self.cells[c] for c in self.draining]

    def _peek_start(self) -> float | None:
        head = self._start_head()
        return None if head is None else head[0]

    def _start_head(self) -> tuple[float, core.ActualLRP] | None:
        """The earliest live start timer and its row (it stays last of its instant's
        list); stale entries are dropped and those of a held cell set aside on the way
        (the one rule of a live start). Within an instant, any order: the starts are
        sorted by instance when they are made."""
        heap, keys = self.timers.starts, self.timers.start_keys
        live = self._live_start
        while heap:
            at = heap[0]
            due = keys[at]
            while due:
                guid, index = due[-1]
                row = live(at, guid, index)
                if row is None:
                    due.pop()
                    continue
                return at, row
            heapq.heappop(heap)
            del keys[at]
        return None

    def _live_start(self, at: float, guid: str, index: int) -> core.ActualLRP | None:
        """The row of a start timer when it is live; None when it is stale, or when its
        cell is held (then set aside, to be looked at again when the cell reports)."""
        row = self.rows.table.get((guid, index, core.ORDINARY))
        if not START.live(row, at):
            return None
        assert row is not None
        if START.waits(self.cells.get(row.cell_id)):
            self.timers.held.setdefault(row.cell_id, []).append(("start", (at, guid, index)))
            return None
        return row

    def _peek_crash(self) -> float | None:
        heap, table = self.timers.crashes, self.rows.table
        while heap:
            at, guid, index, presence = heap[0]
            row = table.get((guid, index, presence))
            if not CRASH.live(row, at):
                heapq.heappop(heap)
                continue
            assert row is not None
            if CRASH.waits(self.cells.get(row.cell_id)):
                self.timers.held.setdefault(row.cell_id, []).append(("crash", heapq.heappop(heap)))
                continue
            return at
        return None

    def _peek_completion(self) -> float | None:
        heap = self.timers.completions
        while heap:
            at, guid = heap[0]
            sim_task = self.tasks.get(guid)
            task = sim_task.task if sim_task else None
            if not COMPLETION.live(task, at):
                heapq.heappop(heap)
                continue
            assert task is not None
            if COMPLETION.waits(self.cells.get(task.cell_id)):
                self.timers.held.setdefault(task.cell_id, []).append(("complete", heapq.heappop(heap)))
                continue
            return at
        return None

    def due_actions(self, at: float) -> list[tuple[str, str, dict[str, object]]]:
        return [(marker, action, dict(args)) for when, _, marker, action, args in self.timeline
                if when <= at and marker not in self.done_steps]

    def due_starts(self, at: float) -> tuple[list[core.ActualLRP],
                                             dict[core.LRPKey, list[core.ActualLRP]],
                                             dict[str, SimApp]]:
        rows: list[core.ActualLRP] = []
        seen: set[core.RowKey] = set()  # a set, not a scan: a zone's replacements start together
        keys, table, live = self.timers.start_keys, self.rows.table, self._live_start
        while (head := self._start_head()) is not None and START.reached(head[0], at, self.now):
            when, row = head
            due = keys[when]
            due.pop()
            found: core.ActualLRP | None = row
            while found is not None:
                key = found.key
                if key not in seen:
                    seen.add(key)
                    rows.append(found)
                # The rest of the instant's timers, each checked by the same rule as the
                # head (an app's instances start together: one heap look per instant).
                found = None
                while due and found is None:
                    found = live(when, *due.pop())
        # Only the indices that have a copy (most have none): ``instances_start`` reads
        # an absent one as none.
        copies: dict[core.LRPKey, list[core.ActualLRP]] = {}
        for r in rows if self.rows.copies else ():
            for presence in (core.EVACUATING, core.SUSPECT):
                if (c := table.get((r.process_guid, r.index, presence))) is not None:
                    copies.setdefault(r.lrp_key, []).append(c)
        return rows, copies, self.apps

    def due_crashes(self, at: float) -> list[core.ActualLRP]:
        rows: list[core.ActualLRP] = []
        seen: set[core.RowKey] = set()
        while (due := self._peek_crash()) is not None and CRASH.reached(due, at, self.now):
            _, guid, index, presence = heapq.heappop(self.timers.crashes)
            row = self.rows[(guid, index, presence)]
            if row.key not in seen:
                seen.add(row.key)
                rows.append(row)
        return rows

    def due_completions(self, at: float) -> list[SimTask]:
        done: list[SimTask] = []
        while (due := self._peek_completion()) is not None and COMPLETION.reached(due, at, self.now):
            _, guid = heapq.heappop(self.timers.completions)
            if all(t.task_guid != guid for t in done):
                done.append(self.tasks[guid])
        return done

    def due_evacuations(self, at: float) -> list[SimCell]:
        if not self.draining:
            return []  # asked at every instant: no sort of nothing
        return [cell for cell in sorted(self._draining(), key=lambda c: c.cell_id)
                if EVACUATION_SYNC.due(cell, at, self.now)]

    def evacuation_view(self, cell_id: str) -> tuple[list[core.ActualLRP], dict[core.LRPKey, str],
                                                     set[str], bool]:
        on_cell = self.rows.on_cell(cell_id)
        guids = {r.process_guid for r in on_cell}
        ordinary = {r.lrp_key: r.state for g in guids for r in self.rows.of_guid(g)
                    if r.presence == core.ORDINARY}
        desired = {g for g in guids if g in self.apps}
        tasks_left = any(t.task.cell_id == cell_id and t.task.state == core.TASK_RUNNING
                         for t in self.tasks.values())
        return on_cell, ordinary, desired, tasks_left

    def due_lapses(self, at: float) -> list[SimCell]:
        ahead = self._next_lapse()
        if ahead is None or not LAPSE.reached(ahead, at, self.now):
            return []
        return sorted((self.cells[c] for c, lost in self.lapsing.items() if LAPSE.reached(lost, at, self.now)),
                      key=lambda c: c.cell_id)

