"""Recording BBS events (bbs.md 8) in the bounded log and publishing them after commit."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from auction.bbs import types as core
from auction.bbs.events import Event
from auction.live.groups import group
from auction.live.publish import mark_dirty_after_commit, publish_after_commit
from auction.models import BBSEvent

# The log keeps this many events; older ones are trimmed by the tick (dashboard.md M2).
EVENT_LOG_LIMIT = 10_000


def _describe(row: core.ActualLRP | core.Task | core.DesiredLRP | None) -> dict[str, Any]:
    if row is None:
        return {}
    if isinstance(row, core.DesiredLRP):
        return {"process_guid": row.process_guid, "domain": row.domain, "instances": row.instances}
    if isinstance(row, core.Task):
        return {"task_guid": row.task_guid, "state": row.state, "cell_id": row.cell_id,
                "failed": row.failed, "failure_reason": row.failure_reason}
    return {"process_guid": row.process_guid, "index": row.index, "state": row.state,
            "presence": row.presence, "cell_id": row.cell_id, "crash_count": row.crash_count,
            "since": row.since, "placement_error": row.placement_error}


def _key(event: Event) -> tuple[str, str]:
    row = event.after or event.before
    if isinstance(row, core.Task):
        return row.task_guid, row.cell_id
    if row is None:
        return "", ""
    if isinstance(row, core.DesiredLRP):
        return row.process_guid, ""
    return f"{row.process_guid}.{row.index}", row.cell_id


def events_record(events: Iterable[Event], now: float) -> int:
    rows = []
    for event in events:
        key, cell_id = _key(event)
        data = {"before": _describe(event.before), "after": _describe(event.after)}
        rows.append(BBSEvent(at=now, type=event.type, key=key, cell_id=cell_id, data=data))
    return events_store(rows)


def event_record(type_: str, now: float, key: str = "", cell_id: str = "", **data: Any) -> None:
    """An event of the simulator itself (auction, convergence, chaos, admin)."""
    events_store([BBSEvent(at=now, type=type_, key=key, cell_id=cell_id, data=data)])


def events_store(rows: list[BBSEvent]) -> int:
    if not rows:
        return 0
    BBSEvent.objects.bulk_create(rows, batch_size=2000)
    publish_after_commit(group("feed"), {"type": "live.events", "count": len(rows)})
    return len(rows)


def events_trim(limit: int = EVENT_LOG_LIMIT) -> int:
    newest = BBSEvent.objects.order_by("-id").values_list("id", flat=True)[limit:limit + 1]
    cutoff = next(iter(newest), None)
    if cutoff is None:
        return 0
    deleted, _ = BBSEvent.objects.filter(id__lte=cutoff).delete()
    # The history's pages and counts moved (M2): the open /events/ pages re-render.
    mark_dirty_after_commit("events")
    return deleted
