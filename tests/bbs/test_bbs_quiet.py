"""docs/behaviour/bbs.md 4.5: a quiet LRP half answers the next pass over the same rows,
and only then; the clock's three rules (steps 1 and 10, domain expiry) are never skipped."""

from __future__ import annotations

from dataclasses import replace

from auction.bbs.cases import case_output, parse_case
from auction.bbs.convergence import converge
from auction.bbs.types import Snapshot
from tests.bbs.bbs_builders import NOW, case, desired, lrp


def settled(**fields: object) -> Snapshot:
    """web wants 2, both RUNNING on cell-1: nothing to do."""
    doc = case(desired=[desired(instances=2)], actual=[lrp(index=0), lrp(index=1)])
    doc.update(fields)
    return parse_case(doc)


def later(snapshot: Snapshot, seconds: float, **changes: object) -> Snapshot:
    """The same rows (the very list, as a store hands them when none was written) later."""
    return replace(snapshot, now=snapshot.now + seconds, **changes)


def test_a_settled_half_answers_the_next_pass_over_the_same_rows() -> None:
    first = converge(settled())
    assert first.quiet is not None
    again = converge(later(first.quiet.snapshot, 30), quiet=first.quiet)
    assert again.selection is first.selection  # not walked again
    assert case_output(again) == case_output(converge(later(first.quiet.snapshot, 30)))
    assert again.metrics == first.metrics


def test_another_list_of_rows_is_walked_again_even_when_equal() -> None:
    """Only the store knows no row was written: it says so by handing the very list."""
    first = converge(settled())
    assert first.quiet is not None
    copy = later(first.quiet.snapshot, 30, actual=list(first.quiet.snapshot.actual))
    assert converge(copy, quiet=first.quiet).selection is not first.selection


def test_changed_cells_desired_or_config_are_walked_again() -> None:
    first = converge(settled())
    assert first.quiet is not None
    snap = first.quiet.snapshot
    lost = converge(later(snap, 30, cells=frozenset()), quiet=first.quiet)
    assert lost.selection is not first.selection
    assert case_output(lost)["lrp"]["suspect"] == ["web.0", "web.1"]
    scaled = converge(later(snap, 30, desired=[replace(snap.desired[0], instances=3)]), quiet=first.quiet)
    assert case_output(scaled)["lrp"]["create"] == ["web.2"]
    stricter = converge(later(snap, 30, config=replace(snap.config, stale_unclaimed_s=1)), quiet=first.quiet)
    assert stricter.selection is not first.selection


def test_a_domain_that_expires_between_passes_is_pruned() -> None:
    """bbs.md 4.2 step 0a reads the clock: the quiet half does not answer past an expiry."""
    first = converge(settled(domains={"cf-apps": NOW + 20}))
    assert first.quiet is not None
    after = converge(later(first.quiet.snapshot, 30), quiet=first.quiet)
    assert after.selection is not first.selection
    assert after.lrp.pruned_domains == ["cf-apps"]
    assert "Domain.cf-apps" not in after.metrics


def test_an_unclaimed_row_keeps_the_half_from_being_quiet() -> None:
    """Step 1 reads the clock: an UNCLAIMED row 10 s old is re-auctioned 21 s later."""
    doc = case(desired=[desired(instances=2)],
               actual=[lrp(index=0), lrp(index=1, state="UNCLAIMED", since=NOW - 10)])
    first = converge(parse_case(doc))
    assert first.lrp.start == [] and first.quiet is None
    assert converge(later(parse_case(doc), 21)).lrp.start == [("web", 1)]


def test_a_crashed_row_keeps_the_half_from_being_quiet() -> None:
    """Step 10 reads the clock: a CRASHED row waits out its back-off, then restarts."""
    doc = case(desired=[desired(instances=2)],
               actual=[lrp(index=0), lrp(index=1, state="CRASHED", since=NOW - 1, crash_count=3)])
    first = converge(parse_case(doc))
    assert first.lrp.start == [] and first.quiet is None
    assert converge(later(parse_case(doc), 60)).lrp.start == [("web", 1)]


def test_a_half_that_acted_is_not_quiet() -> None:
    first = converge(parse_case(case(desired=[desired(instances=3)], actual=[lrp(index=0)])))
    assert first.lrp.create and first.quiet is None
