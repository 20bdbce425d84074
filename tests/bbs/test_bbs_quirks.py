"""The quirks bbs.md 10 asks to reproduce, and the metrics of bbs.md 9."""

from __future__ import annotations

from auction.bbs.changes import RowUpdate
from tests.bbs.bbs_builders import NOW, STALE, desired, lrp, result, run


def test_index_misalignment_blind_spot() -> None:
    """bbs.md 10: rows 0 and 5 for instances 2 -- nothing is created or retired."""
    out = run(desired=[desired(instances=2)], actual=[lrp(index=0), lrp(index=5)])
    assert out["lrp"]["create"] == [] and out["lrp"]["retire"] == []
    assert out["metrics"]["LRPsMissing"] == 0 and out["metrics"]["LRPsExtra"] == 0


def test_a_crashed_index_beyond_instances_is_restarted_when_the_domain_is_stale() -> None:
    """bbs.md 10 and 4.2 step 10 (ignores the index)."""
    out = run(
        domains=STALE,
        desired=[desired(instances=1)],
        actual=[lrp(index=0), lrp(index=3, state="CRASHED", crash_count=1, since=NOW)],
    )
    assert out["lrp"]["retire"] == []
    assert out["lrp"]["unclaim"] == ["web.3"] and out["lrp"]["start"] == ["web.3"]


def test_no_start_for_a_replacement_unclaimed_on_a_missing_cell_while_a_suspect_exists() -> None:
    """bbs.md 10 and 4.3 A4: the replacement waits to be stale before it is auctioned."""
    first = run(
        desired=[desired(instances=1)],
        actual=[
            lrp(index=0, state="RUNNING", cell_id="cell-2"),
            lrp(index=0, presence="SUSPECT", cell_id="cell-3"),
        ],
    )
    assert first["lrp"]["unclaim"] == ["web.0"] and first["lrp"]["start"] == []
    # More than 30 s later the unclaimed replacement is stale and re-auctioned.
    later = run(
        now=NOW + 31,
        desired=[desired(instances=1)],
        actual=[
            lrp(index=0, state="UNCLAIMED", since=NOW),
            lrp(index=0, presence="SUSPECT", cell_id="cell-3"),
        ],
    )
    assert later["lrp"]["start"] == ["web.0"]


def test_stale_unclaimed_is_reauctioned_without_bumping_since() -> None:
    """bbs.md 10: the row is not written at all, so ``since`` stays and so does the
    placement error; the next pass re-auctions it again."""
    res = result(
        desired=[desired(instances=1)],
        actual=[lrp(index=0, state="UNCLAIMED", since=100, placement_error="full")],
    )
    assert res.lrp.start == [("web", 0)]
    assert not any(isinstance(op, RowUpdate) for op in res.lrp.ops)


def test_timer_only_convergence_has_no_trigger_in_the_core() -> None:
    """bbs.md 4.1: the core is a function of the snapshot; the same snapshot twice
    gives the same answer (a cell loss alone changes nothing until a pass runs)."""
    kwargs = {"desired": [desired(instances=2)], "actual": [lrp(index=0, cell_id="cell-2")]}
    assert run(**kwargs) == run(**kwargs)


def test_metrics_after_the_actions() -> None:
    """bbs.md 9: ordinary rows by state after the actions; suspects before them."""
    out = run(
        domains={"cf-apps": NOW + 60, "stale": NOW - 1, "never": None},
        desired=[desired("web", 3), desired("api", 1)],
        actual=[
            lrp("web", 0),
            lrp("web", 1, state="CLAIMED", cell_id="cell-2"),  # lost cell: suspect + new
            lrp("web", 2, state="CRASHED", crash_count=5, since=NOW),  # waiting
            lrp("api", 0, state="CRASHED", crash_count=1, since=NOW),  # restarted
            lrp("orphan", 0, state="CRASHED", crash_count=9, since=NOW, domain="stale"),
            lrp("web", 0, presence="SUSPECT", cell_id="cell-7"),  # extra suspect
        ],
    )
    assert out["metrics"] == {
        "LRPsDesired": 4,
        "LRPsUnclaimed": 2,  # the replacement of web.1 and the restarted api.0
        "LRPsClaimed": 0,
        "LRPsRunning": 1,
        "CrashedActualLRPs": 2,
        "CrashingDesiredLRPs": 2,  # web and the orphan (orphans included)
        "LRPsMissing": 0,
        "LRPsExtra": 0,
        "SuspectRunningActualLRPs": 1,  # counted although A2 removes it
        "SuspectClaimedActualLRPs": 0,
        "PresentCells": 1,
        "SuspectCells": 2,  # cell-2 and the suspect's cell-7
        "Domain.cf-apps": 1,
        "Domain.never": 1,
        "TasksPending": 0,
        "TasksRunning": 0,
        "TasksCompleted": 0,
        "TasksResolving": 0,
        "ConvergenceTasksKicked": 0,
        "ConvergenceTasksPruned": 0,
    }


def test_lrps_extra_counts_fresh_extras_and_fresh_orphans_only() -> None:
    """bbs.md 9 LRPsExtra: the *to retire* keys, not the stale extras."""
    out = run(
        domains={"cf-apps": NOW + 60, "old": NOW - 1},
        desired=[desired("web", 1), desired("legacy", 0, domain="old")],
        actual=[lrp("web", 0), lrp("web", 1), lrp("legacy", 0), lrp("o", 0, domain="cf-apps")],
    )
    assert out["lrp"]["retire"] == ["o.0", "web.1"]
    assert out["metrics"]["LRPsExtra"] == 2
