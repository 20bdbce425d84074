"""After-commit intents: the store writes, the shell acts once the change is kept
(docs/architecture.md "The shell"; dashboard.md L3 for the live marks, auction.md 1.2
for the auctioneer's trigger, otto.md 9 for the re-feed, bbs.md 7 for callbacks)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction

from auction.live.publish import commit_marks_forget
from auction.services import intents as runner
from auction.services import work, workers
from auction.services.clock import clock_reset
from auction.services.scenarios import scenario_load
from auction.services.sim import convergence_run
from auction.services.store import DbStore
from auction.sim.changes import (
    AuctionWanted,
    CallbacksDue,
    CellsChanged,
    ChangeSet,
    Intent,
    LiveChanged,
    OttoRefeed,
    WorldMoved,
)
from auction.sim.model import QueuedWork

pytestmark = pytest.mark.django_db


@pytest.fixture
def cluster() -> None:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """What reaches the workers, by task name (the trigger switched on, the broker recorded)."""
    out: list[tuple[str, tuple[Any, ...]]] = []
    monkeypatch.setattr(work, "worker_send", lambda name, *args, **kw: out.append((name, args)))
    previous = work.set_trigger_suppressed(False)
    yield out
    work.set_trigger_suppressed(previous)


def queued_work(at: float = 1.0) -> ChangeSet:
    return ChangeSet(at, queue_add=[QueuedWork(0, "lrp", process_guid="lrp-a", index=9, queued_at=at,
                                               reason="test")])


def test_new_work_triggers_an_auction_after_the_commit_not_before(
        cluster: None, sent: list, django_capture_on_commit_callbacks: Any) -> None:
    """auction.md 1.2: a queued start request asks a worker to run the auctioneer,
    once the request's row is there for it to read."""
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        with transaction.atomic():
            DbStore().apply(queued_work())
        assert sent == []  # committed to the outer test transaction only: nothing yet
    for callback in callbacks:
        callback()
    assert sent == [(workers.AUCTION_RUN, ())]


def test_nothing_is_sent_when_the_transaction_rolls_back(
        cluster: None, sent: list, django_capture_on_commit_callbacks: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A change undone leaves no trace outside the database: no auction asked for, no
    Otto re-feed, no callback, no live mark (dashboard.md L3)."""
    refed: list[float] = []
    monkeypatch.setattr(runner, "otto_refeed", refed.append)
    marked: list[str] = []
    monkeypatch.setattr("auction.live.publish.mark_dirty", lambda *keys, **kw: bool(marked.extend(keys)))
    change = queued_work()
    change.intents.append(OttoRefeed(1.0))
    change.callbacks.append("task-d")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            DbStore().apply(change)
            raise RuntimeError("undone")
    assert (sent, refed, marked) == ([], [], [])
    assert callbacks == []


def test_the_store_collects_the_intents_of_what_it_wrote(cluster: None) -> None:
    """The rule's intents first, then the store's: the auction wanted, the callbacks,
    the cells changed (and the auction list, when an auction is recorded: dashboard.md A1)."""
    got: list[list[Intent]] = []
    store = DbStore(after_commit=got.append)
    change = queued_work()
    change.intents.append(OttoRefeed(1.0))
    change.callbacks.append("task-d")
    change.touched.add("cell-z1-0")
    store.apply(change)
    assert got == [[OttoRefeed(1.0), AuctionWanted(), CallbacksDue(("task-d",)), CellsChanged(("cell-z1-0",))]]
    got.clear()
    DbStore(after_commit=got.append, trigger_auctions=False).apply(queued_work())
    assert got == [[CellsChanged(())]]  # a store that runs its own auctions asks for none
    got.clear()
    store.apply(ChangeSet(2.0))
    assert got == [[]]


def test_a_convergence_pass_refeeds_otto_after_its_commit(
        cluster: None, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any) -> None:
    """otto.md 9: after each pass, PENDING Otto tasks with no live auction go back to the
    open auction; the pass's rule carries the intent, the shell runs it after commit."""
    refed: list[float] = []
    monkeypatch.setattr(runner, "otto_refeed", refed.append)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        convergence_run(30.0)
        assert refed == []
    for callback in callbacks:
        callback()
    assert refed == [30.0]


def test_every_kind_of_intent_is_run(
        cluster: None, sent: list, monkeypatch: pytest.MonkeyPatch,
        django_capture_on_commit_callbacks: Any) -> None:
    """One of each kind through the runner: each reaches what acts on it, once."""
    refed: list[float] = []
    monkeypatch.setattr(runner, "otto_refeed", refed.append)
    told: list[object] = []
    monkeypatch.setattr(runner, "clock_changed", lambda: bool(told.append(None)))
    handed: list[list[str]] = []
    monkeypatch.setattr(runner, "task_callbacks_request", lambda guids: handed.append(list(guids)))
    marked: list[tuple[str, ...]] = []
    monkeypatch.setattr("auction.live.publish.mark_dirty", lambda *keys, **kw: bool(marked.append(keys)))
    commit_marks_forget()  # the fixture's own marks, never committed
    with django_capture_on_commit_callbacks(execute=True):
        runner.intents_after_commit([
            AuctionWanted(), AuctionWanted(), OttoRefeed(5.0), OttoRefeed(6.0),
            CallbacksDue(("t1", "t2")), CallbacksDue(("t2",)), CellsChanged(("c2",)),
            CellsChanged(("c1",)), LiveChanged(("auctions",)), WorldMoved(), WorldMoved()])
    assert sent == [(workers.AUCTION_RUN, ())]
    assert refed == [6.0]
    assert handed == [["t1", "t2"]]
    assert marked == [("cell:c1", "cell:c2", "tray", "lrps", "controls", "auctions", "epoch")]  # one mark
    assert told == [None]


def test_each_worker_name_is_a_celery_task() -> None:
    """A service names the task it hands work to; the name must be a task's."""
    from celery import current_app

    from auction import tasks  # noqa: F401 - registers the tasks

    names = [getattr(workers, n) for n in dir(workers) if n.isupper()]
    assert names and all(name in current_app.tasks for name in names)
