"""The action phase A1-A6 of bbs.md 4.3, the row changes a shell applies, and the
events of bbs.md 8."""

from __future__ import annotations

from auction.bbs.changes import RowCreate, RowDelete, RowUpdate, StopRequest
from auction.bbs.convergence import ConvergenceResult
from auction.bbs.events import (
    GROUP_CHANGED,
    GROUP_CREATED,
    GROUP_REMOVED,
    INSTANCE_CHANGED,
    INSTANCE_CREATED,
    INSTANCE_REMOVED,
)
from tests.bbs.bbs_builders import NOW, desired, lrp, result, run


def _types(res: ConvergenceResult) -> list[str]:
    return [e.type for e in res.lrp.events]


def test_a1_retire_of_a_running_row_on_a_present_cell_sends_a_stop_and_keeps_the_row() -> None:
    """bbs.md 2.3 Retire / 4.3 A1: CLAIMED or RUNNING with a present cell gets a stop."""
    res = result(
        desired=[desired(instances=1)],
        actual=[lrp(index=0), lrp(index=1, instance_guid="ig-1")],
    )
    assert res.lrp.retire == [("web", 1)]
    assert res.lrp.stops == [StopRequest(("web", 1, "ORDINARY"), "cell-1", "ig-1")]
    assert res.lrp.ops == []
    assert res.metrics["LRPsRunning"] == 2  # bbs.md 9: the stopped row still counts


def test_a1_retire_on_a_missing_cell_or_of_unclaimed_and_crashed_rows_deletes() -> None:
    """bbs.md 2.3 Retire: UNCLAIMED/CRASHED, or a cell whose presence is gone: delete."""
    res = result(
        desired=[desired(instances=0)],
        actual=[
            lrp(index=0, state="UNCLAIMED", since=NOW),
            lrp(index=1, state="CRASHED", crash_count=5, since=NOW),
            lrp(index=2, state="RUNNING", cell_id="cell-gone"),
        ],
    )
    assert res.lrp.retire == [("web", 0), ("web", 1), ("web", 2)]
    assert res.lrp.stops == []
    deleted = [op.key for op in res.lrp.ops if isinstance(op, RowDelete)]
    assert deleted == [("web", 0, "ORDINARY"), ("web", 1, "ORDINARY"), ("web", 2, "ORDINARY")]
    # The retired row on the lost cell is gone before A4 re-reads it: no suspect.
    assert res.lrp.suspect == []
    assert _types(res) == [INSTANCE_REMOVED, GROUP_REMOVED] * 3


def test_a1_then_a5_a_retired_stale_unclaimed_extra_gets_no_start() -> None:
    """bbs.md 4.3: an action does nothing, and sends no start, when its row is gone."""
    out = run(
        desired=[desired(instances=1)],
        actual=[lrp(index=0), lrp(index=1, state="UNCLAIMED", since=0)],
    )
    assert out["lrp"]["retire"] == ["web.1"]
    assert out["lrp"]["start"] == []


def test_a1_a_crashed_extra_in_a_fresh_domain_is_retired_not_restarted() -> None:
    """bbs.md 4.3: "a crashed extra in a fresh domain is retired, not restarted"."""
    out = run(
        desired=[desired(instances=1)],
        actual=[lrp(index=0), lrp(index=1, state="CRASHED", crash_count=1, since=0)],
    )
    assert out["lrp"]["retire"] == ["web.1"]
    assert out["lrp"]["unclaim"] == [] and out["lrp"]["start"] == []


def test_a2_removing_a_suspect_sends_no_stop() -> None:
    """bbs.md 2.3 RemoveSuspect and 4.3 A2; 8: suspect removal emits group removed."""
    res = result(
        desired=[desired(instances=1)],
        actual=[lrp(index=0), lrp(index=0, presence="SUSPECT", cell_id="cell-9")],
    )
    assert res.lrp.remove_suspect == [("web", 0)]
    assert res.lrp.stops == []
    assert [type(op) for op in res.lrp.ops] == [RowDelete]
    assert _types(res) == [INSTANCE_REMOVED, GROUP_REMOVED]


def test_a3_promotion_deletes_the_ordinary_row_first_then_moves_the_suspect() -> None:
    """bbs.md 2.3 PromoteSuspect: delete ORDINARY (any state), suspect -> ORDINARY,
    tag and since unchanged; ops ordered for a unique (guid, index, presence)."""
    res = result(
        desired=[desired(instances=1)],
        actual=[
            lrp(index=0, state="UNCLAIMED", since=NOW - 5),
            lrp(index=0, presence="SUSPECT", cell_id="cell-1", since=123),
        ],
    )
    delete, update = res.lrp.ops
    assert isinstance(delete, RowDelete) and delete.key == ("web", 0, "ORDINARY")
    assert isinstance(update, RowUpdate) and update.key == ("web", 0, "SUSPECT")
    assert update.changed == {"presence": "ORDINARY"}
    assert update.after.since == 123
    assert _types(res) == [INSTANCE_REMOVED, GROUP_REMOVED, INSTANCE_CHANGED]


def test_a3_before_a4_a_promoted_suspect_wins_over_the_unclaim_of_its_replacement() -> None:
    """bbs.md 4.3: "a promoted suspect wins over the unclaim of its replacement"."""
    out = run(
        desired=[desired(instances=1)],
        actual=[
            lrp(index=0, state="CLAIMED", cell_id="cell-2"),
            lrp(index=0, presence="SUSPECT", cell_id="cell-1"),
        ],
    )
    assert out["lrp"]["promote"] == ["web.0"]
    assert out["lrp"]["unclaim"] == [] and out["lrp"]["start"] == []


