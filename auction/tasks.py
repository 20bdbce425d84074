"""Celery tasks: thin wrappers that call one service each."""

from __future__ import annotations

import logging

from celery import shared_task

from auction.services import workers
from auction.services.callbacks import task_callback_retry_in, task_callback_run
from auction.services.plans import plan_run_by_id, zone_loss_refresh
from auction.services.plans import plans_expire as plans_expire_service
from auction.services.retry import round_guarded
from auction.services.sim import sim_advance, sim_tick_run

log = logging.getLogger(__name__)


@shared_task(name="auction.tasks.sim_tick", ignore_result=True)
def sim_tick() -> float:
    """Beat's heartbeat: publish the clock, then advance the simulation to its now; with
    nothing due and nothing changed, neither (dashboard.md L9). A tick that meets a busy
    database past its retries says so in one line: the next tick, a second later, is
    the retry."""
    with round_guarded(log, "clock tick"):
        return sim_tick_run()
    return 0.0


@shared_task(name=workers.AUCTION_RUN, ignore_result=True, acks_late=True)
def auction_run() -> int:
    """Work was queued: advance now (its auctions included); one advance at a time."""
    with round_guarded(log, "auction run"):
        report = sim_advance()
        return 0 if report is None else len(report.auctions)
    return 0  # the work waits in the queue: beat's next tick runs it


@shared_task(name=workers.TASK_CALLBACK, ignore_result=True, acks_late=True)
def task_callback(task_guid: str) -> str:
    """POST a completed task's result to its callback URL (bbs.md 7, 7.1): one attempt;
    the next is queued with a back-off rather than slept through on a worker thread."""
    outcome = task_callback_run(task_guid)
    if outcome == "retry":
        task_callback.apply_async((task_guid,), countdown=task_callback_retry_in(task_guid))
    return outcome


@shared_task(name=workers.PLAN_RUN, ignore_result=True)
def plan_run(plan_id: int) -> None:
    """A plan on a big base, off the web process (plans.md 1.5)."""
    plan_run_by_id(plan_id)


@shared_task(name="auction.tasks.plans_expire", ignore_result=True)
def plans_expire() -> int:
    """Beat's hourly sweep of expired plans (plans.md 1.8)."""
    return plans_expire_service(source="system")


@shared_task(name=workers.ZONE_LOSS_RUN, ignore_result=True)
def zone_loss_run(base: str = "live") -> None:
    """A base's N-1 answer for the grid's chips and the API, off the web process (plans.md 2.2)."""
    zone_loss_refresh(base)
