"""The metrics header (dashboard.md M1), the feed (M2) and the /events/ history."""

from __future__ import annotations

import re

import pytest

from auction.models import AuctionRun, BBSEvent, ConvergenceRun
from auction.selectors.feed import FEED_ROWS, events_page, feed_rows
from auction.selectors.metrics import POINTS, metrics_header
from auction.services.cells import cell_fail
from auction.services.clock import clock_reset
from auction.services.events import event_record
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run, convergence_run

pytestmark = pytest.mark.django_db

DIEGO_NAMES = [
    "LRPsDesired", "LRPsRunning", "LRPsClaimed", "LRPsUnclaimed", "CrashedActualLRPs",
    "CrashingDesiredLRPs", "LRPsMissing", "LRPsExtra", "SuspectRunningActualLRPs", "PresentCells",
    "SuspectCells", "TasksPending", "TasksRunning", "TasksCompleted", "TasksResolving",
    "ConvergenceLRPDuration", "ConvergenceLRPRuns", "AuctioneerLRPAuctionsStarted",
    "AuctioneerLRPAuctionsFailed", "AuctioneerTaskAuctionsStarted", "AuctioneerTaskAuctionsFailed",
    "AuctioneerFetchStatesDuration", "AuctioneerFailedCellStateRequests",
]


@pytest.fixture(autouse=True)
def frozen_clock() -> None:
    clock_reset(0.0, paused=True)


def by_name() -> dict:
    return {m.name: m for m in metrics_header()}


def test_header_uses_diegos_names_verbatim_with_values_and_tooltips() -> None:
    """M1: each of Diego's names, a value, a tooltip; Domain.<name> for fresh domains."""
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    convergence_run(30.0)
    metrics = by_name()
    assert [n for n in DIEGO_NAMES if n not in metrics] == []
    assert metrics["LRPsDesired"].value == 5 and metrics["LRPsDesired"].text == "5"
    assert metrics["PresentCells"].value == 4
    assert metrics["ConvergenceLRPRuns"].value == 1
    assert metrics["AuctioneerLRPAuctionsStarted"].value == 5
    assert metrics["AuctioneerTaskAuctionsStarted"].value == 2
    assert "Domain.cf-apps" in metrics and "Domain.cf-tasks" in metrics
    assert all(m.tooltip for m in metrics.values())


def test_sparklines_hold_at_most_60_points() -> None:
    """M1: a 60-point sparkline from the stored passes."""
    for i in range(POINTS + 5):
        ConvergenceRun.objects.create(at=30.0 * i, duration_ns=1000, metrics={"LRPsMissing": i})
    m = by_name()["LRPsMissing"]
    assert len(m.series) == POINTS and m.series[-1] == POINTS + 4 and m.series[0] == 5
    assert len(m.points.split()) == POINTS


def test_header_never_contradicts_the_grid() -> None:
    """M1 (honest numbers): instances and tasks by state are counted now, so the header
    agrees with the grid after an auction; a gauge only a pass knows says its pass."""
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    convergence_run(30.0)  # the pass saw 5 UNCLAIMED
    auctioneer_run()  # ... which are CLAIMED now
    metrics = by_name()
    assert (metrics["LRPsUnclaimed"].value, metrics["LRPsClaimed"].value) == (0, 5)
    assert metrics["LRPsClaimed"].asof == ""
    run = ConvergenceRun.objects.get()
    assert metrics["PresentCells"].asof == f"pass {run.pk} · 0:00:30.0"


def test_auction_counters_read_each_records_counts_and_old_records_still_count() -> None:
    """M1: the auctioneer's series come from each record's counts, not from decoding its
    placements (100,000 after a big scale, for each of 60 records); a record kept before
    it carried them is counted from its placements and failures."""
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    auctioneer_run()
    series = {n: by_name()[n].series for n in ("AuctioneerLRPAuctionsStarted", "AuctioneerTaskAuctionsStarted")}
    assert series["AuctioneerLRPAuctionsStarted"][-1] == 5 and series["AuctioneerTaskAuctionsStarted"][-1] >= 1
    run = AuctionRun.objects.order_by("-id").first()
    placements = run.placements
    AuctionRun.objects.filter(pk=run.pk).update(placements={})  # the counts alone answer
    assert {n: by_name()[n].series for n in series} == series
    counts = {k: v for k, v in run.failure_counts.items() if k != "placed"}
    AuctionRun.objects.filter(pk=run.pk).update(placements=placements, failure_counts=counts)
    assert {n: by_name()[n].series for n in series} == series


def test_warn_and_crit_show_an_icon_not_colour_alone(client) -> None:  # type: ignore[no-untyped-def]
    """M1, U4: ConvergenceLRPDuration warns at 10 s, is critical at 20 s; fetch at 2 s / 5 s."""
    ConvergenceRun.objects.create(at=30.0, duration_ns=12 * 10**9, metrics={})
    AuctionRun.objects.create(started_at=1.0, fetch_ms=6000)
    metrics = by_name()
    assert metrics["ConvergenceLRPDuration"].level == "warn"
    assert metrics["AuctioneerFetchStatesDuration"].level == "crit"
    html = client.get("/lrps/").content.decode()
    block = re.search(r'id="metric-ConvergenceLRPDuration".*?</div>', html, re.S).group(0)
    assert "⚠" in block and "warning" in block
    block = re.search(r'id="metric-AuctioneerFetchStatesDuration".*?</div>', html, re.S).group(0)
    assert "✖" in block and "critical" in block
    ConvergenceRun.objects.create(at=60.0, duration_ns=25 * 10**9, metrics={})
    assert by_name()["ConvergenceLRPDuration"].level == "crit"


