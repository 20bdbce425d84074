"""Quality metrics of a placement (auction.md 9).

Pure functions over plain values, so the simulator, the dashboard and the comparison runs
share one definition. Memory in use is ``T_mem - A_mem``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter, mul, sub

from .batch import identifier
from .commit import container_memory
from .state import CellColumns
from .types import AuctionResult, CellState, LRPWork


def distribution_score(memory_in_use: Sequence[int]) -> float:
    """Population standard deviation ÷ mean of memory in use; 0 if the mean is 0."""
    return _score(len(memory_in_use), sum(memory_in_use), sum(map(mul, memory_in_use, memory_in_use)))


def distribution_scores(cells: Sequence[CellState], result: AuctionResult,
                        columns: CellColumns | None = None) -> tuple[float, float]:
    """The initial and final ``distribution_score`` of one auction: the final from the
    initial's sums and the winners' cells alone, not from a second walk of every cell."""
    in_use = columns.in_use if columns is not None and columns.cells == cells else memory_in_use(cells)
    n, total, squares = len(in_use), sum(in_use), sum(map(mul, in_use, in_use))
    initial = _score(n, total, squares)
    for pos, added in _added_memory(cells, result, columns).items():
        before = in_use[pos]
        total += added
        squares += (before + added) * (before + added) - before * before
    return initial, _score(n, total, squares)


def _score(n: int, total: int, squares: int) -> float:
    """std ÷ mean from the count, sum and sum of squares. Memory is whole MB, so
    ``n * squares - total**2`` (n² times the variance) is exact: one rounding at the
    end, not one per cell (and no cancellation, whatever the values' size)."""
    if n == 0 or total == 0:
        return 0.0
    return math.sqrt(max(n * squares - total * total, 0)) / total


def memory_in_use(cells: Sequence[CellState], columns: CellColumns | None = None) -> list[int]:
    """``T_mem - A_mem`` per cell, as fetched (the *initial* distribution); read from
    ``columns`` when the caller's ``CellColumns`` hold exactly these cells."""
    if columns is not None and columns.cells == cells:
        return list(columns.in_use)
    return list(map(sub, map(_total_memory, cells), map(_available_memory, cells)))


def final_memory_in_use(cells: Sequence[CellState], result: AuctionResult,
                        initial: Sequence[int] | None = None,
                        columns: CellColumns | None = None) -> list[int]:
    """Memory in use after the commit: each accepted item adds what its container takes
    (an LRP its memory plus the proxy, a 0 MB LRP nothing; auction.md 7.3).
    ``initial``: ``memory_in_use(cells)`` when the caller has it already; ``columns``: the
    caller's ``CellColumns`` (their map of positions) when they hold exactly these cells."""
    in_use = memory_in_use(cells) if initial is None else list(initial)
    for pos, added in _added_memory(cells, result, columns).items():
        in_use[pos] += added
    return in_use


def _added_memory(cells: Sequence[CellState], result: AuctionResult,
                  columns: CellColumns | None) -> dict[int, int]:
    """Memory the commit adds, by the position of each winning cell in ``cells``."""
    added: dict[int, int] = {}
    if not result.won:
        return added
    placed = result.placements
    # Only the winners change: their positions found in a map made in C, not by a
    # Python walk of every cell per auction.
    if columns is not None and columns.cells == cells:
        position = columns.by_id()[0]
    else:
        position = dict(zip(map(_cell_id, cells), range(len(cells)), strict=True))
    # A won item stays placed where it won unless its cell's commit rejected it: when as
    # many are placed as were won, none was (no identifier made per item to look it up).
    rejected = len(placed) != sum(map(len, result.won.values()))
    for cell_id, work in result.won.items():
        pos = position.get(cell_id)
        if pos is None:
            continue
        # Committed, an LRP takes its container's memory (auction.md 7.3); before the
        # commit, what the auction reserved (4.6).
        proxy = cells[pos].proxy_memory_mb if result.committed else None
        memory = 0
        for item in work:
            if not rejected or placed.get(identifier(item)) == cell_id:
                if proxy is not None and type(item) is LRPWork:
                    memory += container_memory(item.memory_mb, proxy)
                else:
                    memory += item.memory_mb
        added[pos] = added.get(pos, 0) + memory
    return added


_cell_id = attrgetter("cell_id")
_total_memory = attrgetter("total.memory_mb")
_available_memory = attrgetter("available.memory_mb")


@dataclass(frozen=True, slots=True)
class ZoneSkew:
    """Per-app zone skew: max − min instances per zone, over the auction's zones."""

    per_app: dict[str, int]
    worst_app: str | None
    worst_skew: int
    apps_over_one: int


def zone_skew(cells: Sequence[CellState], result: AuctionResult | None = None) -> ZoneSkew:
    """Instances per zone of every process guid (fetched ``lrps`` plus placed LRP items)."""
    zones = sorted({c.zone for c in cells})
    counts: dict[str, dict[str, int]] = {}
    for cell in cells:
        zone = cell.zone
        # Counted per guid where the caller keeps the count: a 250,000-instance cluster
        # is a few guids per cell, not one step per instance.
        held = cell.lrp_counts if cell.lrp_counts is not None else Counter(cell.lrps)
        for guid, n in held.items():
            if n:
                per_zone = counts.get(guid)
                if per_zone is None:
                    counts[guid] = {zone: n}
                else:
                    per_zone[zone] = per_zone.get(zone, 0) + n
    if result is not None:
        zone_of = {c.cell_id: c.zone for c in cells}
        for item in result.items:
            cell_id = result.placements.get(identifier(item))
            if cell_id is not None and type(item) is LRPWork:
                per_zone = counts.setdefault(item.process_guid, {})
                zone = zone_of[cell_id]
                per_zone[zone] = per_zone.get(zone, 0) + 1
    per_app: dict[str, int] = {}
    if zones:
        for g, c in sorted(counts.items()):
            values = [c.get(z, 0) for z in zones]
            per_app[g] = max(values) - min(values)
    worst = max(per_app, key=lambda g: per_app[g], default=None)
    return ZoneSkew(per_app, worst, per_app[worst] if worst else 0,
                    sum(1 for s in per_app.values() if s > 1))


@dataclass(frozen=True, slots=True)
class FailureSummary:
    count: int
    fraction: float
    by_error: dict[str, int]


def failure_summary(result: AuctionResult) -> FailureSummary:
    """Failed placements: number, fraction of the batch, count per error string."""
    total = len(result.order)
    by_error = Counter(result.failures.values())
    return FailureSummary(len(result.failures), len(result.failures) / total if total else 0.0,
                          dict(sorted(by_error.items())))


def communications(result: AuctionResult, cells_asked: int, fetch_attempts: int = 1) -> int:
    """Request/response exchanges of one auction (auction.md 9).

    ``diego``, ``objective``, ``random``: one per cell asked for its state per attempt, plus
    one commit call per cell that won work. ``dea``: one advertisement per cell in the pool
    plus one start message per placed item (no batched commit).
    """
    if result.strategy == "dea":
        return cells_asked + len(result.placements)
    return cells_asked * fetch_attempts + len(result.won)


def spread(values: Iterable[float]) -> dict[str, float]:
    """min, max, mean and population std-dev (wait times, attempts); zeros when empty."""
    data = list(values)
    if not data:
        return {"min": 0.0, "max": 0.0, "mean": 0.0, "std": 0.0}
    mean = sum(data) / len(data)
    std = math.sqrt(sum((v - mean) ** 2 for v in data) / len(data))
    return {"min": float(min(data)), "max": float(max(data)), "mean": mean, "std": std}


def wait_times(queue_times: Mapping[str, float], result: AuctionResult, now: float
               ) -> dict[str, float]:
    """Per placed item: ``now`` (end of the commit) − its queue time, summarised."""
    return spread(now - queue_times[i] for i in result.placements if i in queue_times)
