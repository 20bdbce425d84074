"""The simulated cluster over the database: reps, convergence passes, chaos (bbs.md 3, 4, 6)."""

from __future__ import annotations

import time

import pytest

from auction.models import ActualLRP, Cell, ConvergenceRun, Domain, PendingWork, Task
from auction.selectors.clock import sim_now
from auction.services.cells import actual_lrp_crash, cell_drain, cell_fail, cell_restore
from auction.services.clock import clock_reset, clock_resume, clock_step
from auction.services.domains import domain_upsert
from auction.services.lrps import desired_lrp_desire
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run, sim_advance

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster() -> None:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)


def run_until(t: float) -> None:
    """Step the paused clock to ``t`` in 1 s steps, the auctioneer answering after each."""
    while (now := sim_now()) < t - 1e-9:
        clock_step(min(1.0, t - now))
        sim_advance()
        auctioneer_run()


def states(guid: str) -> list[tuple[int, str, str, str]]:
    return sorted(ActualLRP.objects.filter(desired_id=guid).values_list("index", "presence", "state", "cell_id"))


def test_claimed_instances_start_after_their_delay(cluster: None) -> None:
    """bbs.md 2.3 Start: CLAIMED → RUNNING with net info after the app's start delay."""
    run_until(1)
    assert {s for _, _, s, _ in states("lrp-a")} == {"CLAIMED"}
    run_until(4)
    rows = list(ActualLRP.objects.filter(desired_id="lrp-a"))
    assert {r.state for r in rows} == {"RUNNING"}
    assert all(r.address and r.since == pytest.approx(4.0, abs=1.0) for r in rows)


def test_tasks_run_for_their_duration_then_complete(cluster: None) -> None:
    """bbs.md 7: RUNNING → COMPLETED after the run time; deleted 120 s after completion."""
    run_until(2)
    assert Task.objects.get(task_guid="task-d").state == "RUNNING"
    run_until(95)
    task = Task.objects.get(task_guid="task-d")
    assert (task.state, task.failed) == ("COMPLETED", False)
    assert task.first_completed_at == pytest.approx(91.0, abs=1.0)
    run_until(240)
    assert not Task.objects.filter(task_guid="task-d").exists()


def test_convergence_runs_every_interval(cluster: None) -> None:
    """bbs.md 4.1: timer only, first pass 30 s after start, then every 30 s."""
    run_until(95)
    assert sorted(ConvergenceRun.objects.values_list("at", flat=True)) == [30.0, 60.0, 90.0]
    metrics = ConvergenceRun.objects.order_by("at").last().metrics
    assert metrics["LRPsDesired"] == 5 and metrics["LRPsRunning"] == 5
    assert metrics["PresentCells"] == 4


def test_a_clock_reset_starts_a_new_world_at_its_instant(cluster: None) -> None:
    """bbs.md 4.1: a reset clock (a benchmark's or a test's new world) is a new epoch: the
    store advanced to its instant and no further, the first pass one interval later. A
    world that had run to 95 s must not leave the new one's first 95 s skipped."""
    from auction.models import SimClock

    run_until(95)
    clock_reset(0.0, paused=True)
    clock = SimClock.objects.get(pk=1)
    assert (clock.advanced_to, clock.next_convergence_at) == (0.0, 30.0)
    ConvergenceRun.objects.all().delete()
    run_until(35)
    assert list(ConvergenceRun.objects.values_list("at", flat=True)) == [30.0]


def test_failed_cell_replacements_then_suspects_resolve(cluster: None) -> None:
    """bbs.md 6.2 / dashboard.md C3: SUSPECT + replacement elsewhere; Start removes the suspect."""
    run_until(10)
    victim = ActualLRP.objects.filter(desired_id="lrp-a").first().cell_id
    on_victim = set(ActualLRP.objects.filter(cell_id=victim).values_list("desired_id", "index"))
    cell_fail(victim)
    run_until(31)  # presence lapsed (10-15 s) → the pass at 30 s sees it
    suspects = set(ActualLRP.objects.filter(presence="SUSPECT").values_list("desired_id", "index"))
    assert suspects == on_victim
    metrics = ConvergenceRun.objects.get(at=30.0).metrics
    assert metrics["SuspectCells"] == 1 and metrics["PresentCells"] == 3
    run_until(40)
    assert not ActualLRP.objects.filter(presence="SUSPECT").exists()
    for guid, index in on_victim:
        row = ActualLRP.objects.get(desired_id=guid, index=index)
        assert row.state == "RUNNING" and row.cell_id != victim


