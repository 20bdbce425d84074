"""The Otto shell's plumbing: rows <-> the core's values, the effects a transaction returns,
and the writes every concept shares (announce, fail the task, save fields in bulk)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from auction.live.publish import mark_dirty_after_commit
from auction.models import OttoAuction, OttoOrchestrator, Task
from auction.otto import bids as core_bids
from auction.otto import capabilities as caps
from auction.otto import lifecycle
from auction.otto import messages as msg
from auction.otto.capabilities import Offer
from auction.services import otto_bus as bus
from auction.services.events import event_record

Outbound = list[tuple[str, str, dict[str, Any]]]  # (kind "send"|"group", name, message)


@dataclass(slots=True)
class Effects:
    """What a transaction leaves to do after commit: messages to send, auctions the board
    should redraw, awards whose latency the runtime records."""

    outbound: Outbound = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    # (auction_id, wall instant its close was due): the runtime records the award latency
    # once the awards are sent.
    awards: list[tuple[str, float]] = field(default_factory=list)

    def send(self, channel: str, message: dict[str, Any]) -> None:
        self.outbound.append(("send", channel, message))

    def fan_out(self, channel: str, message: dict[str, Any]) -> None:
        self.outbound.append(("group", channel, message))


# The columns ``to_state`` reads (for ``.only()`` on hot reads).
STATE_FIELDS = ("auction_id", "state", "attempt", "starts", "ends", "submitted_at", "announcements", "winner",
                "cost", "start_by", "next_announce_at", "excluded", "failure_reason", "note")


def to_state(row: OttoAuction) -> lifecycle.AuctionState:
    """The row as the core's value; ``apply_state`` writes a transition back."""
    return lifecycle.AuctionState(
        row.auction_id, row.state, row.attempt, row.starts, row.ends, row.submitted_at,
        row.announcements, row.winner, row.cost, row.start_by, row.next_announce_at,
        tuple(row.excluded), row.failure_reason, row.note)


def apply_state(row: OttoAuction, state: lifecycle.AuctionState, now: float) -> None:
    for name in ("state", "attempt", "starts", "ends", "announcements", "winner", "cost", "start_by",
                 "next_announce_at", "failure_reason", "note"):
        setattr(row, name, getattr(state, name))
    row.excluded = list(state.excluded)
    if state.note and (not row.history or row.history[-1][1] != state.note):
        row.history = [*row.history, [round(now, 3), state.note]][-20:]
    row.updated_wall = time.time()


def task_raw(task: Task, estimated_s: float | None = None) -> dict[str, Any]:
    """The Diego task definition carried as ``raw`` (otto.md 3)."""
    return {"task_guid": task.task_guid, "memory_mb": task.memory_mb, "disk_mb": task.disk_mb,
            "rootfs": task.rootfs, "placement_tags": list(task.placement_tags),
            "volume_drivers": list(task.volume_drivers),
            "estimated_seconds": estimated_s if estimated_s is not None else task.duration_s}


def roster_offer(row: OttoOrchestrator) -> Offer:
    """A roster row's static capabilities: what it could ever give."""
    c = row.capabilities or {}
    return Offer(int(c.get("cores", 0)), int(c.get("memory_mb", 0)), int(c.get("disk_mb", 0)),
                 bool(c.get("docker_run")), bool(c.get("docker_build")))


def roster_entry(row: OttoOrchestrator | None) -> core_bids.RosterEntry | None:
    """A roster row as the core's acceptance rule sees it."""
    if row is None:
        return None
    return core_bids.RosterEntry(row.enabled, row.alive_until_wall, roster_offer(row))


def row_ask(row: OttoAuction) -> caps.Ask:
    """What the auction's task asks for: its capabilities, the rest derived from ``raw``."""
    return caps.derive(row.raw, row.capabilities)


def live_offers(wall: float) -> list[Offer]:
    """What the live roster could ever give, one offer per orchestrator."""
    return [roster_offer(r) for r in OttoOrchestrator.objects.all() if r.is_live(wall)]


def unmet(ask: caps.Ask, wall: float) -> list[str]:
    """The capabilities no live orchestrator offers (the board names them, otto.md 7)."""
    return caps.unmet_by_all(ask, live_offers(wall))


def announce(row: OttoAuction, effects: Effects) -> None:
    """Fan the auction out on ``tasks.auction`` (after commit, by the runtime)."""
    message = msg.announcement(row.auction_id, row.attempt, row.raw, row.capabilities, row.starts, row.ends)
    if row.excluded:
        message["exclude"] = list(row.excluded)  # (project) left out of this announcement only
    effects.fan_out(bus.name(bus.AUCTION), message)
    effects.touched.add(row.auction_id)


def fail_task(row: OttoAuction, reason: str, now: float) -> None:
    """The auction failed: its PENDING task completes as failed with ``reason``."""
    Task.objects.filter(task_guid=row.task_guid, state=Task.State.PENDING).update(
        state=Task.State.COMPLETED, failed=True, failure_reason=reason, updated_at=now, first_completed_at=now)
    event_record("task_changed", now, key=row.task_guid, after={"state": "COMPLETED", "failed": True,
                                                                "failure_reason": reason})


def save_fields(model: Any, rows: list[Any], fields: list[str]) -> None:
    """UPDATE ``fields`` of ``rows`` with one prepared statement run many times.

    Django's bulk_update builds a CASE per field and row, which takes seconds for a few
    hundred auctions; award latency cannot afford that (bench.otto).
    """
    if not rows:
        return
    qn = connection.ops.quote_name
    columns = [model._meta.get_field(name) for name in fields]
    sql = (f"UPDATE {qn(model._meta.db_table)} SET "
           + ", ".join(f"{qn(c.column)} = %s" for c in columns)
           + f" WHERE {qn(model._meta.pk.column)} = %s")
    params = [[c.get_db_prep_save(getattr(r, c.attname), connection) for c in columns] + [r.pk] for r in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def publish_board(auction_ids: Iterable[str]) -> None:
    """Tell the live board (group ``w.<w>.otto``) these auctions changed, after commit.

    The auctioneer's own writes do not call this per transaction: its loop gathers the
    touched auctions and publishes them at most every 250 ms (dashboard.md L3).
    """
    if set(auction_ids):
        # The coalescer renders the board at most every 250 ms for whoever watches it.
        mark_dirty_after_commit("otto:board")
