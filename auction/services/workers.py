"""Work handed to the Celery workers, by the name of the task that does it.

The Celery tasks (``auction/tasks.py``) are doors: each calls one service. A service that
hands work on names the task instead of importing it, so the services never import a
door and the imports run one way (docs/architecture.md "The shell"). Each name is the
``name=`` of its task; ``CELERY_TASK_ROUTES`` routes by the same names.
"""

from __future__ import annotations

from typing import Any

from celery import current_app

AUCTION_RUN = "auction.tasks.auction_run"
TASK_CALLBACK = "auction.tasks.task_callback"
PLAN_RUN = "auction.tasks.plan_run"
ZONE_LOSS_RUN = "auction.tasks.zone_loss_run"


def worker_send(name: str, *args: Any, countdown: float | None = None) -> None:
    """Queue task ``name`` with ``args`` for a worker (raises if the broker refuses)."""
    current_app.send_task(name, args=args, countdown=countdown)