def test_cell_back_before_replacement_promotes_the_suspect(cluster: None) -> None:
    """bbs.md 6.2: the cell returns → next pass promotes the suspect, replacement goes."""
    run_until(10)
    Cell.objects.exclude(cell_id="cell-1").update(state="failed", presence_lost_at=11.0)
    cell_fail("cell-1")
    run_until(31)
    assert ActualLRP.objects.filter(presence="SUSPECT").exists()
    for cell_id in ("cell-1", "cell-2", "cell-3", "cell-4"):
        cell_restore(cell_id)
    run_until(61)
    assert not ActualLRP.objects.filter(presence="SUSPECT").exists()
    assert set(ActualLRP.objects.values_list("state", flat=True)) <= {"RUNNING", "CLAIMED", "UNCLAIMED"}


def test_crash_loop_follows_the_back_off(cluster: None) -> None:
    """bbs.md 3: crashes 1 and 2 restart at once; the 3rd waits 30 s (CRASHED)."""
    run_until(5)
    actual_lrp_crash("lrp-b", 0)
    assert ActualLRP.objects.get(desired_id="lrp-b", index=0).crash_count == 1
    run_until(10)
    assert ActualLRP.objects.get(desired_id="lrp-b", index=0).state == "RUNNING"
    actual_lrp_crash("lrp-b", 0)
    run_until(15)
    actual_lrp_crash("lrp-b", 0)
    row = ActualLRP.objects.get(desired_id="lrp-b", index=0)
    assert (row.state, row.crash_count) == ("CRASHED", 3)
    crashed_at = row.since
    run_until(crashed_at + 29)
    assert ActualLRP.objects.get(desired_id="lrp-b", index=0).state == "CRASHED"
    run_until(crashed_at + 65)  # the first pass at or after since + 30 restarts it
    row = ActualLRP.objects.get(desired_id="lrp-b", index=0)
    assert row.state in ("CLAIMED", "RUNNING") and row.crash_count == 3


def test_stale_domain_keeps_extras_until_bumped(cluster: None) -> None:
    """bbs.md 4.4: extras are retired only while their domain is fresh."""
    run_until(5)
    ActualLRP.objects.create(desired_id="lrp-a", index=7, domain="cf-apps", state="RUNNING",
                             cell_id="cell-1", instance_guid="x", since=5.0)
    Domain.objects.filter(name="cf-apps").update(expires_at=6.0)
    run_until(31)
    assert ActualLRP.objects.filter(desired_id="lrp-a", index=7).exists()
    assert ConvergenceRun.objects.get(at=30.0).metrics["LRPsExtra"] == 0
    domain_upsert("cf-apps", 120)
    run_until(61)
    assert not ActualLRP.objects.filter(desired_id="lrp-a", index=7).exists()
    assert ConvergenceRun.objects.get(at=60.0).lrp["retire"] == ["lrp-a.7"]


def test_drain_evacuates_with_copies_until_replacements_run(cluster: None) -> None:
    """bbs.md 6.3: EVACUATING copies serve until the replacement runs; then the cell empties."""
    run_until(5)
    cell = ActualLRP.objects.filter(desired_id="lrp-b").first().cell_id
    on_cell = set(ActualLRP.objects.filter(cell_id=cell, state="RUNNING").values_list("desired_id", "index"))
    cell_drain(cell)
    copies = set(ActualLRP.objects.filter(presence="EVACUATING").values_list("desired_id", "index"))
    assert copies == on_cell
    assert PendingWork.objects.filter(reason="evacuation").count() == len(on_cell)
    run_until(30)
    assert not ActualLRP.objects.filter(cell_id=cell).exists()
    for guid, index in on_cell:
        assert ActualLRP.objects.get(desired_id=guid, index=index, presence="ORDINARY").state == "RUNNING"
    assert Cell.objects.get(cell_id=cell).presence_lost_at is not None


def test_tasks_on_a_lost_cell_fail(cluster: None) -> None:
    """bbs.md 7 step 3: `cell disappeared before completion`."""
    run_until(3)
    cell = Task.objects.get(task_guid="task-c").cell_id
    cell_fail(cell)
    run_until(31)
    task = Task.objects.get(task_guid="task-c")
    assert (task.state, task.failed, task.failure_reason) == (
        "COMPLETED", True, "cell disappeared before completion")


