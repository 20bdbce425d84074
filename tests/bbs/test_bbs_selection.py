"""Every row of the selection phase, bbs.md 4.2 (steps 0a-10), with the gates of 4.4."""

from __future__ import annotations

from tests.bbs.bbs_builders import FRESH, NOW, STALE, desired, lrp, result, run


def test_0a_prunes_domains_expired_at_or_before_now() -> None:
    """bbs.md 4.2 step 0a and 5: expiry <= now is pruned, None never expires."""
    domains = {"at-now": NOW, "past": NOW - 1, "future": NOW + 1, "forever": None}
    res = result(domains=domains)
    assert sorted(res.lrp.pruned_domains) == ["at-now", "past"]
    assert {k for k in res.metrics if k.startswith("Domain.")} == {
        "Domain.future",
        "Domain.forever",
    }


def test_0b_prunes_evacuating_rows_of_missing_cells_only() -> None:
    """bbs.md 4.2 step 0b: EVACUATING rows whose cell is not in C, even in a stale domain."""
    out = run(
        domains=STALE,
        desired=[desired(instances=2)],
        actual=[
            lrp(index=0),
            lrp(index=1),
            lrp(index=0, presence="EVACUATING", cell_id="cell-gone"),
            lrp(index=1, presence="EVACUATING", cell_id="cell-1"),
        ],
    )
    assert out["lrp"]["remove_evacuating"] == ["web.0"]


def test_0b_with_no_cells_prunes_every_evacuating_row() -> None:
    """bbs.md 4.2 step 0b: C = {} removes all of them."""
    out = run(
        cells=[],
        desired=[desired(instances=1)],
        actual=[lrp(index=0, presence="EVACUATING", cell_id="cell-1")],
    )
    assert out["lrp"]["remove_evacuating"] == ["web.0"]


def test_1_stale_unclaimed_is_strictly_older_than_30_seconds() -> None:
    """bbs.md 4.2 step 1: since < now - 30 (strict); a row exactly 30 s old waits."""
    out = run(
        desired=[desired(instances=2)],
        actual=[
            lrp(index=0, state="UNCLAIMED", since=NOW - 30.001),
            lrp(index=1, state="UNCLAIMED", since=NOW - 30),
        ],
    )
    assert out["lrp"]["start"] == ["web.0"]
    assert out["lrp"]["unclaim"] == []


def test_1_stale_unclaimed_needs_a_desired_lrp() -> None:
    """bbs.md 4.2 step 1: "desired exists"; an orphan in a stale domain is left alone."""
    out = run(domains=STALE, actual=[lrp(guid="gone", state="UNCLAIMED", since=0)])
    assert out["lrp"]["start"] == [] and out["lrp"]["retire"] == []


def test_1_stale_unclaimed_uses_the_configured_threshold() -> None:
    """bbs.md 4.2 step 1 with conformance.md 2 ``config.stale_unclaimed_s``."""
    out = run(
        config={"stale_unclaimed_s": 100},
        desired=[desired(instances=2)],
        actual=[
            lrp(index=0, state="UNCLAIMED", since=NOW - 101),
            lrp(index=1, state="UNCLAIMED", since=NOW - 50),
        ],
    )
    assert out["lrp"]["start"] == ["web.0"]


def test_2_claimed_and_running_rows_on_missing_cells_become_suspects() -> None:
    """bbs.md 4.2 step 2 + 4.3 A4: CLAIMED or RUNNING on a cell not in C."""
    out = run(
        desired=[desired(instances=3)],
        actual=[
            lrp(index=0, state="RUNNING", cell_id="cell-2"),
            lrp(index=1, state="CLAIMED", cell_id="cell-3"),
            lrp(index=2, state="RUNNING", cell_id="cell-1"),
        ],
    )
    assert out["lrp"]["suspect"] == ["web.0", "web.1"]
    assert out["lrp"]["create"] == ["web.0", "web.1"]
    assert out["metrics"]["SuspectCells"] == 2


