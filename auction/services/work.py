"""Start requests into the auctioneer's durable queue (auction.md 1 step 1)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction

from auction.models import PendingWork
from auction.services.workers import AUCTION_RUN, worker_send

log = logging.getLogger(__name__)

_trigger_suppressed = False


def set_trigger_suppressed(value: bool) -> bool:
    """Tests that drive auctions by hand switch the Celery trigger off."""
    global _trigger_suppressed
    previous, _trigger_suppressed = _trigger_suppressed, value
    return previous


def _trigger_auction() -> None:
    if _trigger_suppressed:
        return
    try:
        worker_send(AUCTION_RUN)
    except Exception:  # noqa: BLE001 - the queue row is durable; the next tick triggers again
        log.warning("could not trigger an auction; the tick will")


def trigger_auction_after_commit() -> None:
    """New work waits: ask a worker to advance the simulation (its auctions) now."""
    transaction.on_commit(_trigger_auction)


def work_request_lrps(keys: Iterable[tuple[str, int]], now: float, reason: str) -> int:
    """One start request listing LRP instances (desire, scale-up, convergence, crash)."""
    rows = [
        PendingWork(kind=PendingWork.Kind.LRP, ident=f"{guid}.{index}", process_guid=guid,
                    index=index, queued_at=now, reason=reason)
        for guid, index in keys
    ]
    return _enqueue(rows)


def work_request_tasks(guids: Iterable[str], now: float, reason: str) -> int:
    rows = [
        PendingWork(kind=PendingWork.Kind.TASK, ident=guid, task_guid=guid, queued_at=now,
                    reason=reason)
        for guid in guids
    ]
    return _enqueue(rows)


def _enqueue(rows: list[PendingWork]) -> int:
    if not rows:
        return 0
    PendingWork.objects.bulk_create(rows, batch_size=2000)
    transaction.on_commit(_trigger_auction)
    return len(rows)
