"""Celery tasks: thin wrappers that call one service each."""

from __future__ import annotations

from celery import shared_task

from auction.services.clock import clock_tick as clock_tick_service


@shared_task(name="auction.tasks.clock_tick", ignore_result=True)
def clock_tick() -> float:
    return clock_tick_service().now
