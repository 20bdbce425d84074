"""Task convergence (bbs.md 7 table, steps 1-6; ``db/sqldb/task_convergence.go``).

Same pass and ``now`` as LRP convergence. Steps run in Diego's order, each on the
tasks as the earlier steps left them: a RESOLVING task demoted by step 4 can be
deleted by step 5 of the same pass, and a task failed by step 1 or 3 has
``updated_at = now`` so step 6 does not hand it to the callback worker yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from auction.bbs import events as ev
from auction.bbs.changes import TaskDelete, TaskOp, TaskUpdate
from auction.bbs.task_states import fail
from auction.bbs.types import (
    COMPLETED,
    PENDING,
    RESOLVING,
    TASK_RUNNING,
    TASK_STATES,
    ConvergenceConfig,
    Task,
)

NOT_STARTED_REASON: Final = "not started within time limit"
CELL_DISAPPEARED_REASON: Final = "cell disappeared before completion"
DEFAULT_CONFIG: Final = ConvergenceConfig()


@dataclass(slots=True)
class TaskConvergence:
    """What one task pass did. Lists are task guids in the order the steps met them."""

    start: list[str] = field(default_factory=list)  # step 2: the task start request
    fail: dict[str, str] = field(default_factory=dict)  # steps 1 and 3: guid -> reason
    complete: list[str] = field(default_factory=list)  # step 4: RESOLVING -> COMPLETED
    delete: list[str] = field(default_factory=list)  # step 5
    # step 6: COMPLETED tasks handed to the callback worker again; only those with a
    # URL are listed (a task without one is a no-op, still counted in ``kicked``).
    callbacks: list[str] = field(default_factory=list)
    kicked: int = 0  # ConvergenceTasksKicked: steps 1 + 2 + 3 + 6
    pruned: int = 0  # ConvergenceTasksPruned: step 5
    counts: dict[str, int] = field(default_factory=dict)  # by state after steps 1-5
    ops: list[TaskOp] = field(default_factory=list)  # apply in order
    events: list[ev.Event] = field(default_factory=list)


def converge_tasks(
    tasks: Sequence[Task],
    cells: Iterable[str],
    now: float,
    config: ConvergenceConfig = DEFAULT_CONFIG,
) -> TaskConvergence:
    """Run steps 1-6 of bbs.md 7 over ``tasks`` with C = ``cells``."""
    present = frozenset(cells)
    out = TaskConvergence()
    current: dict[str, Task] = {task.task_guid: task for task in tasks}
    pending_deadline = now - config.expire_pending_task_s
    kick_deadline = now - config.kick_task_s

    def update(before: Task, after: Task) -> None:
        current[after.task_guid] = after
        out.ops.append(TaskUpdate(before, after))
        out.events.append(ev.Event(ev.TASK_CHANGED, before=before, after=after))

    # Steps 1 and 2 are strict on both sides: a task created exactly P seconds ago
    # is neither failed nor auctioned (bbs.md 7, 10).
    for task in tasks:
        if task.state == PENDING and task.created_at < pending_deadline:
            update(task, fail(task, now, NOT_STARTED_REASON))
            out.fail[task.task_guid] = NOT_STARTED_REASON
    for task in tasks:
        if task.state == PENDING and task.created_at > pending_deadline:
            out.start.append(task.task_guid)  # every pass, however young (bbs.md 10)
    # Step 3: C = {} fails every RUNNING task.
    for task in tasks:
        if task.state == TASK_RUNNING and task.cell_id not in present:
            update(task, fail(task, now, CELL_DISAPPEARED_REASON))
            out.fail[task.task_guid] = CELL_DISAPPEARED_REASON
    # Step 4: a stuck RESOLVING task goes back to COMPLETED, updated_at unchanged, so
    # that step 6 retries its callback.
    for task in tasks:
        if task.state == RESOLVING and task.updated_at < kick_deadline:
            update(task, replace(task, state=COMPLETED))
            out.complete.append(task.task_guid)
    # Step 5 reads the tasks as steps 1-4 left them.
    delete_deadline = now - config.expire_completed_task_s
    for task in list(current.values()):
        completed_at = task.first_completed_at
        if task.state == COMPLETED and completed_at is not None and completed_at < delete_deadline:
            del current[task.task_guid]
            out.delete.append(task.task_guid)
            out.ops.append(TaskDelete(task))
            out.events.append(ev.Event(ev.TASK_REMOVED, before=task))
    out.counts = {state: 0 for state in TASK_STATES}
    for task in current.values():
        out.counts[task.state] = out.counts.get(task.state, 0) + 1
    # Step 6: completed tasks whose callback has not happened for K seconds.
    step6 = 0
    for task in current.values():
        if task.state == COMPLETED and task.updated_at < kick_deadline:
            step6 += 1
            if task.callback_url:
                out.callbacks.append(task.task_guid)
    out.kicked = len(out.fail) + len(out.start) + step6
    out.pruned = len(out.delete)
    return out
