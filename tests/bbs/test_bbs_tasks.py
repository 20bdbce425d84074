"""Task convergence, bbs.md 7 (steps 1-6 with K = 30, P = 1800, X = 120)."""

from __future__ import annotations

from typing import Any

from auction.bbs.changes import TaskDelete, TaskUpdate
from auction.bbs.events import TASK_CHANGED, TASK_REMOVED
from auction.bbs.task_convergence import converge_tasks
from auction.bbs.types import Task
from tests.bbs.bbs_builders import NOW, result, run


def task(guid: str, state: str, created_at: float = NOW, **kw: Any) -> dict[str, Any]:
    return {"task_guid": guid, "state": state, "created_at": created_at, **kw}


def test_pending_exactly_1800_seconds_old_is_neither_failed_nor_started() -> None:
    """bbs.md 7 steps 1-2 and 10: strict on both sides."""
    out = run(
        tasks=[
            task("exact", "PENDING", NOW - 1800),
            task("older", "PENDING", NOW - 1800.5),
            task("younger", "PENDING", NOW - 1799.5),
        ]
    )
    assert out["tasks"]["fail"] == {"older": "not started within time limit"}
    assert out["tasks"]["start"] == ["younger"]
    assert out["metrics"]["ConvergenceTasksKicked"] == 2


def test_every_pending_task_is_started_at_every_pass_however_young() -> None:
    """bbs.md 7 step 2 and 10: a task created at now is re-auctioned too."""
    assert run(tasks=[task("new", "PENDING", NOW)])["tasks"]["start"] == ["new"]


def test_running_tasks_on_lost_cells_fail() -> None:
    """bbs.md 7 step 3: RUNNING and cell not in C."""
    out = run(tasks=[task("a", "RUNNING", cell_id="cell-1"), task("b", "RUNNING", cell_id="x")])
    assert out["tasks"]["fail"] == {"b": "cell disappeared before completion"}


def test_with_no_cells_every_running_task_fails() -> None:
    """bbs.md 7 step 3: all if C = {}."""
    out = run(cells=[], tasks=[task("a", "RUNNING", cell_id="cell-1")])
    assert out["tasks"]["fail"] == {"a": "cell disappeared before completion"}


def test_failed_task_fields() -> None:
    """bbs.md 7 steps 1/3: COMPLETED, failed, first_completed = updated = now."""
    res = result(tasks=[task("b", "RUNNING", cell_id="gone", updated_at=NOW - 5)])
    (op,) = res.tasks.ops
    assert isinstance(op, TaskUpdate)
    after = op.after
    assert (after.state, after.failed, after.first_completed_at, after.updated_at) == (
        "COMPLETED",
        True,
        NOW,
        NOW,
    )
    assert [e.type for e in res.tasks.events] == [TASK_CHANGED]


def test_stuck_resolving_is_demoted_with_updated_at_unchanged() -> None:
    """bbs.md 7 step 4: RESOLVING and updated_at < now - 30 -> COMPLETED."""
    res = result(
        tasks=[
            task("old", "RESOLVING", 0, updated_at=NOW - 31, first_completed_at=NOW - 60),
            task("edge", "RESOLVING", 0, updated_at=NOW - 30, first_completed_at=NOW - 60),
        ]
    )
    assert res.tasks.complete == ["old"]
    (op,) = res.tasks.ops
    assert isinstance(op, TaskUpdate) and op.changed == {"state": "COMPLETED"}


def test_demoted_then_deleted_in_the_same_pass() -> None:
    """bbs.md 7: a task demoted in step 4 can be deleted in step 5 of the same pass."""
    res = result(
        tasks=[
            task("t", "RESOLVING", 0, updated_at=NOW - 500, first_completed_at=NOW - 500),
        ]
    )
    assert res.tasks.complete == ["t"] and res.tasks.delete == ["t"]
    assert [type(op) for op in res.tasks.ops] == [TaskUpdate, TaskDelete]
    assert [e.type for e in res.tasks.events] == [TASK_CHANGED, TASK_REMOVED]
    assert res.metrics["TasksCompleted"] == 0 and res.metrics["ConvergenceTasksPruned"] == 1


def test_completed_tasks_are_deleted_strictly_after_120_seconds() -> None:
    """bbs.md 7 step 5: first_completed_at < now - 120 (strict)."""
    out = run(
        tasks=[
            task("old", "COMPLETED", 0, updated_at=NOW - 121, first_completed_at=NOW - 121),
            task("edge", "COMPLETED", 0, updated_at=NOW - 120, first_completed_at=NOW - 120),
        ]
    )
    assert out["tasks"]["delete"] == ["old"]


def test_step_6_counts_every_completed_task_but_calls_back_only_with_a_url() -> None:
    """bbs.md 7 step 6: a no-op without a URL, still counted in the kicks."""
    res = result(
        tasks=[
            task(
                "url",
                "COMPLETED",
                0,
                updated_at=NOW - 40,
                first_completed_at=NOW - 40,
                callback_url="http://cc/t",
            ),
            task("nourl", "COMPLETED", 0, updated_at=NOW - 40, first_completed_at=NOW - 40),
            task(
                "recent",
                "COMPLETED",
                0,
                updated_at=NOW - 30,
                first_completed_at=NOW - 30,
                callback_url="http://cc/r",
            ),
        ]
    )
    assert res.tasks.callbacks == ["url"]
    assert res.metrics["ConvergenceTasksKicked"] == 2


def test_tasks_failed_in_this_pass_are_not_called_back() -> None:
    """bbs.md 7: tasks failed in steps 1 and 3 are not called back in this pass."""
    res = result(
        tasks=[
            task("p", "PENDING", NOW - 2000, callback_url="http://cc/p"),
            task("r", "RUNNING", 0, cell_id="gone", callback_url="http://cc/r"),
        ]
    )
    assert sorted(res.tasks.fail) == ["p", "r"]
    assert res.tasks.callbacks == []
    assert res.metrics["ConvergenceTasksKicked"] == 2


def test_task_gauges_count_after_steps_1_to_5() -> None:
    """bbs.md 9: TasksPending/Running/Completed/Resolving after steps 1-5."""
    out = run(
        tasks=[
            task("p", "PENDING"),
            task("expired", "PENDING", NOW - 2000),
            task("r", "RUNNING", cell_id="cell-1"),
            task("res", "RESOLVING", 0, updated_at=NOW - 5, first_completed_at=NOW - 10),
        ]
    )
    metrics = out["metrics"]
    assert [
        metrics[k] for k in ("TasksPending", "TasksRunning", "TasksCompleted", "TasksResolving")
    ] == [1, 1, 1, 1]


def test_converge_tasks_is_callable_on_its_own() -> None:
    """bbs.md 7: the same pass and now, usable without an LRP snapshot."""
    out = converge_tasks([Task("t", "PENDING", created_at=5.0)], ["c"], 10.0)
    assert out.start == ["t"] and out.counts["PENDING"] == 1
