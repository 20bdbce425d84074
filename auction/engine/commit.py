"""The commit step: what a simulated cell does with the work it won (auction.md 7).

``commit`` is pure: the caller gives the cell's *real* free resources at commit time (in a
case run, the ``available`` of the case) and whether it is evacuating now.
``apply_commits`` folds the per-cell answers into an ``AuctionResult`` as auction.md 1
step 6 says: rejected items become failures with the empty error string.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from .batch import identifier
from .filters import ERR_COMMIT_REJECTED
from .types import AuctionResult, CellState, LRPWork, Resources, WorkItem


@dataclass(frozen=True, slots=True)
class CommitOutcome:
    """The cell's answer: what it starts (or claims) and what it rejects."""

    accepted: tuple[WorkItem, ...]
    rejected: tuple[WorkItem, ...]


def container_memory(memory_mb: int, proxy_memory_mb: int) -> int:
    """The memory an LRP container takes on its cell (auction.md 7.3).

    The rep's allocator adds the proxy overhead to the container's memory limit, but only
    to a non-zero one: a 0 MB LRP runs with no limit and takes 0 MB, whatever the proxy.
    Tasks have no proxy: their container takes ``memory_mb``.
    """
    return memory_mb + proxy_memory_mb if memory_mb else 0


def commit(free: Resources, proxy_memory_mb: int, work: Sequence[WorkItem],
           evacuating: bool = False) -> CommitOutcome:
    """One cell's ``Perform`` (``cloudfoundry/rep``, ``batch_container_allocator.go``).

    LRPs first, by memory descending (stable: won order on ties), each accepted while
    ``m + proxy`` fits and then taking ``container_memory`` (``m + proxy``, 0 for a 0 MB
    LRP); then tasks in won order. An evacuating cell rejects everything (7.1).
    """
    if evacuating:
        return CommitOutcome((), tuple(work))
    mem, disk, containers = free.memory_mb, free.disk_mb, free.containers
    lrps = sorted((w for w in work if type(w) is LRPWork), key=lambda w: -w.memory_mb)
    tasks = [w for w in work if type(w) is not LRPWork]
    accepted: list[WorkItem] = []
    rejected: list[WorkItem] = []
    for item in lrps:
        if item.memory_mb + proxy_memory_mb <= mem and item.disk_mb <= disk and containers >= 1:
            mem -= container_memory(item.memory_mb, proxy_memory_mb)
            disk, containers = disk - item.disk_mb, containers - 1
            accepted.append(item)
        else:
            rejected.append(item)
    for task in tasks:
        if task.memory_mb <= mem and task.disk_mb <= disk and containers >= 1:
            mem, disk, containers = mem - task.memory_mb, disk - task.disk_mb, containers - 1
            accepted.append(task)
        else:
            rejected.append(task)
    return CommitOutcome(tuple(accepted), tuple(rejected))


def apply_commits(result: AuctionResult, outcomes: Mapping[str, CommitOutcome]) -> AuctionResult:
    """Move every rejected item from the placements to the failures with ``""`` (7.5).

    A cell absent from ``outcomes`` did not answer the commit: its work counts as placed
    (auction.md 1 step 8, ``cell.go`` ``Commit``).
    """
    for outcome in outcomes.values():
        for item in outcome.rejected:
            ident = identifier(item)
            del result.placements[ident]
            result.scores.pop(ident, None)
            result.failures[ident] = ERR_COMMIT_REJECTED
    # Keep failures in batch order, as the case output lists them.
    result.failures = {i: result.failures[i] for i in result.order if i in result.failures}
    result.committed = True
    return result


def commit_all(result: AuctionResult, cells: Sequence[CellState],
               evacuating: Collection[str] = (),
               unreachable: Collection[str] = ()) -> AuctionResult:
    """Commit every cell's won work against the fetched states, as a case run does.

    ``evacuating`` cells reject all their work; ``unreachable`` cells do not answer (their
    work counts as placed). Everything else performs against its ``available`` resources.
    """
    by_id = {c.cell_id: c for c in cells}
    outcomes: dict[str, CommitOutcome] = {}
    for cell_id, work in result.won.items():
        if cell_id in unreachable:
            continue
        cell = by_id[cell_id]
        outcomes[cell_id] = commit(cell.available, cell.proxy_memory_mb, work,
                                   evacuating=cell_id in evacuating)
    return apply_commits(result, outcomes)
