"""Desiring tasks (bbs.md 7)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction

from auction.bbs.validation import bbs_message
from auction.models import Task
from auction.selectors.clock import sim_now
from auction.services.errors import InvalidRequest, ResourceExists, reject_unknown_members
from auction.services.work import work_request_tasks

TASK_FIELDS = (
    "task_guid", "domain", "rootfs", "memory_mb", "disk_mb", "max_pids", "placement_tags",
    "volume_drivers", "annotation", "completion_callback_url", "duration_s", "placement_mode",
)


def task_desire(spec: Mapping[str, Any]) -> Task:
    reject_unknown_members(spec, TASK_FIELDS)
    task = Task(**spec)
    errors = task.bbs_errors()
    if errors:
        raise InvalidRequest(bbs_message(errors))
    now = sim_now()
    task.created_at = task.updated_at = now
    task.state = Task.State.PENDING
    try:
        with transaction.atomic():
            if Task.objects.filter(task_guid=task.task_guid).exists():
                raise ResourceExists()
            task.save()
            # Otto tasks go to the open auction instead (otto.md 9), not to the auctioneer.
            if task.placement_mode == Task.PlacementMode.DIEGO:
                work_request_tasks([task.task_guid], now, "desire")
    except IntegrityError:
        raise ResourceExists() from None
    return task
