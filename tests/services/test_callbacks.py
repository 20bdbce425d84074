"""Task completion callbacks against a real HTTP receiver (bbs.md 7 Callback, task convergence 4, 6)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from auction.models import BBSEvent, Task
from auction.selectors.clock import sim_now
from auction.services.callbacks import task_callback_run
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


def test_503_three_times_leaves_it_resolving_until_convergence_hands_it_back(
        cluster, receiver_factory, monkeypatch) -> None:
    """3 attempts in all; then RESOLVING until step 4 demotes it (updated_at < now − 30)
    and step 6 hands it to the worker again, which now succeeds."""
    receiver = receiver_factory([503, 504, 503, 200])
    desire(receiver.url)
    run_until(8)
    assert task_callback_run("cb") == "resolving"
    assert len(receiver.bodies) == 3
    resolving = Task.objects.get(task_guid="cb")
    assert resolving.state == "RESOLVING"
    handed: list[list[str]] = []
    # Record what convergence hands to the worker instead of queueing it on a broker.
    monkeypatch.setattr("auction.services.store.task_callbacks_request",
                        lambda guids: handed.append(list(guids)))
    run_until(70)
    assert ["cb"] in handed
    assert Task.objects.get(task_guid="cb").state == "COMPLETED"
    assert task_callback_run("cb") == "deleted"
    assert len(receiver.bodies) == 4


def test_no_answer_counts_as_a_retry(cluster) -> None:
    desire("http://127.0.0.1:9/nobody-listens")
    run_until(8)
    assert task_callback_run("cb") == "resolving"
    assert Task.objects.get(task_guid="cb").state == "RESOLVING"


def test_tasks_without_a_url_and_unfinished_tasks_are_skipped(cluster) -> None:
    assert task_callback_run("task-c") == "skipped"
    assert task_callback_run("missing") == "skipped"
