"""The Crash operation a cell reports (bbs.md 2.3, 3; ``db/sqldb/actual_lrp_db.go``).

Pure: given the stored row, ``now`` and the reason, answer the new row (or ``None``
when the row is deleted), whether a start request goes out in the same call, and the
events. The shell persists the row and sends the start.
"""

from __future__ import annotations

from dataclasses import dataclass

from auction.bbs import events as ev
from auction.bbs.errors import BBSError
from auction.bbs.restart import crash_count_after, restarts_immediately
from auction.bbs.transitions import transition_error
from auction.bbs.types import CRASHED, ORDINARY, UNCLAIMED, ActualLRP, evolve, truncate_message


@dataclass(slots=True, frozen=True)
class CrashOutcome:
    before: ActualLRP
    after: ActualLRP | None  # None: the row is deleted
    start: bool  # a start request for (process_guid, index) goes out now
    events: tuple[ev.Event, ...]


def crash(
    row: ActualLRP,
    now: float,
    reason: str,
    *,
    instance_guid: str | None = None,
    cell_id: str | None = None,
    immediate_start: bool = True,
) -> CrashOutcome | BBSError:
    """Apply a crash report to ``row``.

    ``instance_guid``/``cell_id`` are the reporting cell's instance key (default: the
    stored one); a different key is refused as Diego refuses it (bbs.md 2.2).
    ``immediate_start=False`` is the evacuation crash of bbs.md 6.3: a 1st or 2nd
    crash still goes UNCLAIMED but waits to be re-auctioned as stale.
    """
    if row.presence != ORDINARY:
        # bbs.md 2.3: a crash reported for a SUSPECT just deletes it; 6.3: so does a
        # crash of an EVACUATING copy. Neither touches the crash count.
        return CrashOutcome(row, None, False, tuple(ev.removed(row, group=True)))
    same_key = (instance_guid is None or instance_guid == row.instance_guid) and (
        cell_id is None or cell_id == row.cell_id
    )
    error = transition_error(row.state, CRASHED, same_key=same_key)
    if error is not None:
        return error
    count = crash_count_after(row.state, row.since, row.crash_count, now)
    immediate = restarts_immediately(count)
    after = evolve(
        row,
        state=UNCLAIMED if immediate else CRASHED,
        instance_guid="",
        cell_id="",
        address="",
        ports=(),
        since=now,
        crash_count=count,
        crash_reason=truncate_message(reason),
        modification_tag_index=row.modification_tag_index + 1,
    )
    # bbs.md 8: crash events first, then the ones leaving the instance RUNNING.
    events = [ev.Event(ev.LRP_CRASHED, before=row, after=after)]
    events += ev.changed(row, after, group=True)
    return CrashOutcome(row, after, immediate and immediate_start, tuple(events))
