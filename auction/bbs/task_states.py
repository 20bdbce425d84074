"""The Task state machine (bbs.md 7; ``bbs: models/task.go``, ``db/sqldb/task_db.go``).

PENDING -> RUNNING -> COMPLETED -> RESOLVING -> deleted. Each operation is a pure
function from the stored task to the new task (or a ``BBSError`` with Diego's
``Cannot transition from X to Y`` text); the shell stores it and emits
``task_changed``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from auction.bbs.errors import BBSError
from auction.bbs.types import (
    COMPLETED,
    PENDING,
    RESOLVING,
    TASK_RUNNING,
    Task,
    truncate_message,
)

# bbs.md 0: placement retries before a rejected task is failed.
MAX_TASK_RETRIES: Final = 3
CANCELLED_REASON: Final = "task was cancelled"

# to-state -> the from-states allowed (``Task.ValidateTransitionTo``). Cancel also
# completes a PENDING task: see ``cancel``.
ALLOWED_FROM: Final[dict[str, frozenset[str]]] = {
    TASK_RUNNING: frozenset({PENDING}),
    COMPLETED: frozenset({TASK_RUNNING}),
    RESOLVING: frozenset({COMPLETED}),
}


def transition_error(from_state: str, to_state: str) -> BBSError:
    return BBSError("InvalidStateTransition", f"Cannot transition from {from_state} to {to_state}")


def check_transition(from_state: str, to_state: str) -> BBSError | None:
    """``None`` when ``from_state -> to_state`` is allowed, else the BBS error."""
    if from_state in ALLOWED_FROM.get(to_state, frozenset()):
        return None
    return transition_error(from_state, to_state)


def start(task: Task, cell_id: str, now: float) -> Task | BBSError:
    """PENDING -> RUNNING on the cell that won. A repeat from the same cell is a no-op
    (Diego answers "not started" without an error); any other start is refused."""
    if task.state == TASK_RUNNING and task.cell_id == cell_id:
        return task
    error = check_transition(task.state, TASK_RUNNING)
    if error is not None:
        return error
    return replace(task, state=TASK_RUNNING, cell_id=cell_id, updated_at=now)


def complete(
    task: Task, now: float, *, failed: bool, failure_reason: str = "", result: str = ""
) -> Task | BBSError:
    """RUNNING -> COMPLETED as the cell reports it (bbs.md 7)."""
    error = check_transition(task.state, COMPLETED)
    if error is not None:
        return error
    return _completed(task, now, failed=failed, failure_reason=failure_reason, result=result)


def fail(task: Task, now: float, reason: str) -> Task:
    """Complete a task as failed without a state check: convergence steps 1 and 3 and
    the 4th rejection do this to PENDING and RUNNING tasks alike."""
    return _completed(task, now, failed=True, failure_reason=reason, result="")


def cancel(task: Task, now: float) -> Task | BBSError:
    """PENDING or RUNNING -> COMPLETED, failed ``task was cancelled``; the shell tells
    the task's cell (if any) to stop it."""
    if task.state not in (PENDING, TASK_RUNNING):
        return transition_error(task.state, COMPLETED)
    return fail(task, now, CANCELLED_REASON)


def reject(
    task: Task, reason: str, now: float, *, max_retries: int = MAX_TASK_RETRIES
) -> Task | BBSError:
    """The auctioneer could not place a PENDING task (bbs.md 7 Reject).

    Rejections 1 to ``max_retries`` keep it PENDING with the count and reason stored;
    when the count *before* is already ``max_retries`` (the 4th with the default)
    the task is failed with the placement error instead.
    """
    if task.state != PENDING:
        return transition_error(task.state, PENDING)
    if task.rejection_count >= max_retries:
        return fail(task, now, reason)
    return replace(
        task,
        rejection_count=task.rejection_count + 1,
        rejection_reason=truncate_message(reason),
        updated_at=now,
    )


def resolving(task: Task, now: float) -> Task | BBSError:
    """COMPLETED -> RESOLVING, before the callback is POSTed."""
    error = check_transition(task.state, RESOLVING)
    if error is not None:
        return error
    return replace(task, state=RESOLVING, updated_at=now)


def check_delete(task: Task) -> BBSError | None:
    """Only a RESOLVING task may be deleted (``task_db.go`` DeleteTask)."""
    if task.state == RESOLVING:
        return None
    return transition_error(task.state, RESOLVING)


def _completed(task: Task, now: float, *, failed: bool, failure_reason: str, result: str) -> Task:
    # bbs.md 7: first_completed_at = updated_at = now; the task leaves its cell.
    return replace(
        task,
        state=COMPLETED,
        cell_id="",
        failed=failed,
        failure_reason=truncate_message(failure_reason) if failed else "",
        result=result,
        first_completed_at=now,
        updated_at=now,
    )
