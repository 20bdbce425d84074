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
    """The memory an LRP container takes from its cell (auction.md 7.3).

    The rep's allocator adds the proxy overhead to the container's memory limit, but only
    to a non-zero one: a 0 MB LRP runs with no limit and takes 0 MB, whatever the proxy.
    This is what the executor reserves, so what tasks, later auctions and the cell's
    bookkeeping see. Tasks have no proxy: their container takes ``memory_mb``.
    """
    return memory_mb + proxy_memory_mb if memory_mb else 0


def commit(free: Resources, proxy_memory_mb: int, work: Sequence[WorkItem],
           evacuating: bool = False) -> CommitOutcome:
    """One cell's ``Perform`` (``cloudfoundry/rep``, ``auction_cell_rep.go`` and
    ``batch_container_allocator.go``; the executor's ``AllocateContainers``).

    Two budgets, as there. The rep first checks the LRPs' memory alone, by memory
    descending (stable: won order on ties): each passes while ``m + proxy`` fits in a
    budget that every LRP passed so far has lowered by its own ``m + proxy``, a 0 MB one
    included; only later LRPs of this call see that budget. The executor then allocates
    the passed LRPs' containers in that order and then the tasks in won order against the
    cell's real free memory, disk and containers, each taking what it reserves
    (``container_memory`` for an LRP: 0 MB for a 0 MB one). An evacuating cell rejects
    everything (7.1).
    """
    if evacuating:
        return CommitOutcome((), tuple(work))
    lrps = sorted((w for w in work if type(w) is LRPWork), key=lambda w: -w.memory_mb)
    tasks = [w for w in work if type(w) is not LRPWork]
    budget = free.memory_mb
    passed: list[bool] = []
    for lrp in lrps:
        required = lrp.memory_mb + proxy_memory_mb
        passed.append(required <= budget)
        if passed[-1]:
            budget -= required
    mem, disk, containers = free.memory_mb, free.disk_mb, free.containers
    accepted: list[WorkItem] = []
    rejected: list[WorkItem] = []
    sized: list[tuple[WorkItem, int, bool]] = [
        (lrp, container_memory(lrp.memory_mb, proxy_memory_mb), ok)
        for lrp, ok in zip(lrps, passed, strict=True)]
    sized += [(task, task.memory_mb, True) for task in tasks]
    for item, memory, ok in sized:
        if ok and memory <= mem and item.disk_mb <= disk and containers >= 1:
            mem, disk, containers = mem - memory, disk - item.disk_mb, containers - 1
            accepted.append(item)
        else:
            rejected.append(item)
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