def test_2_with_no_cells_every_claimed_or_running_row_is_on_a_missing_cell() -> None:
    """bbs.md 4.1/4.2 step 2: an empty presence list is a valid C = {}."""
    out = run(
        cells=[],
        desired=[desired(instances=2)],
        actual=[lrp(index=0, state="RUNNING"), lrp(index=1, state="CLAIMED")],
    )
    assert out["lrp"]["suspect"] == ["web.0", "web.1"]
    assert out["metrics"]["PresentCells"] == 0
    assert out["metrics"]["SuspectCells"] == 1


def test_2_needs_a_desired_lrp() -> None:
    """bbs.md 4.2 step 2: "desired exists"; an orphan on a lost cell is not suspected."""
    out = run(domains=STALE, actual=[lrp(guid="gone", cell_id="cell-9")])
    assert out["lrp"]["suspect"] == [] and out["metrics"]["SuspectCells"] == 0


def test_2_suspects_on_missing_cells_count_as_missing_cell_ids() -> None:
    """bbs.md 4.2 step 2: cell ids of all matching rows, suspects too."""
    out = run(
        desired=[desired(instances=1)],
        actual=[
            lrp(index=0, state="UNCLAIMED", since=NOW),
            lrp(index=0, presence="SUSPECT", cell_id="cell-9"),
        ],
    )
    assert out["metrics"]["SuspectCells"] == 1
    assert out["lrp"]["suspect"] == []


def test_3_missing_indices_are_created() -> None:
    """bbs.md 4.2 step 3: missing = {0..instances-1} minus the ORDINARY indices."""
    out = run(desired=[desired(instances=3)], actual=[lrp(index=1)])
    assert out["lrp"]["create"] == ["web.0", "web.2"]
    assert out["lrp"]["start"] == ["web.0", "web.2"]
    assert out["metrics"]["LRPsMissing"] == 2


def test_3_creating_is_not_gated_by_freshness() -> None:
    """bbs.md 4.4: creating missing instances needs no fresh domain."""
    out = run(domains={}, desired=[desired(instances=1)])
    assert out["lrp"]["create"] == ["web.0"]


def test_3_extras_are_retired_only_in_a_fresh_domain() -> None:
    """bbs.md 4.2 step 3 + 4.4: extras = indices >= instances, retired if fresh."""
    rows = [lrp(index=0), lrp(index=1), lrp(index=2)]
    fresh = run(domains=FRESH, desired=[desired(instances=1)], actual=rows)
    stale = run(domains=STALE, desired=[desired(instances=1)], actual=rows)
    assert fresh["lrp"]["retire"] == ["web.1", "web.2"]
    assert fresh["metrics"]["LRPsExtra"] == 2
    assert stale["lrp"]["retire"] == [] and stale["metrics"]["LRPsExtra"] == 0


def test_3_evacuating_and_suspect_rows_never_count() -> None:
    """bbs.md 4.2: EVACUATING and SUSPECT rows never count in step 3."""
    out = run(
        desired=[desired(instances=2)],
        actual=[
            lrp(index=0),
            lrp(index=1, presence="EVACUATING", cell_id="cell-1"),
            lrp(index=1, presence="SUSPECT", cell_id="cell-7"),
        ],
    )
    assert out["lrp"]["create"] == ["web.1"]
    assert out["metrics"]["LRPsMissing"] == 1


def test_3_scale_to_zero_retires_everything_in_a_fresh_domain() -> None:
    """bbs.md 4.2 step 3: instances 0 is valid; every index is extra."""
    out = run(desired=[desired(instances=0)], actual=[lrp(index=0), lrp(index=1)])
    assert out["lrp"]["retire"] == ["web.0", "web.1"]
    assert out["metrics"]["LRPsDesired"] == 0


