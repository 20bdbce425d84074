"""``GET /api/v1/capacity/zone_loss`` never works a big base's answer out inside the
request (plans.md 2.2): 200 inline on a small base, 202 while the worker works a big
one out, 200 once it has, 503 when no broker takes the ask.

The live cluster is seed-example run to 60 sim-s in the database.
"""

from __future__ import annotations

import json
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
def placed(db: None) -> None:
    simulate_in_database("seed-example", 60.0)


@pytest.fixture
def big(placed, monkeypatch):  # type: ignore[no-untyped-def]
    """seed-example counted as a big base; the transport to the worker recorded, and any
    computation in the web process a failure."""
    monkeypatch.setattr(service, "INLINE_ROWS", 0)
    sent: list[str] = []
    monkeypatch.setattr(service, "worker_send", lambda name, base: sent.append(base) if name == ZONE_LOSS_RUN else None)
    monkeypatch.setattr(service, "zone_loss", lambda *a, **k: pytest.fail("worked out in the web process"))
    return sent


def get(client, query: str = ""):  # type: ignore[no-untyped-def]
    response = client.get(f"/api/v1/capacity/zone_loss{query}")
    return response, json.loads(response.content)


def test_a_small_base_is_answered_inline_plans_md_2_2(placed, client) -> None:  # type: ignore[no-untyped-def]
    response, body = get(client)
    assert response.status_code == 200 and set(body["zones"]) == {"z1", "z2"}
    assert not response.has_header("Retry-After")
    assert ZoneLossAnswer.objects.get(base="live").computing_since is None  # the worker never asked


def test_a_big_base_is_202_until_the_worker_answers_then_200_plans_md_2_2(  # type: ignore[no-untyped-def]
        big, client, monkeypatch, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response, body = get(client)
    assert response.status_code == 202 and response["Retry-After"] == str(service.ZONE_LOSS_RETRY_S)
    assert body["computing"] is True and body["last"] is None and body["retry_after_s"] == service.ZONE_LOSS_RETRY_S
    claimed = ZoneLossAnswer.objects.get(base="live").computing_since
    assert body["since"] == claimed.isoformat() and big == ["live"]
    with django_capture_on_commit_callbacks(execute=True):
        again = get(client)
    assert again[0].status_code == 202 and big == ["live"]  # one computation at a time

    monkeypatch.undo()  # the worker's own process: the real rules
    tasks.zone_loss_run("live")  # what the worker runs for the message
    monkeypatch.setattr(service, "INLINE_ROWS", 0)
    monkeypatch.setattr(service, "zone_loss", lambda *a, **k: pytest.fail("worked out in the web process"))
    response, body = get(client)
    assert response.status_code == 200 and not response.has_header("Retry-After")
    monkeypatch.undo()
    assert body == service.zone_loss_answer(force=True)  # the same answer as worked out inline


def test_a_changed_big_base_shows_the_last_answer_while_the_next_is_worked_out_plans_md_2_2(  # type: ignore[no-untyped-def]
        big, client, monkeypatch) -> None:
    from auction.sim.plans import zone_loss

    monkeypatch.setattr(service, "zone_loss", zone_loss)  # the worker's process: the real rules
    tasks.zone_loss_run("live")
    last = ZoneLossAnswer.objects.get(base="live").answer
    monkeypatch.setattr(service, "zone_loss", lambda *a, **k: pytest.fail("worked out in the web process"))
    from auction.services.lrps import desired_lrp_update

    desired_lrp_update("lrp-a", {"instances": 4})
    response, body = get(client)
    assert response.status_code == 202 and body["last"] == last


def test_a_stale_claim_is_taken_again_plans_md_2_2(big, client, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    old = timezone.now() - timedelta(seconds=service.ZONE_LOSS_STALE_S + 1)
    ZoneLossAnswer.objects.create(base="live", computing_since=old)
    with django_capture_on_commit_callbacks(execute=True):
        response, _ = get(client)
    assert response.status_code == 202 and big == ["live"]
    assert ZoneLossAnswer.objects.get(base="live").computing_since > old
    fresh = timezone.now() - timedelta(seconds=service.ZONE_LOSS_STALE_S - 30)
    ZoneLossAnswer.objects.filter(base="live").update(computing_since=fresh)
    with django_capture_on_commit_callbacks(execute=True):
        assert get(client)[0].status_code == 202
    assert big == ["live"]  # a claim younger than the limit is the worker's still


def test_a_named_foundation_has_its_own_claim_plans_md_2_2(  # type: ignore[no-untyped-def]
        big, client, django_capture_on_commit_callbacks) -> None:
    from auction.models import Foundation

    Foundation.objects.create(name="prod", capture=b"", summary={"actual_lrps": 250_000})
    ZoneLossAnswer.objects.create(base="live", computing_since=timezone.now())  # live busy
    with django_capture_on_commit_callbacks(execute=True):
        response, body = get(client, "?base=prod")
    assert response.status_code == 202 and big == ["prod"]
    assert ZoneLossAnswer.objects.get(base="prod").computing_since is not None


@pytest.mark.django_db(transaction=True)
def test_no_broker_is_a_503_not_a_wait_plans_md_2_2(client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    simulate_in_database("seed-example", 60.0)
    monkeypatch.setattr(service, "INLINE_ROWS", 0)

    def refused(name: str, base: str) -> None:
        raise ConnectionError("no broker")

    monkeypatch.setattr(service, "worker_send", refused)
    response, body = get(client)
    assert response.status_code == 503 and body["error"]["type"] == "ServiceUnavailable"
    assert "no Celery broker" in body["error"]["message"]
    assert ZoneLossAnswer.objects.get(base="live").computing_since is None  # a later ask tries again


def test_unknown_parameters_and_bases_are_still_400_plans_md_2_2(big, client) -> None:  # type: ignore[no-untyped-def]
    response, body = get(client, "?zone=z1")
    assert response.status_code == 400 and body["error"]["message"] == "Invalid field: zone"
    response, body = get(client, "?base=nowhere")
    assert response.status_code == 400 and body["error"]["message"] == "no foundation named nowhere"
    response, body = get(client, "?base=")
    assert response.status_code == 400 and body["error"]["message"] == "Invalid field: base"
    assert big == []
