"""Otto routing (otto.md 7, 9): a task enters the open auction. Sources send Otto-mode
tasks to ``tasks.for_auction`` after commit, convergence re-feeds the ones with no live
auction, and a PENDING task can switch between Diego and Otto placement."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction

from auction.models import OttoAuction, OttoTaskCapabilities, Task
from auction.otto import capabilities as caps
from auction.otto import lifecycle
from auction.otto import messages as msg
from auction.selectors.clock import sim_now
from auction.services import otto_bus as bus
from auction.services.errors import InvalidRequest
from auction.services.otto.rows import task_raw
from auction.services.work import work_request_tasks

log = logging.getLogger(__name__)

def otto_task_message(task: Task, now: float, asked: dict[str, Any] | None = None) -> dict[str, Any]:
    raw = task_raw(task)
    if asked is None:
        asked = OttoTaskCapabilities.objects.filter(task_guid=task.task_guid).values_list(
            "capabilities", flat=True).first() or {}
    ask = caps.derive(raw, asked)
    extra = {k: asked[k] for k in ask.unknown}
    return msg.task_message(raw, {**ask.as_dict(), **extra}, now)


def otto_live_auction(task_guid: str) -> OttoAuction | None:
    return OttoAuction.objects.filter(task_guid=task_guid, state__in=lifecycle.PENDING_STATES).first()


def otto_pending_without_auction() -> list[Task]:
    """PENDING Otto tasks with no live auction: what a convergence pass re-feeds (otto.md 7)."""
    live = OttoAuction.objects.filter(state__in=lifecycle.PENDING_STATES).values_list("task_guid", flat=True)
    return list(Task.objects.filter(state=Task.State.PENDING, placement_mode=Task.PlacementMode.OTTO)
                .exclude(task_guid__in=live))


def otto_task_capabilities_set(task_guid: str, asked: dict[str, Any]) -> None:
    """Record what a submitter asks beyond ``raw`` (checked now: a bad value is refused)."""
    caps.derive({}, asked)
    OttoTaskCapabilities.objects.update_or_create(task_guid=task_guid, defaults={"capabilities": dict(asked)})


def otto_task_submit(tasks: Iterable[Task], now: float) -> None:
    """Send Otto-mode tasks to ``tasks.for_auction`` after commit; the Task row is the record."""
    payloads = [otto_task_message(t, now) for t in tasks]
    if payloads:
        transaction.on_commit(lambda: _send_tasks(payloads))


def _send_tasks(payloads: list[dict[str, Any]]) -> None:
    layer = bus.otto_layer()
    if layer is None:
        return
    for payload in payloads:
        try:
            async_to_sync(layer.send)(bus.name(bus.FOR_AUCTION), payload)
        except Exception as exc:  # noqa: BLE001 - the next convergence pass re-feeds it (otto.md 7)
            log.warning("otto: could not send task %s to for_auction (%s); the next convergence pass "
                        "re-feeds it", payload["task"]["raw"].get("task_guid"), exc)


def otto_refeed(now: float) -> int:
    """Convergence's re-feed: PENDING Otto tasks with no live auction go to for_auction again."""
    tasks = otto_pending_without_auction()
    otto_task_submit(tasks, now)
    return len(tasks)


def task_placement_mode_set(task_guid: str, mode: str) -> Task:
    """Switch a PENDING task between Diego and Otto; never while in an open auction (otto.md 9)."""
    if mode not in Task.PlacementMode.values:
        raise InvalidRequest(f"Invalid field: placement_mode ({mode!r})")
    with transaction.atomic():
        task = Task.objects.select_for_update().get(task_guid=task_guid)
        if task.placement_mode == mode:
            return task
        if task.state != Task.State.PENDING:
            raise InvalidRequest("placement_mode can change only while the task is PENDING")
        if otto_live_auction(task_guid) is not None:
            raise InvalidRequest("placement_mode cannot change while the task is in an open auction")
        Task.objects.filter(pk=task.pk).update(placement_mode=mode)
        task.placement_mode = mode
        now = sim_now()
        if mode == Task.PlacementMode.OTTO:
            otto_task_submit([task], now)
        else:
            work_request_tasks([task_guid], now, "placement_mode")
    return task
