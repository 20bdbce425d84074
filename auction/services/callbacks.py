"""Task completion callbacks (bbs.md 7): the BBS's task-completion worker.

A COMPLETED task with a ``completion_callback_url`` is moved to RESOLVING and its
result POSTed there. Any answer but 503/504 deletes the task; 503, 504 or no answer
is retried, three attempts in all, after which the task stays RESOLVING and task
convergence demotes it to COMPLETED after 30 s (step 4) and hands it back here
(step 6). The POST happens outside any transaction: a slow receiver must not hold
row locks, and the RESOLVING state is what stops two workers calling back twice.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction

from auction.bbs import events as ev
from auction.bbs import task_states
from auction.bbs.errors import BBSError as CoreError
from auction.models import Task
from auction.selectors.bbs import TASK_COLUMNS, task_from_values
from auction.selectors.clock import sim_now
from auction.services.counters import counters_add
from auction.services.events import events_record

log = logging.getLogger(__name__)

CALLBACK_ATTEMPTS = 3
CALLBACK_TIMEOUT_S = 5.0  # wall seconds: the receiver is a real HTTP server
RETRY_STATUSES = (503, 504)

Post = Callable[[str, dict[str, Any]], "int | None"]

_dispatch_suppressed = False


def set_dispatch_suppressed(value: bool) -> bool:
    """Tests that call back by hand switch the Celery dispatch off."""
    global _dispatch_suppressed
    previous, _dispatch_suppressed = _dispatch_suppressed, value
    return previous


def http_post(url: str, payload: dict[str, Any]) -> int | None:
    """The HTTP status of the receiver's answer, or None when it did not answer."""
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), method="POST",
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=CALLBACK_TIMEOUT_S) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError, ValueError) as exc:
        log.info("task callback to %s got no answer: %s", url, exc)
        return None


def task_callbacks_request(task_guids: Iterable[str]) -> None:
    """Hand completed tasks to the callback worker once the current transaction commits."""
    guids = list(task_guids)
    if not guids or _dispatch_suppressed:
        return

    def dispatch() -> None:
        from auction.tasks import task_callback

        for guid in guids:
            try:
                task_callback.delay(guid)
            except Exception:  # noqa: BLE001 - convergence step 6 hands it over again
                log.warning("could not queue the callback of %s; convergence will", guid)

    transaction.on_commit(dispatch)


def _core(task: Task) -> Any:
    return task_from_values(tuple(getattr(task, "pk" if c == "id" else c) for c in TASK_COLUMNS))


def task_callback_run(task_guid: str, post: Post = http_post) -> str:
    """Call one task's URL back; returns ``deleted``, ``resolving`` (gave up) or ``skipped``."""
    with transaction.atomic():
        task = Task.objects.select_for_update().filter(task_guid=task_guid).first()
        if task is None or task.state != Task.State.COMPLETED or not task.completion_callback_url:
            return "skipped"
        now = sim_now()
        before = _core(task)
        resolving = task_states.resolving(before, now)
        if isinstance(resolving, CoreError):
            return "skipped"
        Task.objects.filter(pk=task.pk).update(state=resolving.state, updated_at=resolving.updated_at)
        events_record([ev.Event(ev.TASK_CHANGED, before=before, after=resolving)], now)
        url = task.completion_callback_url
        payload = {"task_guid": task.task_guid, "failed": task.failed,
                   "failure_reason": task.failure_reason, "result": task.result,
                   "annotation": task.annotation, "created_at": int(round(task.created_at * 1e9))}
    for attempt in range(1, CALLBACK_ATTEMPTS + 1):
        status = post(url, payload)
        if status is not None and status not in RETRY_STATUSES:
            return _delete(task_guid, resolving)
        log.info("task %s callback attempt %d: %s", task_guid, attempt, status or "no answer")
    counters_add({"TaskCallbacksFailed": 1})
    return "resolving"


def _delete(task_guid: str, resolving: Any) -> str:
    with transaction.atomic():
        # Only the RESOLVING row this worker made: convergence may have demoted it meanwhile.
        deleted, _ = Task.objects.filter(task_guid=task_guid, state=Task.State.RESOLVING).delete()
        if deleted:
            events_record([ev.Event(ev.TASK_REMOVED, before=resolving)], sim_now())
            counters_add({"TaskCallbacksSucceeded": 1})
    return "deleted" if deleted else "skipped"
