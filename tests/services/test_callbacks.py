"""Task completion callbacks against a real HTTP receiver (bbs.md 7 Callback, task
convergence 4, 6; the bounded, idempotent worker of bbs.md 7.1)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from auction.models import BBSEvent, Task
from auction.selectors.clock import sim_now
from auction.services.callbacks import (
    CALLBACK_ATTEMPTS,
    retry_delay,
    task_callback_run,
    task_callback_until_done,
)
from auction.services.clock import clock_reset, clock_step
from auction.services.scenarios import scenario_load
from auction.services.sim import auctioneer_run, sim_advance
from auction.services.tasks import task_cancel, task_desire

pytestmark = pytest.mark.django_db


class Receiver:
    """Answers each POST with the next scripted status and keeps the bodies."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = list(statuses)
        self.bodies: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers["Content-Length"])
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/done"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def receiver_factory() -> Iterator:
    made: list[Receiver] = []

    def make(statuses: list[int]) -> Receiver:
        made.append(Receiver(statuses))
        return made[-1]

    yield make
    for r in made:
        r.server.shutdown()


@pytest.fixture
def cluster() -> None:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)


def run_until(t: float) -> None:
    while (now := sim_now()) < t - 1e-9:
        clock_step(min(1.0, t - now))
        sim_advance()
        auctioneer_run()


def desire(url: str, guid: str = "cb") -> None:
    task_desire({"task_guid": guid, "domain": "cf-tasks", "rootfs": "docker:///busybox",
                 "memory_mb": 64, "duration_s": 5, "annotation": "note",
                 "completion_callback_url": url})


def test_a_completed_task_is_posted_then_deleted(cluster, receiver_factory) -> None:
    """Complete → RESOLVING, POST {task_guid, failed, failure_reason, result, annotation,
    created_at}; a 200 deletes the task (task_removed)."""
    receiver = receiver_factory([200])
    desire(receiver.url)
    run_until(8)
    assert Task.objects.get(task_guid="cb").state == "COMPLETED"
    assert task_callback_run("cb") == "deleted"
    assert receiver.bodies == [{"task_guid": "cb", "failed": False, "failure_reason": "",
                                "result": "", "annotation": "note", "created_at": 0}]
    assert not Task.objects.filter(task_guid="cb").exists()
    assert list(BBSEvent.objects.filter(key="cb").order_by("id").values_list("type", flat=True))[-2:] == [
        "task_changed", "task_removed"]


def test_any_answer_but_503_504_deletes(cluster, receiver_factory) -> None:
    receiver = receiver_factory([404])
    desire(receiver.url)
    task_cancel("cb")
    assert task_callback_run("cb") == "deleted"
    assert receiver.bodies[0]["failed"] is True
    assert receiver.bodies[0]["failure_reason"] == "task was cancelled"


def test_503_three_times_spends_the_budget_and_convergence_clears_the_task(
        cluster, receiver_factory, monkeypatch) -> None:
    """bbs.md 7.1: one POST per run; 503, 504, 503 spend the 3 attempts; the task stays
    RESOLVING, step 4 demotes it, step 6 hands it over again and nothing more is POSTed;
    step 5 deletes it once X = 120 s have passed since it completed."""
    receiver = receiver_factory([503, 504, 503, 200])
    desire(receiver.url)
    run_until(8)
    assert [task_callback_run("cb") for _ in range(3)] == ["retry", "retry", "resolving"]
    assert len(receiver.bodies) == CALLBACK_ATTEMPTS == 3
    assert Task.objects.get(task_guid="cb").state == "RESOLVING"
    handed: list[list[str]] = []
    # Record what convergence hands to the worker instead of queueing it on a broker.
    monkeypatch.setattr("auction.services.intents.task_callbacks_request",
                        lambda guids: handed.append(list(guids)))
    run_until(70)
    assert ["cb"] in handed
    assert Task.objects.get(task_guid="cb").state == "COMPLETED"
    assert task_callback_run("cb") == "exhausted"
    assert len(receiver.bodies) == 3
    run_until(200)  # convergence runs every 30 s: the first pass past 8 + 120
    assert not Task.objects.filter(task_guid="cb").exists()


def test_retries_back_off_and_stop_at_the_first_answer(cluster, receiver_factory) -> None:
    """bbs.md 7.1: back-off 1 s then 4 s between attempts; the 200 ends it."""
    receiver = receiver_factory([504, 503, 200])
    desire(receiver.url)
    run_until(8)
    slept: list[float] = []
    assert task_callback_until_done("cb", sleep=slept.append) == "deleted"
    assert slept == [1.0, 4.0] == [retry_delay(1), retry_delay(2)]
    assert len(receiver.bodies) == 3


def test_a_second_copy_of_the_message_does_not_post_again(cluster, receiver_factory) -> None:
    """bbs.md 7.1: while an attempt is in flight a redelivered message is ``busy``; after
    the success the row is gone and a late copy is ``skipped``: exactly one success."""
    receiver = receiver_factory([])
    desire(receiver.url)
    run_until(8)
    inner: list[str] = []

    def post_and_redeliver(url: str, payload: dict) -> int:
        inner.append(task_callback_run("cb"))  # the duplicate arrives mid-POST
        receiver.bodies.append(payload)
        return 200

    assert task_callback_run("cb", post=post_and_redeliver) == "deleted"
    assert inner == ["busy"]
    assert task_callback_run("cb") == "skipped"
    assert len(receiver.bodies) == 1


def test_success_after_convergence_demoted_the_task_still_deletes_it(cluster, receiver_factory) -> None:
    """A POST answered after step 4 moved the task back to COMPLETED still counts: the row
    is deleted, so step 6 has nothing to hand over again (bbs.md 7.1)."""
    receiver = receiver_factory([])
    desire(receiver.url)
    run_until(8)

    def slow_post(url: str, payload: dict) -> int:
        Task.objects.filter(task_guid="cb").update(state="COMPLETED")
        return 200

    assert task_callback_run("cb", post=slow_post) == "deleted"
    assert not Task.objects.filter(task_guid="cb").exists()


def test_no_answer_counts_as_a_retry(cluster) -> None:
    desire("http://127.0.0.1:9/nobody-listens")
    run_until(8)
    assert task_callback_run("cb") == "retry"
    assert Task.objects.get(task_guid="cb").state == "RESOLVING"


def test_callbacks_are_routed_to_their_own_queue() -> None:
    """bbs.md 7.1: the clock and auctions never wait behind a callback."""
    from diego_web.celery import app

    assert app.amqp.router.route({}, "auction.tasks.task_callback")["queue"].name == "callbacks"
    assert app.amqp.router.route({}, "auction.tasks.auction_run")["queue"].name == "celery"
    assert app.amqp.router.route({}, "auction.tasks.sim_tick")["queue"].name == "celery"


def test_tasks_without_a_url_and_unfinished_tasks_are_skipped(cluster) -> None:
    assert task_callback_run("task-c") == "skipped"
    assert task_callback_run("missing") == "skipped"
