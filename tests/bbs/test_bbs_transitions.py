"""The ActualLRP transition table (bbs.md 2.2), the single-row operations (2.3) and
the Task state machine (bbs.md 7)."""

from __future__ import annotations

from typing import Any

import pytest

from auction.bbs import task_states
from auction.bbs.errors import BBSError
from auction.bbs.lrp_operations import unclaim
from auction.bbs.transitions import allows_transition, transition_error
from auction.bbs.types import ActualLRP, Task

STATES = ["UNCLAIMED", "CLAIMED", "RUNNING", "CRASHED"]
# bbs.md 2.2, row = from, columns UNCLAIMED CLAIMED RUNNING CRASHED.
TABLE = {
    "UNCLAIMED": ["yes", "yes", "yes", "no"],
    "CLAIMED": ["empty", "same", "yes", "same"],
    "RUNNING": ["empty", "same", "same", "same"],
    "CRASHED": ["empty", "same", "same", "no"],
}


@pytest.mark.parametrize("from_state", STATES)
@pytest.mark.parametrize("to_state", STATES)
@pytest.mark.parametrize(("same_key", "empty_key"), [(True, False), (False, False), (False, True)])
def test_transition_table(from_state: str, to_state: str, same_key: bool, empty_key: bool) -> None:
    """bbs.md 2.2, every cell under every kind of caller key."""
    rule = TABLE[from_state][STATES.index(to_state)]
    expected = {"yes": True, "no": False, "same": same_key, "empty": empty_key}[rule]
    assert (
        allows_transition(from_state, to_state, same_key=same_key, caller_key_empty=empty_key)
        is expected
    )


@pytest.mark.parametrize(
    ("to_state", "message"),
    [
        ("UNCLAIMED", "cannot unclaim actual LRP"),
        ("CLAIMED", "cannot claim actual LRP"),
        ("RUNNING", "cannot start actual LRP"),
        ("CRASHED", "cannot crash actual LRP"),
    ],
)
def test_refusals_carry_the_bbs_error_text(to_state: str, message: str) -> None:
    """bbs.md 2.2: refused transitions answer the BBS error of the target state."""
    error = transition_error("RUNNING", to_state, same_key=False)
    assert error is not None and error.message == message


def test_an_allowed_transition_has_no_error() -> None:
    """bbs.md 2.2: CLAIMED -> RUNNING with any key."""
    assert transition_error("CLAIMED", "RUNNING", same_key=False) is None


def test_unclaim_is_refused_when_already_unclaimed_and_for_claimed_in_stale_mode() -> None:
    """bbs.md 2.3 Unclaim: refused if UNCLAIMED; in "stale" mode also if CLAIMED."""
    claimed = ActualLRP("web", 0, "CLAIMED", cell_id="c", instance_guid="i")
    assert isinstance(unclaim(ActualLRP("web", 0, "UNCLAIMED"), 1.0), BBSError)
    assert isinstance(unclaim(claimed, 1.0, stale_mode=True), BBSError)
    after = unclaim(claimed, 1.0)
    assert isinstance(after, ActualLRP) and after.state == "UNCLAIMED" and after.cell_id == ""


def _task(state: str = "PENDING", **kw: Any) -> Task:
    return Task("t1", state, created_at=10.0, updated_at=10.0, **kw)


def test_task_start_twice_from_another_cell_is_refused_with_the_bbs_text() -> None:
    """bbs.md 7: "Cannot transition from RUNNING to RUNNING"."""
    running = task_states.start(_task(), "cell-1", 20.0)
    assert isinstance(running, Task) and running.state == "RUNNING" and running.cell_id == "cell-1"
    error = task_states.start(running, "cell-2", 21.0)
    assert error == BBSError("InvalidStateTransition", "Cannot transition from RUNNING to RUNNING")
    assert task_states.start(running, "cell-1", 21.0) is running  # Diego: a no-op repeat


def test_task_complete_needs_running() -> None:
    """bbs.md 7: Complete is RUNNING -> COMPLETED; first_completed = updated = now."""
    error = task_states.complete(_task(), 30.0, failed=False)
    assert isinstance(error, BBSError)
    assert error.message == "Cannot transition from PENDING to COMPLETED"
    done = task_states.complete(
        _task("RUNNING", cell_id="c"), 30.0, failed=True, failure_reason="boom"
    )
    assert isinstance(done, Task)
    assert (done.state, done.failed, done.failure_reason) == ("COMPLETED", True, "boom")
    assert done.first_completed_at == done.updated_at == 30.0


@pytest.mark.parametrize("state", ["PENDING", "RUNNING"])
def test_task_cancel(state: str) -> None:
    """bbs.md 7 Cancel: PENDING/RUNNING -> COMPLETED, failed, "task was cancelled"."""
    done = task_states.cancel(_task(state), 30.0)
    assert isinstance(done, Task) and done.failure_reason == "task was cancelled"
    assert isinstance(task_states.cancel(done, 31.0), BBSError)


def test_rejections_one_to_three_keep_the_task_pending_the_fourth_fails_it() -> None:
    """bbs.md 7 Reject: count before >= 3 fails the task with the placement error."""
    task: Task | BBSError = _task()
    for expected_count in (1, 2, 3):
        assert isinstance(task, Task)
        task = task_states.reject(task, "insufficient resources: memory", 20.0)
        assert isinstance(task, Task)
        assert (task.state, task.rejection_count) == ("PENDING", expected_count)
        assert task.rejection_reason == "insufficient resources: memory"
    assert isinstance(task, Task)
    failed = task_states.reject(task, "insufficient resources: disk", 25.0)
    assert isinstance(failed, Task)
    assert (failed.state, failed.failed) == ("COMPLETED", True)
    assert failed.failure_reason == "insufficient resources: disk"


def test_resolving_and_delete() -> None:
    """bbs.md 7: COMPLETED -> RESOLVING -> deleted; nothing else may be deleted."""
    completed = _task("COMPLETED", first_completed_at=10.0)
    resolving = task_states.resolving(completed, 40.0)
    assert isinstance(resolving, Task) and resolving.state == "RESOLVING"
    assert task_states.check_delete(resolving) is None
    assert task_states.check_delete(completed) == BBSError(
        "InvalidStateTransition", "Cannot transition from COMPLETED to RESOLVING"
    )
    assert isinstance(task_states.resolving(_task("RUNNING"), 40.0), BBSError)