def test_a4_lost_cell_row_turns_suspect_and_a_replacement_is_created() -> None:
    """bbs.md 4.3 A4 / 6.2: ORDINARY -> SUSPECT (tag, since, key kept), then a new
    ORDINARY UNCLAIMED row (since = now, count 0) and a start; instance events only."""
    res = result(
        desired=[desired(instances=1)],
        actual=[lrp(index=0, cell_id="cell-2", instance_guid="ig", crash_count=2)],
    )
    update, create = res.lrp.ops
    assert isinstance(update, RowUpdate) and update.changed == {"presence": "SUSPECT"}
    assert isinstance(create, RowCreate)
    new = create.row
    assert (new.state, new.presence, new.since, new.crash_count) == (
        "UNCLAIMED",
        "ORDINARY",
        NOW,
        0,
    )
    assert new.domain == "cf-apps"
    assert res.start_request.lrps == (("web", 0),)
    assert _types(res) == [INSTANCE_CHANGED, INSTANCE_CREATED]


def test_a4_epoch_factory_names_the_epoch_of_created_rows() -> None:
    """bbs.md 1.1 modification_tag: new rows get a new epoch, chosen by the shell."""
    from auction.bbs.cases import parse_case
    from auction.bbs.convergence import converge
    from tests.bbs.bbs_builders import case

    snap = parse_case(case(desired=[desired(instances=2)]))
    res = converge(snap, epoch=lambda key: f"epoch-{key[1]}")
    assert [op.row.modification_tag_epoch for op in res.lrp.ops] == ["epoch-0", "epoch-1"]


def test_a4_with_a_suspect_in_place_the_replacement_is_unclaimed_without_a_start() -> None:
    """bbs.md 4.3 A4 (key in the suspect set) and 10: unclaim, no start this pass."""
    res = result(
        desired=[desired(instances=1)],
        actual=[
            lrp(
                index=0,
                state="CLAIMED",
                cell_id="cell-2",
                instance_guid="new",
                crash_count=1,
                placement_error="",
            ),
            lrp(index=0, presence="SUSPECT", cell_id="cell-3", instance_guid="old"),
        ],
    )
    assert res.lrp.unclaim == [("web", 0)]
    assert res.lrp.start == [] and res.lrp.suspect == []
    (update,) = res.lrp.ops
    assert isinstance(update, RowUpdate)
    assert update.changed == {
        "state": "UNCLAIMED",
        "cell_id": "",
        "instance_guid": "",
        "since": NOW,
        "modification_tag_index": 1,
    }
    assert update.after.crash_count == 1  # Unclaim keeps the crash count (bbs.md 2.3)
    # Missing-cell handling: instance events only, no group event (bbs.md 8).
    assert _types(res) == [INSTANCE_REMOVED, INSTANCE_CREATED]


def test_a5_crashed_restart_goes_through_unclaimed_with_since_now() -> None:
    """bbs.md 4.3 A5: CRASHED -> UNCLAIMED (since = now) + start; 8: group changed."""
    res = result(
        desired=[desired(instances=1)],
        actual=[lrp(index=0, state="CRASHED", since=0, crash_count=4, crash_reason="oom")],
    )
    (update,) = res.lrp.ops
    assert isinstance(update, RowUpdate)
    assert update.after.state == "UNCLAIMED" and update.after.since == NOW
    assert update.after.crash_count == 4 and update.after.crash_reason == "oom"
    assert res.lrp.start == [("web", 0)]
    assert _types(res) == [INSTANCE_REMOVED, INSTANCE_CREATED, GROUP_CHANGED]


def test_a5_stale_unclaimed_is_started_with_no_row_change() -> None:
    """bbs.md 4.3 A5: UNCLAIMED: start only, since and placement error kept."""
    res = result(
        desired=[desired(instances=1)],
        actual=[lrp(index=0, state="UNCLAIMED", since=10, placement_error="no room")],
    )
    assert res.lrp.start == [("web", 0)]
    assert res.lrp.ops == [] and res.lrp.events == []


def test_a6_missing_rows_are_created_with_group_events() -> None:
    """bbs.md 4.3 A6: create ORDINARY UNCLAIMED + start; 8: new row events."""
    res = result(desired=[desired(instances=1)])
    assert res.lrp.create == [("web", 0)] and res.lrp.start == [("web", 0)]
    assert _types(res) == [INSTANCE_CREATED, GROUP_CREATED]


def test_a6_a_key_filled_by_a_promotion_is_not_created_again() -> None:
    """bbs.md 4.3: A6 re-reads; a suspect promoted in A3 now holds the missing index."""
    out = run(
        desired=[desired(instances=1)],
        actual=[lrp(index=0, presence="SUSPECT", cell_id="cell-1")],
    )
    assert out["lrp"]["promote"] == ["web.0"]
    assert out["lrp"]["create"] == [] and out["lrp"]["start"] == []


def test_0b_pruning_emits_instance_and_group_removed() -> None:
    """bbs.md 8: pruning emits group actual_lrp_removed too."""
    res = result(
        desired=[desired(instances=1)],
        actual=[lrp(index=0), lrp(index=0, presence="EVACUATING", cell_id="cell-9")],
    )
    assert res.lrp.remove_evacuating == [("web", 0)]
    assert [type(op) for op in res.lrp.ops] == [RowDelete]
    assert _types(res) == [INSTANCE_REMOVED, GROUP_REMOVED]


def test_one_start_request_holds_lrps_and_tasks() -> None:
    """bbs.md 4.3: all start requests of the pass go out as one request."""
    res = result(
        desired=[desired(instances=1)],
        tasks=[{"task_guid": "t1", "state": "PENDING", "created_at": NOW}],
    )
    assert res.start_request.lrps == (("web", 0),)
    assert res.start_request.tasks == ("t1",)