def test_failed_cell_state_requests_count_silent_cells_with_presence() -> None:
    """bbs.md 9: a failed cell is still asked until its presence lapses."""
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)
    cell_fail("cell-1")
    assert by_name()["AuctioneerFailedCellStateRequests"].value == 1
    clock_reset(20.0, paused=True)
    assert by_name()["AuctioneerFailedCellStateRequests"].value == 0


def test_feed_is_newest_first_folds_bursts_and_caps_at_200() -> None:
    """M2: newest first, max 200 rows, bursts fold into "+n similar"."""
    for i in range(38):
        event_record("actual_lrp_instance_created", 1.0, key=f"web.{i}")
    event_record("cell_fail", 2.0, key="cell-1", cell_id="cell-1", source="dashboard")
    rows = feed_rows()
    assert rows[0].type == "cell_fail" and rows[0].family == "chaos"
    assert rows[1].type == "actual_lrp_instance_created" and rows[1].similar == 37
    assert rows[1].apps == {"web"}
    BBSEvent.objects.all().delete()
    for i in range(500):
        event_record("a" if i % 2 else "b", 1.0, key=str(i))
    rows = feed_rows()
    assert len(rows) == FEED_ROWS and rows[0].key == "499"


def test_the_feed_reads_what_each_event_shows_once_and_never_a_stale_one() -> None:
    """M2: a tick decodes only events it has not seen; what it shows equals a cold read,
    and a database numbered again (a flush) shows the new events, not the kept ones."""
    from auction.selectors import feed

    for i in range(30):
        event_record("actual_lrp_instance_created" if i % 3 else "cell_fail", 1.0 + i, key=f"web.{i}")
    warm = feed_rows()
    event_record("clock_pause", 40.0, key="clock", source="dashboard")
    warm = feed_rows()
    feed.feed_fields_forget()
    cold = feed_rows()
    assert [(r.id, r.type, r.key, r.text, r.similar, r.apps) for r in warm] == \
        [(r.id, r.type, r.key, r.text, r.similar, r.apps) for r in cold]
    first = BBSEvent.objects.order_by("id").first()
    BBSEvent.objects.all().delete()
    BBSEvent.objects.create(id=first.id, at=first.at, type=first.type, key="api.7", cell_id="", data={})
    assert [r.key for r in feed_rows()] == ["api.7"]


def test_feed_filters_by_type_app_and_cell() -> None:
    """M2: filter by type, app or cell."""
    event_record("actual_lrp_instance_changed", 1.0, key="web.0", cell_id="cell-1")
    event_record("actual_lrp_instance_changed", 1.0, key="api.0", cell_id="cell-2")
    event_record("clock_pause", 1.0, key="clock", source="dashboard")
    assert [r.key for r in feed_rows(app="web")] == ["web.0"]
    assert [r.key for r in feed_rows(cell="cell-2")] == ["api.0"]
    assert [r.key for r in feed_rows(type_="control")] == ["clock"]
    assert [r.key for r in feed_rows(type_="actual_lrp")] == ["api.0"]  # folded: api.0 first, +1


def test_events_page_pages_history_with_filters(client) -> None:  # type: ignore[no-untyped-def]
    """M2, KOV #84: /events/ pages the whole history, 50 a page, filters kept in the links."""
    for i in range(120):
        event_record("actual_lrp_instance_created", 1.0, key=f"web.{i}", cell_id="cell-1")
    event_record("task_created", 1.0, key="t1")
    page = events_page(1)
    assert page.paginator.count == 121 and len(page.object_list) == 50
    html = client.get("/events/?app=web&page=2").content.decode()
    assert "page 2 of 3 (120 events)" in html
    assert 'href="?app=web&amp;page=3"' in html and 'href="?app=web&amp;page=1"' in html
    table = re.search(r'<table class="data events" id="events">.*?</table>', html, re.S).group(0)
    assert table.count("<tr data-id=") == 50 and 'data-type="task_created"' not in table
    # A page past the end shows the last one, not an error.
    assert client.get("/events/?page=99").status_code == 200
    assert client.get("/events/?page=abc").status_code == 200


def test_every_page_has_the_header_and_feed_drawer(client) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md 'all but the kiosk share a metrics header, clock bar, feed drawer'."""
    for url in ("/grid/", "/lrps/", "/events/"):
        html = client.get(url).content.decode()
        assert 'id="metrics"' in html and 'id="feed-list"' in html and 'id="next-pass"' in html, url


def test_feed_says_what_an_audited_change_did() -> None:
    """AD4 / M2: an audit entry's diff reads "instances 3 → 5"; a creation lists its values."""
    from auction.services.audit import audit_record

    audit_record("desired_lrp_update", "web", 1.0, source="dashboard", user=None,
                 diff={"instances": [3, 5]})
    audit_record("desired_lrp_desire", "api", 1.0, source="api", user=None,
                 diff={"process_guid": [None, "api"], "instances": [None, 2]})
    texts = [r.text for r in feed_rows()]
    assert texts == ["api instances 2 (api)", "web instances 3 → 5 (dashboard)"]


def test_events_type_all_is_every_type(client) -> None:  # type: ignore[no-untyped-def]
    """M2: ``/events/?type=all`` lists every event, as no type filter does."""
    from auction.services.events import event_record

    event_record("clock_pause", 1.0, key="clock", source="dashboard")
    event_record("cell_fail", 2.0, key="cell-1", cell_id="cell-1")
    html = client.get("/events/?type=all").content.decode()
    assert 'data-type="clock_pause"' in html and 'data-type="cell_fail"' in html
