"""Recording BBS events (bbs.md 8) in the bounded log and publishing them after commit.

A mass change is recorded as summaries (bbs.md 8.1, [project rule]): when one change
emits more than ``EVENT_SUMMARY_OVER`` events of one ActualLRP type for one app, those
become a single event of that type saying how many instances and which indices ("100000
instances created for web (indices 0..99999)"), written where the first of them was.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from auction.bbs import types as core
from auction.bbs.events import Event
from auction.live.publish import EVENTS_CHANGED, mark_dirty_after_commit
from auction.models import BBSEvent
from auction.services.bulk import bulk_insert

# The log keeps this many events; older ones are trimmed by the tick (dashboard.md M2).
EVENT_LOG_LIMIT = 10_000
# More events than this of one ActualLRP type for one app in one change: one summary.
EVENT_SUMMARY_OVER = 1000
# How many index ranges a summary spells out before "and N more ranges".
SUMMARY_RANGES = 5
_FIELDS = ("at", "type", "key", "cell_id", "data")
_VERBS = {"created": "created", "changed": "changed", "removed": "removed", "crashed": "crashed"}


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


def _group(event: Event) -> tuple[str, str] | None:
    row = event.after or event.before
    if isinstance(row, core.ActualLRP):
        return event.type, row.process_guid
    return None


def index_ranges(indices: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted distinct indices as inclusive (first, last) runs."""
    out: list[tuple[int, int]] = []
    for index in sorted(set(indices)):
        if out and index == out[-1][1] + 1:
            out[-1] = (out[-1][0], index)
        else:
            out.append((index, index))
    return out


def _ranges_text(ranges: Sequence[tuple[int, int]]) -> str:
    shown = ", ".join(f"{a}..{b}" if a != b else str(a) for a, b in ranges[:SUMMARY_RANGES])
    more = len(ranges) - SUMMARY_RANGES
    return shown + (f" and {more} more ranges" if more > 0 else "")


def summary_data(type_: str, process_guid: str, events: Sequence[Event]) -> dict[str, Any]:
    """The payload of one summary event: count, index ranges, states, placement errors."""
    rows = [e.after or e.before for e in events]
    ranges = index_ranges(r.index for r in rows if isinstance(r, core.ActualLRP))
    states = Counter(r.state for r in rows if isinstance(r, core.ActualLRP))
    errors = Counter(r.placement_error for r in rows
                     if isinstance(r, core.ActualLRP) and r.placement_error)
    verb = _VERBS.get(type_.rsplit("_", 1)[-1], "changed")
    message = f"{len(events)} instances {verb} for {process_guid} (indices {_ranges_text(ranges)})"
    if errors:
        message += "; " + ", ".join(f'"{e}" × {n}' for e, n in errors.most_common(3))
    return {"summary": {"process_guid": process_guid, "count": len(events),
                        "indices": [list(r) for r in ranges[:100]], "ranges": len(ranges),
                        "states": dict(states), "placement_errors": dict(errors)},
            "message": message}


def events_record(events: Iterable[Event], now: float) -> int:
    """Record a change's events in order; a mass change's as summaries (module docstring)."""
    return events_store(event_rows(events, now))


def event_rows(events: Iterable[Event], now: float) -> list[tuple[Any, ...]]:
    """The rows ``events_record`` writes, made without touching the database."""
    events = list(events)
    groups: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for event in events:
        if (g := _group(event)) is not None:
            groups[g].append(event)
    big = {g for g, members in groups.items() if len(members) > EVENT_SUMMARY_OVER}
    rows: list[tuple[Any, ...]] = []
    for event in events:
        g = _group(event) if big else None
        if g in big:
            assert g is not None
            if groups[g] and groups[g][0] is event:
                rows.append((now, event.type, g[1], "", summary_data(event.type, g[1], groups[g])))
            continue
        key, cell_id = _key(event)
        data = {"before": _describe(event.before), "after": _describe(event.after)}
        rows.append((now, event.type, key, cell_id, data))
    return rows


def event_record(type_: str, now: float, key: str = "", cell_id: str = "", **data: Any) -> None:
    """An event of the simulator itself (auction, convergence, chaos, admin)."""
    events_store([(now, type_, key, cell_id, data)])


def events_store(rows: Sequence[tuple[Any, ...] | BBSEvent]) -> int:
    """Write (at, type, key, cell_id, data) tuples (or unsaved rows); publish once after commit."""
    if not rows:
        return 0
    bulk_insert(BBSEvent, _FIELDS, ((r.at, r.type, r.key, r.cell_id, r.data) if isinstance(r, BBSEvent)
                                    else r for r in rows))
    mark_dirty_after_commit(*EVENTS_CHANGED)
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