def test_4_orphans_are_retired_by_their_own_fresh_domain() -> None:
    """bbs.md 4.2 step 4: ORDINARY rows with no desired whose own domain is fresh."""
    out = run(
        domains={"cf-apps": NOW + 60, "other": NOW - 1},
        actual=[
            lrp(guid="a", domain="cf-apps"),
            lrp(guid="b", domain="other"),
            lrp(guid="c"),  # no domain at all: "" is never fresh (conformance.md 2)
        ],
    )
    assert out["lrp"]["retire"] == ["a.0"]
    assert out["metrics"]["LRPsExtra"] == 1


def test_5_orphaned_suspects_are_removed_only_in_a_fresh_domain() -> None:
    """bbs.md 4.2 step 5 + 4.4."""
    rows = [lrp(guid="gone", presence="SUSPECT", cell_id="cell-9", domain="cf-apps")]
    assert run(actual=rows)["lrp"]["remove_suspect"] == ["gone.0"]
    assert run(domains=STALE, actual=rows)["lrp"]["remove_suspect"] == []


def test_6_a_suspect_whose_ordinary_copy_also_runs_is_removed_even_when_stale() -> None:
    """bbs.md 4.2 step 6 + 4.4 (not gated): both RUNNING."""
    out = run(
        domains=STALE,
        desired=[desired(instances=2)],
        actual=[
            lrp(index=0),
            lrp(index=0, presence="SUSPECT", cell_id="cell-9"),
            lrp(index=1, state="CLAIMED"),
            lrp(index=1, presence="SUSPECT", cell_id="cell-9"),
        ],
    )
    assert out["lrp"]["remove_suspect"] == ["web.0"]


def test_7_a_suspect_whose_cell_is_back_is_promoted() -> None:
    """bbs.md 4.2 step 7 + 4.3 A3: the replacement is deleted whatever its state."""
    res = result(
        desired=[desired(instances=1)],
        actual=[
            lrp(index=0, state="CLAIMED", cell_id="cell-1", instance_guid="new"),
            lrp(index=0, presence="SUSPECT", cell_id="cell-1", instance_guid="old"),
        ],
    )
    assert res.lrp.promote == [("web", 0)]
    ordinary = res.lrp.written[("web", 0, "ORDINARY")]
    assert ordinary is not None and ordinary.instance_guid == "old"
    assert res.lrp.written[("web", 0, "SUSPECT")] is None


def test_8_9_suspects_running_and_claimed_are_counted_before_the_actions() -> None:
    """bbs.md 4.2 steps 8, 9 and 9 metrics: counted even if A2 removes one."""
    out = run(
        desired=[desired("a", 1), desired("b", 1)],
        actual=[
            lrp("a", 0),
            lrp("a", 0, presence="SUSPECT", cell_id="cell-9"),
            lrp("b", 0, state="UNCLAIMED", since=NOW),
            lrp("b", 0, state="CLAIMED", presence="SUSPECT", cell_id="cell-9"),
        ],
    )
    assert out["lrp"]["remove_suspect"] == ["a.0"]
    assert out["metrics"]["SuspectRunningActualLRPs"] == 1
    assert out["metrics"]["SuspectClaimedActualLRPs"] == 1


def test_10_crashed_rows_restart_when_the_back_off_has_passed() -> None:
    """bbs.md 4.2 step 10: since + B(n) <= now; n < 3 at the next pass."""
    out = run(
        desired=[desired(instances=4)],
        actual=[
            lrp(index=0, state="CRASHED", since=NOW, crash_count=2),
            lrp(index=1, state="CRASHED", since=NOW - 30, crash_count=3),
            lrp(index=2, state="CRASHED", since=NOW - 29.5, crash_count=3),
            lrp(index=3, state="CRASHED", since=0, crash_count=200),
        ],
    )
    assert out["lrp"]["unclaim"] == ["web.0", "web.1"]
    assert out["lrp"]["start"] == ["web.0", "web.1"]


def test_10_needs_a_desired_lrp() -> None:
    """bbs.md 4.2 step 10: a crashed orphan is never restarted (stale: not retired)."""
    out = run(domains=STALE, actual=[lrp(guid="gone", state="CRASHED", since=0, crash_count=1)])
    assert out["lrp"]["start"] == [] and out["lrp"]["unclaim"] == []
