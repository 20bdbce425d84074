"""The gauges one convergence pass records (bbs.md 9, the list of bbs.md 11).

Ordinary-row counts are "after the actions": the selection counted the rows once, and
here each row op subtracts its before row and adds its after row, so a pass over
250,000 rows does not walk them twice.
"""

from __future__ import annotations

from collections import Counter

from auction.bbs.changes import RowCreate, RowUpdate
from auction.bbs.lrp_actions import LRPConvergence
from auction.bbs.lrp_convergence import LRPSelection
from auction.bbs.task_convergence import TaskConvergence
from auction.bbs.types import (
    CLAIMED,
    COMPLETED,
    CRASHED,
    ORDINARY,
    PENDING,
    RESOLVING,
    RUNNING,
    TASK_RUNNING,
    UNCLAIMED,
    ActualLRP,
)

Metrics = dict[str, int]


def lrp_metrics(sel: LRPSelection, out: LRPConvergence, present_cells: int) -> Metrics:
    """``LRPsDesired`` to ``Domain.<name>`` of bbs.md 9."""
    by_state = Counter(sel.ordinary_by_state)
    crashed = Counter(sel.crashed_by_guid)

    def count(row: ActualLRP, step: int) -> None:
        if row.presence == ORDINARY:
            by_state[row.state] += step
            if row.state == CRASHED:
                crashed[row.process_guid] += step

    for op in out.ops:
        if isinstance(op, RowCreate):
            count(op.row, 1)
        else:
            count(op.before, -1)
            if isinstance(op, RowUpdate):
                count(op.after, 1)
    metrics: Metrics = {
        "LRPsDesired": sel.desired_instances,
        # A retired RUNNING row whose stop was only sent still counts (bbs.md 9).
        "LRPsUnclaimed": by_state[UNCLAIMED],
        "LRPsClaimed": by_state[CLAIMED],
        "LRPsRunning": by_state[RUNNING],
        "CrashedActualLRPs": by_state[CRASHED],
        # Orphans included: any guid with an ordinary CRASHED row left.
        "CrashingDesiredLRPs": sum(1 for n in crashed.values() if n > 0),
        "LRPsMissing": len(sel.missing),
        # Only what will be retired: extras in stale domains are not counted.
        "LRPsExtra": len(sel.to_retire),
        # Steps 8 and 9 count before the actions.
        "SuspectRunningActualLRPs": sel.suspect_running,
        "SuspectClaimedActualLRPs": sel.suspect_claimed,
        "PresentCells": present_cells,
        "SuspectCells": len(sel.missing_cell_ids),
    }
    for name in sorted(sel.fresh):  # a stale domain is absent, not 0
        metrics[f"Domain.{name}"] = 1
    return metrics


def task_metrics(tasks: TaskConvergence) -> Metrics:
    """The four task gauges after steps 1-5, and this pass's kicked/pruned counts."""
    return {
        "TasksPending": tasks.counts.get(PENDING, 0),
        "TasksRunning": tasks.counts.get(TASK_RUNNING, 0),
        "TasksCompleted": tasks.counts.get(COMPLETED, 0),
        "TasksResolving": tasks.counts.get(RESOLVING, 0),
        "ConvergenceTasksKicked": tasks.kicked,
        "ConvergenceTasksPruned": tasks.pruned,
    }
