"""Properties of the pass over random snapshots (bbs.md 4, 9, 11), with hypothesis.

Snapshots are small (3 guids, 5 indices, 3 presences) so that collisions between the
categories -- a suspect and its replacement, a promotion over a missing index, a
retired row on a lost cell -- happen often.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from auction.bbs.cases import case_output
from auction.bbs.convergence import converge
from auction.bbs.types import (
    LRP_STATES,
    PRESENCES,
    ActualLRP,
    DesiredLRP,
    Snapshot,
    domain_is_fresh,
)
from tests.bbs.bbs_builders import apply_ops

NOW = 1000.0
GUIDS = ["a", "b", "c"]
DOMAINS = ["d1", "d2"]

_expiry = st.sampled_from([None, NOW - 1, NOW, NOW + 1])
_row_fields = st.fixed_dictionaries(
    {
        "state": st.sampled_from(LRP_STATES),
        "cell_id": st.sampled_from(["", "c1", "c2", "c3", "c9"]),
        "since": st.sampled_from([0.0, NOW - 500, NOW - 31, NOW - 30, NOW]),
        "crash_count": st.sampled_from([0, 1, 2, 3, 5, 8, 199, 200]),
        "domain": st.sampled_from(["d1", "d2", ""]),
    }
)


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    keys = draw(
        st.sets(
            st.tuples(st.sampled_from(GUIDS), st.integers(0, 4), st.sampled_from(PRESENCES)),
            max_size=25,
        )
    )
    actual = [
        ActualLRP(guid, index, presence=presence, **draw(_row_fields))
        for guid, index, presence in sorted(keys)
    ]
    desired = [
        DesiredLRP(guid, draw(st.sampled_from(DOMAINS)), draw(st.integers(0, 4)))
        for guid in draw(st.sets(st.sampled_from(GUIDS)))
    ]
    domains = draw(st.dictionaries(st.sampled_from(DOMAINS), _expiry))
    cells = frozenset(draw(st.sets(st.sampled_from(["c1", "c2", "c3"]))))
    return Snapshot(
        now=NOW,
        cells=cells,
        domains=domains,
        desired=sorted(desired, key=lambda d: d.process_guid),
        actual=actual,
    )


PROPERTY = settings(max_examples=150, deadline=None)


@PROPERTY
@given(snapshots())
def test_the_pass_is_deterministic(snapshot: Snapshot) -> None:
    """bbs.md 4.3 [project rule]: a defined action order makes one answer per snapshot."""
    first, second = converge(snapshot), converge(snapshot)
    assert case_output(first) == case_output(second)
    assert first.lrp.ops == second.lrp.ops and first.lrp.events == second.lrp.events


@PROPERTY
@given(snapshots())
def test_nothing_is_retired_or_stopped_by_a_stale_domain(snapshot: Snapshot) -> None:
    """bbs.md 4.4: retiring extras and orphans needs a fresh domain."""
    result = converge(snapshot)
    desired = {d.process_guid: d for d in snapshot.desired}
    rows = {row.key: row for row in snapshot.actual}
    for guid, index in result.lrp.retire:
        domain = desired[guid].domain if guid in desired else rows[(guid, index, "ORDINARY")].domain
        assert domain_is_fresh(snapshot.domains[domain], NOW)
    if not any(domain_is_fresh(e, NOW) for e in snapshot.domains.values()):
        assert result.lrp.retire == [] and result.lrp.stops == []


@PROPERTY
@given(snapshots())
def test_row_changes_apply_under_a_unique_key_and_starts_name_unclaimed_rows(
    snapshot: Snapshot,
) -> None:
    """bbs.md 2.1 key (process_guid, index, presence) stays unique after the ops are
    applied in order; bbs.md 4.3: every started instance is an ORDINARY UNCLAIMED row."""
    result = converge(snapshot)
    table = apply_ops({row.key: row for row in snapshot.actual}, result.lrp.ops)
    for guid, index in result.start_request.lrps:
        row = table.get((guid, index, "ORDINARY"))
        assert row is not None and row.state == "UNCLAIMED"
    assert len(set(result.start_request.lrps)) == len(result.start_request.lrps)


@PROPERTY
@given(snapshots())
def test_metrics_match_a_recount_of_the_applied_rows(snapshot: Snapshot) -> None:
    """bbs.md 9: ordinary counts and CrashingDesiredLRPs are "after the actions"."""
    result = converge(snapshot)
    table = apply_ops({row.key: row for row in snapshot.actual}, result.lrp.ops)
    ordinary = [row for row in table.values() if row.presence == "ORDINARY"]
    by_state = Counter(row.state for row in ordinary)
    metrics = result.metrics
    assert metrics["LRPsUnclaimed"] == by_state["UNCLAIMED"]
    assert metrics["LRPsClaimed"] == by_state["CLAIMED"]
    assert metrics["LRPsRunning"] == by_state["RUNNING"]
    assert metrics["CrashedActualLRPs"] == by_state["CRASHED"]
    assert metrics["CrashingDesiredLRPs"] == len(
        {row.process_guid for row in ordinary if row.state == "CRASHED"}
    )
    assert metrics["LRPsDesired"] == sum(d.instances for d in snapshot.desired)


@PROPERTY
@given(snapshots())
def test_output_lists_are_sorted_and_unique(snapshot: Snapshot) -> None:
    """bbs.md 11: identifiers sorted with plain string order, each once."""
    out = case_output(converge(snapshot))
    for values in out["lrp"].values():
        assert values == sorted(set(values))


@PROPERTY
@given(snapshots())
def test_no_evacuating_row_survives_on_a_missing_cell(snapshot: Snapshot) -> None:
    """bbs.md 4.2 step 0b, whatever the domains say."""
    result = converge(snapshot)
    table = apply_ops({row.key: row for row in snapshot.actual}, result.lrp.ops)
    for row in table.values():
        if row.presence == "EVACUATING":
            assert row.cell_id in snapshot.cells
