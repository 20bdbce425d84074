"""The memory store's timers: every heap of instants it keeps, in one place.

``TimerHeaps`` holds them: the reps' starts and crashes (pushed as rows are written,
``rows.RowTable``), task completions, presence lapses, the instants new work was queued
at, and the entries set aside while a cell is silent. Every entry is checked against the
record it names when it comes due (a stale one is dropped then), so a write never has to
find and remove one. ``due.Due`` reads them for the ``Store``; ``check.rebuild``
verifies that every live timer has its entry.
"""

from __future__ import annotations

import heapq
from typing import Any

from auction.bbs import types as core
from auction.sim.timers import COMPLETION, CRASH, START


class TimerHeaps:
    """The heaps of the world's timers (see the module docstring)."""

    __slots__ = ("completions", "crashes", "held", "lapses", "new_work", "new_work_heap",
                 "new_work_waiting", "start_keys", "starts")

    def __init__(self) -> None:
        # The starts by instant: a heap of the instants, and the instances due at each.
        # An app's instances claimed together start together, and a heap of 100,000
        # (instant, guid, index) tuples cost more per pop than the start's own work.
        self.starts: list[float] = []
        self.start_keys: dict[float, list[tuple[str, int]]] = {}
        self.crashes: list[tuple[float, str, int, str]] = []
        self.completions: list[tuple[float, str]] = []
        self.lapses: list[tuple[float, str]] = []
        # Events due on a failed cell's rep wait here until it is restored (heap entries).
        self.held: dict[str, list[tuple[str, Any]]] = {}
        # The queue's new work (not carried over) by sequence number, its instants, and
        # how many items wait at each: one heap entry per instant, not per item (the items
        # of one start request share theirs; 100,000 instances desired at once are
        # 100,000 new items).
        self.new_work: dict[int, float] = {}
        self.new_work_heap: list[float] = []
        self.new_work_waiting: dict[float, int] = {}

    def row_written(self, row: core.ActualLRP) -> None:
        """The timers a written row carries (the rep's start and its injected crash), as
        ``auction.sim.timers`` declares them for both stores."""
        if (start := START.instant(row)) is not None:
            self.start_at(start, row.process_guid, row.index)
        if (crash := CRASH.entry(row)) is not None:
            heapq.heappush(self.crashes, crash)

    def start_at(self, at: float, process_guid: str, index: int) -> None:
        """An instance's start timer (checked against its row when it comes due)."""
        due = self.start_keys.get(at)
        if due is None:
            due = self.start_keys[at] = []
            heapq.heappush(self.starts, at)
        due.append((process_guid, index))

    def task_written(self, task: core.Task) -> None:
        if (entry := COMPLETION.entry(task)) is not None:
            heapq.heappush(self.completions, entry)

    def lapse_at(self, at: float, cell_id: str) -> None:
        heapq.heappush(self.lapses, (at, cell_id))

    def release(self, cell_id: str) -> None:
        """The cell's rep reports again: what came due while it was silent is looked at anew."""
        heaps: dict[str, list[Any]] = {"crash": self.crashes, "complete": self.completions}
        for kind, entry in self.held.pop(cell_id, []):
            if kind == "start":
                self.start_at(*entry)
            else:
                heapq.heappush(heaps[kind], entry)

    def new_work_add(self, seq: int, at: float) -> None:
        self.new_work[seq] = at
        waiting = self.new_work_waiting.get(at)
        if waiting is None:
            waiting = 0
            heapq.heappush(self.new_work_heap, at)
        self.new_work_waiting[at] = waiting + 1

    def new_work_drop(self, seq: int) -> None:
        at = self.new_work.pop(seq, None)
        if at is not None:
            left = self.new_work_waiting[at] - 1
            if left:
                self.new_work_waiting[at] = left
            else:
                del self.new_work_waiting[at]  # its heap entry goes when it surfaces
