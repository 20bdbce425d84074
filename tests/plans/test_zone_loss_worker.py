"""The live zone-loss answer is worked out by the worker, one at a time (plans.md 2.2)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from auction import tasks
from auction.models import ZoneLossAnswer
from auction.services import plans as service
from auction.services.sim import simulate_in_database
from auction.services.workers import ZONE_LOSS_RUN

pytestmark = pytest.mark.django_db


@pytest.fixture
def asked(db: None, monkeypatch):  # type: ignore[no-untyped-def]
    simulate_in_database("seed-example", 60.0)
    sent: list[int] = []
    monkeypatch.setattr(service, "worker_send", lambda name, base: sent.append(1) if name == ZONE_LOSS_RUN else None)
    return sent


def test_a_claim_lost_with_its_worker_is_taken_again_plans_md_2_2(asked, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=True):
        assert service.zone_loss_request() is True
        assert service.zone_loss_request() is False  # one computation at a time
    assert asked == [1]
    old = timezone.now() - timedelta(seconds=service.ZONE_LOSS_STALE_S + 1)
    ZoneLossAnswer.objects.filter(base="live").update(computing_since=old)
    with django_capture_on_commit_callbacks(execute=True):
        assert service.zone_loss_request() is True
    assert asked == [1, 1]


def test_the_worker_lets_the_claim_go_even_when_it_fails_plans_md_2_2(asked, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    service.zone_loss_request()
    monkeypatch.setattr(service, "zone_loss", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        tasks.zone_loss_run()
    row = ZoneLossAnswer.objects.get(base="live")
    assert row.computing_since is None and row.answer is None


def test_no_broker_lets_the_claim_go_for_a_later_ask_plans_md_2_2(asked, monkeypatch, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    def refused(name: str, base: str) -> None:
        raise ConnectionError("no broker")

    monkeypatch.setattr(service, "worker_send", refused)
    with django_capture_on_commit_callbacks(execute=True):
        service.zone_loss_request()
    assert ZoneLossAnswer.objects.get(base="live").computing_since is None


def _queues(command: str) -> set[str]:
    """The queues a ``celery worker`` command line consumes (``-Q a,b``)."""
    words = command.split()
    return set(words[words.index("-Q") + 1].split(",")) if "-Q" in words else set()


def test_plans_and_zone_loss_run_on_their_own_queue_and_worker_plans_md_2_2() -> None:
    """Minutes of zone-loss simulation never wait in front of the clock's tick or an
    auction, nor hold the default worker's interpreter: their own queue, consumed by a
    worker of their own that ``make run`` (and docker-compose) starts."""
    from pathlib import Path

    from honcho.environ import parse_procfile

    from diego_web.celery import app
    from diego_web.supervise import wanted_processes

    def queue(task: str) -> str:
        return str(app.amqp.router.route({}, task)["queue"].name)

    assert queue("auction.tasks.zone_loss_run") == queue("auction.tasks.plan_run") == "plans"
    assert queue("auction.tasks.sim_tick") == queue("auction.tasks.auction_run") == "celery"
    root = Path(__file__).resolve().parents[2]
    procfile = parse_procfile((root / "Procfile").read_text()).processes
    started = {name: procfile[name] for name in wanted_processes({"DIEGO_OTTO": "0"})}
    consumers = {name for name, cmd in started.items() if "plans" in _queues(cmd)}
    assert consumers == {"plans"} and "-A diego_web worker" in started["plans"]
    assert "plans" not in _queues(started["worker"]) and "celery" in _queues(started["worker"])
    compose = (root / "docker-compose.yml").read_text()
    assert any("plans" in _queues(line.split("command:", 1)[1]) for line in compose.splitlines() if "command:" in line)
