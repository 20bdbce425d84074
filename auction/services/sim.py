"""Moving the live cluster forward: the shared driver over the database store.

Beat calls ``sim_advance`` every tick, and a worker calls it as soon as a request queues
work: every instant at which something is due, up to the clock's now, is handled at its
own sim instant by the rules of ``auction.sim`` (``auction.sim.driver``), each phase in
one transaction. One advance at a time in the whole deployment (a Redis lock), so
duplicated beats or two workers never handle an instant twice.

``auction_once`` and ``convergence_run`` run one auction or one pass now: the CLI and the
tests use them to drive the cluster step by step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import redis
from django.db import transaction

from auction.engine import AuctionConfig
from auction.live.publish import generation, mark_dirty, sim_advanced, suppressed
from auction.models import AuctionRun, ConvergenceRun, PendingWork
from auction.selectors.clock import clock_row
from auction.services.clock import clock_place, clock_tick
from auction.services.events import events_trim
from auction.services.locks import cluster_lock
from auction.services.retention import records_trim
from auction.services.retry import retry_locked
from auction.services.scenarios import scenario_load
from auction.services.store import DbStore
from auction.services.work import set_trigger_suppressed
from auction.services.world import world_changed
from auction.sim.cfdot import ClusterView
from auction.sim.clock import ClockState
from auction.sim.converge import convergence_pass
from auction.sim.driver import advance, auction_one, auctions_run

#: The lock every writer of simulated time shares (Diego's Locket ``auctioneer`` too).
SIMULATION_LOCK = "simulation"


@dataclass(slots=True)
class AdvanceReport:
    now: float
    instants: int = 0
    auctions: list[int] = field(default_factory=list)
    passes: list[int] = field(default_factory=list)
    work_waiting: bool = False


@dataclass(slots=True)
class AuctionSummary:
    run_id: int
    placed: int
    failed: int
    items: int


@dataclass(slots=True)
class PassSummary:
    run_id: int
    at: float
    metrics: dict[str, int]


@retry_locked
def sim_advance(now: float | None = None, *, trim_events: bool = True) -> AdvanceReport | None:
    """Advance to ``now`` (default: the clock's now); None when another advance runs."""
    with cluster_lock(SIMULATION_LOCK) as held:
        if not held:
            return None
        target = clock_row().now() if now is None else now
        first_auction = _newest(AuctionRun)
        first_pass = _newest(ConvergenceRun)
        store = DbStore()
        report = AdvanceReport(target, instants=advance(store, max(target, store.now)))
        report.auctions = list(AuctionRun.objects.filter(pk__gt=first_auction).order_by("pk")
                               .values_list("pk", flat=True))
        report.passes = list(ConvergenceRun.objects.filter(pk__gt=first_pass).order_by("pk")
                             .values_list("pk", flat=True))
        if trim_events:
            events_trim()
            if report.auctions or report.passes:
                records_trim(auctions=bool(report.auctions), passes=bool(report.passes))
        report.work_waiting = PendingWork.objects.filter(carried=False).exists()
    if report.instants:
        # Tasks may have finished: the Otto orchestrators look now (otto.md 11).
        sim_advanced()
    return report


#: Within this of the next due instant the tick advances (float steps must not strand it).
DUE_EPS_S = 1e-6
#: A tick re-reads the simulation's next due instant at least this often (wall seconds),
#: whatever the change counter says: a change nobody marked is picked up within it.
TICK_RECHECK_S = 10.0


@dataclass(slots=True)
class _NextDue:
    generation: int
    clock: ClockState
    at: float | None
    checked: float  # time.monotonic()


_next_due: _NextDue | None = None  # this process's last look (beat's ticks run in the worker)


def sim_tick_run() -> float:
    """Beat's tick: publish the clock and advance to its now, unless nothing can be due
    (dashboard.md L9); returns the clock's now.

    After an advance the clock and the simulation's next due instant are remembered with
    the world's change counter (``live.publish.generation``: every change of the clock or
    the cluster marks something). While the counter stands still and the clock has not
    reached that instant, nothing can be due: the tick is one Redis read, and on a running
    clock one mark for the clock's face; no database. A full look every ``TICK_RECHECK_S``.
    """
    global _next_due
    counter = generation()
    known = _next_due
    if (counter is not None and known is not None and known.generation == counter
            and time.monotonic() - known.checked < TICK_RECHECK_S):
        now = known.clock.now(time.time())
        if known.at is None or now + DUE_EPS_S < known.at:
            if not known.clock.paused:  # a paused clock's face stands still
                mark_dirty("clock", changed=False)
            return now
    view = clock_tick()
    report = sim_advance()
    if report is not None and counter is not None:
        # The counter was read first: a change from then on (the advance's own included)
        # makes the next tick look again.
        store = DbStore()
        _next_due = _NextDue(counter, clock_row().state, store.next_due(), time.monotonic())
    return view.now


def sim_tick_forget() -> None:
    """Forget the last look (tests)."""
    global _next_due
    _next_due = None


@retry_locked
def auctioneer_run(config: AuctionConfig | None = None) -> list[AuctionSummary]:
    """Auctions now, back to back while new work waits (auction.md 1 step 2); [] when
    another process holds the simulation."""
    with cluster_lock(SIMULATION_LOCK) as held:
        if not held:
            return []
        first = _newest(AuctionRun)
        store = _store(config)
        auctions_run(store, _instant(store))
        return _summaries(first)


@retry_locked
def auction_once(config: AuctionConfig | None = None) -> AuctionSummary | None:
    """One auction now, if any work is queued (carried-over work included)."""
    store = _store(config)
    first = _newest(AuctionRun)
    if not auction_one(store, _instant(store), PendingWork.objects.exists):
        return None
    summaries = _summaries(first)
    return summaries[0] if summaries else None


@retry_locked
def convergence_run(now: float) -> PassSummary:
    """One convergence pass at ``now``, off the timer (the next timed one stays due)."""
    store = DbStore()
    with transaction.atomic():
        snapshot, silent, otto, interval, quiet = store.convergence_input(now)
        change = convergence_pass(snapshot, silent, otto, interval, quiet)
        change.next_convergence_at = None
        store.apply(change)
    run = ConvergenceRun.objects.order_by("-pk").first()
    assert run is not None
    return PassSummary(run.pk, now, dict(run.metrics))


def _store(config: AuctionConfig | None) -> DbStore:
    store = DbStore()
    if config is not None:
        store.auction_config = lambda: config  # type: ignore[method-assign]
    return store


def _instant(store: DbStore) -> float:
    """Auctions run at the clock's now (never before what the store has handled)."""
    return max(clock_row().now(), store.now)


def _newest(model: type) -> int:
    return model.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def _summaries(after: int) -> list[AuctionSummary]:
    return [AuctionSummary(pk, placed, failed, items) for pk, placed, failed, items in
            AuctionRun.objects.filter(pk__gt=after).order_by("pk")
            .values_list("pk", "placed", "failed", "items")]


def simulate_in_database(name: str, until: float) -> ClusterView:
    """Load scenario ``name`` into the live cluster and run it to ``until`` synchronously
    (each instant in time order, no worker, no event trimming); the clock is left
    paused there. Returns the cluster as the dump prints it."""
    try:
        lock = cluster_lock(SIMULATION_LOCK)
        held = lock.__enter__()
    except redis.ConnectionError:
        lock, held = None, True  # no Redis: no other process can be advancing either
    try:
        if not held:
            raise SimulationBusy("another process is advancing the simulation; stop it first")
        previous = set_trigger_suppressed(True)  # this run handles its own auctions
        with suppressed():  # one run, not a frame per instant; open pages reload after
            scenario_load(name)  # the clock at 0, paused
            store = DbStore(trigger_auctions=False)
            advance(store, until)
            clock_place(until, paused=True)
        set_trigger_suppressed(previous)
        with transaction.atomic():
            world_changed()  # open pages draw the run's cluster
        return store.cluster_view()
    finally:
        if lock is not None:
            lock.__exit__(None, None, None)


class SimulationBusy(RuntimeError):
    """The live cluster is being advanced by someone else."""
