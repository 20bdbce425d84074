"""Celery tasks: thin wrappers that call one service each."""

from __future__ import annotations

from celery import shared_task

from auction.services.auctioneer import auctioneer_run
from auction.services.callbacks import task_callback_run
from auction.services.clock import clock_tick
from auction.services.scenarios import scenario_timeline_run
from auction.services.sim import sim_advance


@shared_task(name="auction.tasks.sim_tick", ignore_result=True)
def sim_tick() -> float:
    """Beat's heartbeat: publish the clock, advance reps and convergence, kick the auctioneer."""
    view = clock_tick()
    scenario_timeline_run(view.now)  # timed chaos of the loaded scenario (dashboard.md C4)
    report = sim_advance()
    if report is not None and report.work_waiting:
        auction_run.delay()
    return view.now


@shared_task(name="auction.tasks.auction_run", ignore_result=True, acks_late=True)
def auction_run() -> int:
    """Run auctions while work waits; only one runs at a time in the cluster."""
    return sum(s.placed for s in auctioneer_run())


@shared_task(name="auction.tasks.task_callback", ignore_result=True, acks_late=True)
def task_callback(task_guid: str) -> str:
    """POST a completed task's result to its callback URL (bbs.md 7)."""
    return task_callback_run(task_guid)
