"""Task completion callbacks (bbs.md 7 Callback, 7.1): the BBS's task-completion worker.

A COMPLETED task with a ``completion_callback_url`` is moved to RESOLVING and its
result POSTed there. Any answer but 503/504 deletes the task; 503, 504 or no answer is
retried after a back-off. Each call of :func:`task_callback_run` makes at most one POST:
the Celery task queues the next attempt with a countdown instead of sleeping, so a slow
receiver holds a callback thread for one timeout at most, never a clock or auction thread
(callbacks have their own queue and worker, ``CELERY_TASK_ROUTES``).

Bounded and idempotent ([project rule], bbs.md 7.1): a task gets ``CALLBACK_ATTEMPTS``
POSTs in its whole life, counted on its row; each attempt is claimed in a transaction
(count + 1, busy until the timeout has surely passed) before the POST, and the decision
(delete on success) is taken in one transaction with the row locked. A second copy of the
message (a redelivery, or convergence handing the task over again) finds the attempt in
flight, the budget spent or the row gone, and does not POST. The POST itself happens
outside any transaction: a slow receiver must not hold row locks.
"""

from __future__ import annotations

import json
import logging
import time
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
from auction.services.workers import TASK_CALLBACK, worker_send

log = logging.getLogger(__name__)

CALLBACK_ATTEMPTS = 3  # POSTs in a task's life: the first and two retries
CALLBACK_TIMEOUT_S = 2.0  # wall seconds for connect and for each read
# Wall seconds before retry n (1-based): 1 s, then 4 s.
CALLBACK_BACKOFF_S = (1.0, 4.0)
# An attempt counts as in flight this long after it was claimed: well past the timeout
# (urllib's timeout is per socket operation, so a trickling answer can take longer).
CALLBACK_BUSY_S = CALLBACK_TIMEOUT_S * 5
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


def retry_delay(attempts_made: int) -> float:
    """Wall seconds to wait before the next attempt, after ``attempts_made`` POSTs."""
    return CALLBACK_BACKOFF_S[min(attempts_made, len(CALLBACK_BACKOFF_S)) - 1]


def task_callbacks_request(task_guids: Iterable[str]) -> None:
    """Hand completed tasks to the callback worker once the current transaction commits."""
    guids = list(task_guids)
    if not guids or _dispatch_suppressed:
        return

    def dispatch() -> None:
        for guid in guids:
            try:
                worker_send(TASK_CALLBACK, guid)
            except Exception:  # noqa: BLE001 - convergence step 6 hands it over again
                log.warning("could not queue the callback of %s; convergence will", guid)

    transaction.on_commit(dispatch)


def _core(task: Task) -> Any:
    return task_from_values(tuple(getattr(task, "pk" if c == "id" else c) for c in TASK_COLUMNS))


def _claim(task_guid: str) -> tuple[str, dict[str, Any], int] | str:
    """Claim one attempt: (url, payload, attempt number), or why there is none to make."""
    with transaction.atomic():
        task = Task.objects.select_for_update().filter(task_guid=task_guid).first()
        if task is None or not task.completion_callback_url:
            return "skipped"
        if task.state not in (Task.State.COMPLETED, Task.State.RESOLVING):
            return "skipped"
        if task.callback_attempts >= CALLBACK_ATTEMPTS:
            return "exhausted"
        wall = time.time()
        if task.callback_busy_until is not None and task.callback_busy_until > wall:
            return "busy"
        now = sim_now()
        if task.state == Task.State.COMPLETED:
            before = _core(task)
            resolving = task_states.resolving(before, now)
            if isinstance(resolving, CoreError):
                return "skipped"
            task.state, task.updated_at = resolving.state, resolving.updated_at
            events_record([ev.Event(ev.TASK_CHANGED, before=before, after=resolving)], now)
        attempt = task.callback_attempts + 1
        Task.objects.filter(pk=task.pk).update(
            state=task.state, updated_at=task.updated_at, callback_attempts=attempt,
            callback_busy_until=wall + CALLBACK_BUSY_S)
        payload = {"task_guid": task.task_guid, "failed": task.failed,
                   "failure_reason": task.failure_reason, "result": task.result,
                   "annotation": task.annotation, "created_at": int(round(task.created_at * 1e9))}
        return task.completion_callback_url, payload, attempt


def task_callback_run(task_guid: str, post: Post = http_post) -> str:
    """Make one callback attempt for a task.

    Returns ``deleted`` (answered: the task is gone), ``retry`` (no usable answer, attempts
    left: call again after :func:`retry_delay`), ``resolving`` (that was the last attempt:
    the task stays for convergence to clear), ``exhausted`` (no attempts left, nothing
    POSTed), ``busy`` (another attempt is in flight) or ``skipped``.
    """
    claimed = _claim(task_guid)
    if isinstance(claimed, str):
        return claimed
    url, payload, attempt = claimed
    status = post(url, payload)
    with transaction.atomic():
        task = Task.objects.select_for_update().filter(task_guid=task_guid).first()
        if task is None:
            return "skipped"
        if status is not None and status not in RETRY_STATUSES:
            # The decision and the delivery mark are one: the row goes, in this transaction.
            before = _core(task)
            task.delete()
            events_record([ev.Event(ev.TASK_REMOVED, before=before)], sim_now())
            counters_add({"TaskCallbacksSucceeded": 1})
            return "deleted"
        Task.objects.filter(pk=task.pk).update(callback_busy_until=None)
    log.info("task %s callback attempt %d/%d: %s", task_guid, attempt, CALLBACK_ATTEMPTS,
             status or "no answer")
    if attempt >= CALLBACK_ATTEMPTS:
        counters_add({"TaskCallbacksFailed": 1})
        return "resolving"
    return "retry"


def task_callback_retry_in(task_guid: str) -> float:
    """Wall seconds before the task's next attempt, from the attempts its row has made."""
    made = Task.objects.filter(task_guid=task_guid).values_list("callback_attempts", flat=True).first()
    return retry_delay(made or 1)


def task_callback_until_done(task_guid: str, post: Post = http_post,
                             sleep: Callable[[float], None] = time.sleep) -> str:
    """Every attempt in a row, sleeping between them (commands and tests; the worker
    queues each retry instead)."""
    while (outcome := task_callback_run(task_guid, post)) == "retry":
        sleep(task_callback_retry_in(task_guid))
    return outcome
