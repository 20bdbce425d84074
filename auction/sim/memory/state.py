"""The memory world's fields (``WorldState``): the truth and the indexes kept over it.

The truth is what the database store holds (cells, apps, ActualLRP rows by key, tasks,
domains, the auctioneer's queue, the timeline) and what the run recorded (auctions,
passes, counters, the log). Everything else is derived from it and kept only to be
fast: each such field says what it is made of, and ``check.rebuild`` makes it anew from
the truth to prove the kept one (``DIEGO_CHECK_DERIVED``).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from auction.bbs import types as core
from auction.bbs.convergence import QuietLRPs
from auction.bbs.plain_apps import PlainApps
from auction.engine import AuctionConfig, CellState
from auction.engine.state import CellColumns
from auction.sim.memory.records import AuctionRecord, LogEntry
from auction.sim.memory.rows import RowTable
from auction.sim.memory.timers import TimerHeaps
from auction.sim.model import Load, QueuedWork, SimApp, SimCell, SimTask
from auction.sim.timers import NEW_WORK


@dataclass(slots=True)
class WorldState:
    """A memory world's fields: first what the database holds and what the run recorded
    (the truth), then what is derived from it and kept between writes (the indexes)."""

    seed: int = 0
    config: AuctionConfig = field(default_factory=AuctionConfig)
    convergence: core.ConvergenceConfig = field(default_factory=core.ConvergenceConfig)
    convergence_interval_s: float = 30.0
    now: float = 0.0
    cells: dict[str, SimCell] = field(default_factory=dict)
    apps: dict[str, SimApp] = field(default_factory=dict)
    domains: dict[str, float | None] = field(default_factory=dict)
    rows: RowTable = field(default=None)  # type: ignore[assignment]
    tasks: dict[str, SimTask] = field(default_factory=dict)
    queue: dict[int, QueuedWork] = field(default_factory=dict)
    seq: int = 0
    timeline: list[tuple[float, int, str, str, dict[str, Any]]] = field(default_factory=list)
    done_steps: set[str] = field(default_factory=set)
    next_convergence_at: float | None = None
    # Process guids that ever had an instance on a cell (objective's cached blobs).
    cached: dict[str, set[str]] = field(default_factory=dict)
    auctions: list[AuctionRecord] = field(default_factory=list)
    passes: list[tuple[float, dict[str, int]]] = field(default_factory=list)
    counters: Counter[str] = field(default_factory=Counter)
    log: list[LogEntry] = field(default_factory=list)
    record_log: bool = True
    # A plan's world hands each auction's replay record here (``replay_record``), with
    # every verdict, while it answers True; the caller keeps what its bounds allow.
    replay_sink: Callable[[dict[str, Any]], bool] | None = field(default=None, compare=False, repr=False)
    # Per placed item over the whole run (auction.md 9).
    waits: list[float] = field(default_factory=list)
    attempts: list[int] = field(default_factory=list)
    failures_by_error: Counter[str] = field(default_factory=Counter)
    communications: int = 0
    initial_distribution: float | None = None
    # ---- derived: each is made anew from the fields above by ``check.rebuild``
    # The apps' sizes and the cells' proxies as the rows' loads count them.
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    proxy: dict[str, int] = field(default_factory=dict)
    # Indexes kept by ``apply`` so ``next_due`` never scans every cell or queue item.
    draining: set[str] = field(default_factory=set)
    lapsing: dict[str, float] = field(default_factory=dict)
    # Every heap of instants (``timers.TimerHeaps``).
    timers: TimerHeaps = field(default_factory=TimerHeaps, compare=False, repr=False)
    # Each cell's load and fetched state as of its last change, kept between auctions: a
    # 1,000-cell world runs thousands of auctions and few cells change between two. A cell
    # is made anew when it, its instances or its blob cache change; every cell when a task
    # does (``_refetch``).
    fetched_loads: dict[str, Load] = field(default_factory=dict)
    fetched_states: dict[str, CellState] = field(default_factory=dict)
    unfetched: set[str] = field(default_factory=set)
    # The cells in the state fetch's order (``loads.answering``), kept until a cell is put:
    # sorting an already sorted list is one comparison per cell.
    fetch_order: list[SimCell] | None = None
    # The cells that answered the last fetch (``loads.answering``) and until when that
    # answer holds: until a cell is put or the next presence lapses.
    fetched: list[SimCell] | None = None
    fetched_at: float = 0.0
    fetched_until: float = 0.0
    # The engine's columns of the fetched states, refreshed per auction where a cell's
    # state is another object (``CellColumns``): most of 1,000 cells did not change.
    columns: CellColumns = field(default_factory=CellColumns, compare=False, repr=False)
    # The convergence pass's DesiredLRPs (``_desired``), with the apps they were made of.
    desired_kept: tuple[dict[str, SimApp], list[core.DesiredLRP]] | None = field(
        default=None, compare=False, repr=False)
    # The last pass's LRP half, when it did nothing and waits on no clock (``QuietLRPs``):
    # handed to the next pass with the same rows, while no row was written since.
    lrp_quiet: QuietLRPs | None = field(default=None, compare=False, repr=False)
    # The last walking pass's plain apps (``PlainApps``): the next pass reads only the rows
    # of the other apps and of those written since (``RowTable.written``).
    lrp_plain: PlainApps | None = field(default=None, compare=False, repr=False)
    # ``fetched`` with its positions by cell id and its kept states in that order, and the
    # cells restated since that list was last brought up to date (``_fetched_states``).
    states_in_order: tuple[list[SimCell], dict[str, int], list[CellState]] | None = field(
        default=None, compare=False, repr=False)
    restated: set[str] = field(default_factory=set, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.rows is None:
            self.rows = RowTable(self.sizes, self.proxy, self.timers)
        if self.next_convergence_at is None:
            self.next_convergence_at = self.now + self.convergence_interval_s
        timers = self.timers
        if not timers.lapses:
            timers.lapses = [(t, c) for c, t in self.lapsing.items()]
            heapq.heapify(timers.lapses)
        if not timers.new_work and self.queue:  # a world built from its queue alone
            for seq, q in self.queue.items():
                if NEW_WORK.applies(q):
                    timers.new_work_add(seq, q.queued_at)

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """A copy (``clone``, ``checkpoint``) leaves the quiet LRP half behind: its rows'
        listing is not copied either (``RowTable.__getstate__``), so it could not be used."""
        return None, {f.name: None if f.name in ("lrp_quiet", "lrp_plain") else getattr(self, f.name)
                      for f in fields(self)}