def test_crash_probability_is_seeded(cluster: None) -> None:
    """Crash injection per app: the same seed gives the same crashes; p=1 always crashes."""

    def crashed_indices(probability: float) -> list[int]:
        scenario_load("seed-example")
        clock_reset(0.0, paused=True)
        desired_lrp_desire({"process_guid": "flaky", "domain": "cf-apps", "instances": 8,
                            "memory_mb": 64, "crash_probability": probability, "crash_after_s": 5})
        run_until(12)
        return sorted(ActualLRP.objects.filter(desired_id="flaky", crash_count__gte=1)
                      .values_list("index", flat=True))

    assert crashed_indices(1.0) == list(range(8))
    assert crashed_indices(0.0) == []
    half = crashed_indices(0.5)
    assert 0 < len(half) < 8
    assert crashed_indices(0.5) == half


@pytest.fixture
def ticks(monkeypatch):  # type: ignore[no-untyped-def]
    """Beat's tick with its advances and its clock marks counted."""
    from auction.services import sim

    sim.sim_tick_forget()
    seen: dict[str, int] = {"advance": 0, "mark": 0}
    real_advance, real_mark = sim.sim_advance, sim.mark_dirty

    def advance():  # type: ignore[no-untyped-def]
        seen["advance"] += 1
        return real_advance()

    def mark(*keys, **kwargs):  # type: ignore[no-untyped-def]
        seen["mark"] += 1
        return real_mark(*keys, **kwargs)

    monkeypatch.setattr(sim, "sim_advance", advance)
    monkeypatch.setattr(sim, "mark_dirty", mark)
    yield seen
    sim.sim_tick_forget()


def _settle(seen: dict[str, int]) -> None:
    """Ticks until one does not advance (the advances' own marks make the next look)."""
    from auction.services.sim import sim_tick_run

    for _ in range(5):
        before = seen["advance"]
        sim_tick_run()
        if seen["advance"] == before:
            return
    raise AssertionError(f"every tick advanced: {seen}")


def test_beats_tick_on_a_paused_clock_with_nothing_due_does_nothing_dashboard_md_L9(  # type: ignore[no-untyped-def]
        cluster: None, ticks, django_capture_on_commit_callbacks) -> None:
    """dashboard.md L9: paused, reached, no new work: no advance and no clock frame."""
    from auction.services.sim import sim_tick_run

    assert PendingWork.objects.filter(carried=False).exists()  # the seed's work is queued
    sim_tick_run()
    assert ticks["advance"] == 1  # nothing remembered: a full look, the queued work placed
    _settle(ticks)
    before = dict(ticks)
    for _ in range(3):
        assert sim_tick_run() == sim_now()
    assert ticks == before  # neither an advance nor a mark for a face that stands still
    with django_capture_on_commit_callbacks(execute=True):
        clock_step(1.0)  # a change of the clock (marked after commit): look again
    sim_tick_run()
    assert ticks["advance"] == before["advance"] + 1


def test_beats_tick_on_a_running_clock_advances_only_when_something_can_be_due_dashboard_md_L9(cluster: None, ticks) -> None:  # type: ignore[no-untyped-def]
    """dashboard.md L9: after an advance the tick remembers the next due instant; before it,
    with no change marked, the tick only moves the clock's face. A change, reaching the
    instant, or the periodic look makes it advance."""
    from auction.live.publish import generation, mark_dirty
    from auction.services import sim
    from auction.services.store import DbStore

    auctioneer_run()
    clock_resume()
    _settle(ticks)
    due = DbStore().next_due()
    assert due is not None and due > sim_now() + 1  # the seed's next event is seconds away
    advances, marks = ticks["advance"], ticks["mark"]
    sim.sim_tick_run()
    assert ticks["advance"] == advances and ticks["mark"] == marks + 1  # the face moved, nothing else
    mark_dirty("tray")  # something changed: look again
    sim.sim_tick_run()
    assert ticks["advance"] == advances + 1
    _settle(ticks)
    advances = ticks["advance"]
    known = sim._next_due
    assert known is not None
    # The counter unchanged, the remembered instant reached by the clock: advance.
    sim._next_due = sim._NextDue(generation(), known.clock, sim_now() - 0.5, time.monotonic())
    sim.sim_tick_run()
    assert ticks["advance"] == advances + 1
    # ... and however long since, a full look every TICK_RECHECK_S.
    sim._next_due = sim._NextDue(generation(), known.clock, sim_now() + 100,
                                 time.monotonic() - sim.TICK_RECHECK_S)
    sim.sim_tick_run()
    assert ticks["advance"] == advances + 2
