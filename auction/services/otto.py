"""Otto auctions, the auctioneer's writes (otto.md 6-7): open, take bids, close, award,
re-auction, back off, expire. Each function is one transaction over the rows and returns
the messages to send afterwards, so nothing is sent for a change that rolled back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Window
from django.db.models.functions import Collate, RowNumber

from auction.live.publish import mark_dirty_after_commit
from auction.models import (
    BBSEvent,
    OttoAuction,
    OttoBid,
    OttoOrchestrator,
    OttoTaskCapabilities,
    SimClock,
    Task,
)
from auction.otto import bids as core_bids
from auction.otto import capabilities as caps
from auction.otto import lifecycle
from auction.otto import messages as msg
from auction.otto.bids import COST_PLACES, Bid
from auction.otto.capabilities import Offer
from auction.selectors.clock import clock_row
from auction.services import otto_bus as bus
from auction.services.counters import counters_add
from auction.services.events import event_record, events_store

Outbound = list[tuple[str, str, dict[str, Any]]]  # (kind "send"|"group", name, message)


@dataclass(slots=True)
class Effects:
    outbound: Outbound = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    # (auction_id, wall instant its close was due): the runtime records the award latency
    # once the awards are sent.
    awards: list[tuple[str, float]] = field(default_factory=list)

    def send(self, channel: str, message: dict[str, Any]) -> None:
        self.outbound.append(("send", channel, message))

    def fan_out(self, channel: str, message: dict[str, Any]) -> None:
        self.outbound.append(("group", channel, message))


# --- conversions between rows and the core -------------------------------------------

def to_state(row: OttoAuction) -> lifecycle.AuctionState:
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


def _unmet(ask: caps.Ask, wall: float) -> list[str]:
    offers = [roster_offer(r) for r in OttoOrchestrator.objects.all() if r.is_live(wall)]
    return caps.unmet_by_all(ask, offers)


def _announce(row: OttoAuction, effects: Effects) -> None:
    message = msg.announcement(row.auction_id, row.attempt, row.raw, row.capabilities, row.starts, row.ends)
    if row.excluded:
        message["exclude"] = list(row.excluded)  # (project) left out of this announcement only
    effects.fan_out(bus.name(bus.AUCTION), message)
    effects.touched.add(row.auction_id)


def publish_board(auction_ids: Iterable[str]) -> None:
    """Tell the live board (group ``w.<w>.otto``) these auctions changed, after commit.

    The auctioneer's own writes do not call this per transaction: its loop gathers the
    touched auctions and publishes them at most every 250 ms (dashboard.md L3).
    """
    if set(auction_ids):
        # The coalescer renders the board at most every 250 ms for whoever watches it.
        mark_dirty_after_commit("otto:board")


# --- sources: a task enters the open auction ------------------------------------------

def otto_task_message(task: Task, now: float, asked: dict[str, Any] | None = None) -> dict[str, Any]:
    raw = task_raw(task)
    if asked is None:
        asked = OttoTaskCapabilities.objects.filter(task_guid=task.task_guid).values_list(
            "capabilities", flat=True).first() or {}
    ask = caps.derive(raw, asked)
    extra = {k: asked[k] for k in ask.unknown}
    return msg.task_message(raw, {**ask.as_dict(), **extra}, now)


def otto_live_auction(task_guid: str) -> OttoAuction | None:
    return OttoAuction.objects.filter(task_guid=task_guid, state__in=lifecycle.PENDING_STATES).first()


def otto_pending_without_auction() -> list[Task]:
    """PENDING Otto tasks with no live auction: what a convergence pass re-feeds (otto.md 7)."""
    live = OttoAuction.objects.filter(state__in=lifecycle.PENDING_STATES).values_list("task_guid", flat=True)
    return list(Task.objects.filter(state=Task.State.PENDING, placement_mode=Task.PlacementMode.OTTO)
                .exclude(task_guid__in=live))


def otto_task_capabilities_set(task_guid: str, asked: dict[str, Any]) -> None:
    """Record what a submitter asks beyond ``raw`` (checked now: a bad value is refused)."""
    caps.derive({}, asked)
    OttoTaskCapabilities.objects.update_or_create(task_guid=task_guid, defaults={"capabilities": dict(asked)})


def otto_task_submit(tasks: Iterable[Task], now: float) -> None:
    """Send Otto-mode tasks to ``tasks.for_auction`` after commit; the Task row is the record."""
    payloads = [otto_task_message(t, now) for t in tasks]
    if payloads:
        transaction.on_commit(lambda: _send_tasks(payloads))


def _send_tasks(payloads: list[dict[str, Any]]) -> None:
    import logging

    from asgiref.sync import async_to_sync

    layer = bus.otto_layer()
    if layer is None:
        return
    for payload in payloads:
        try:
            async_to_sync(layer.send)(bus.name(bus.FOR_AUCTION), payload)
        except Exception as exc:  # noqa: BLE001 - the next convergence pass re-feeds it (otto.md 7)
            logging.getLogger(__name__).warning("otto: could not send a task: %s", exc)


def otto_refeed(now: float) -> int:
    """Convergence's re-feed: PENDING Otto tasks with no live auction go to for_auction again."""
    tasks = otto_pending_without_auction()
    otto_task_submit(tasks, now)
    return len(tasks)


# --- the auctioneer -------------------------------------------------------------------

def otto_auction_open(message: dict[str, Any], now: float, duration_s: float = lifecycle.DEFAULT_DURATION_S,
                      wall: float | None = None) -> Effects:
    """``otto.task`` arrived: open attempt 1 and announce it; a duplicate is ignored."""
    return otto_auctions_open([message], now, duration_s, wall)


def otto_auctions_open(messages_in: list[dict[str, Any]], now: float,
                       duration_s: float = lifecycle.DEFAULT_DURATION_S, wall: float | None = None) -> Effects:
    """Open one auction per new Otto task in one transaction; duplicates and stale tasks are ignored."""
    effects = Effects()
    wall = time.time() if wall is None else wall
    by_guid = {str(m["task"]["raw"].get("task_guid", "")): m for m in messages_in}
    with transaction.atomic():
        pending = set(Task.objects.filter(
            task_guid__in=list(by_guid), state=Task.State.PENDING,
            placement_mode=Task.PlacementMode.OTTO).values_list("task_guid", flat=True))
        live = set(OttoAuction.objects.filter(task_guid__in=list(pending), state__in=lifecycle.PENDING_STATES)
                   .values_list("task_guid", flat=True))
        offers = [roster_offer(r) for r in OttoOrchestrator.objects.all() if r.is_live(wall)]
        state = lifecycle.opened("pending", now, duration_s)
        rows = []
        for guid, message in by_guid.items():
            if guid not in pending or guid in live:
                continue
            raw = message["task"]["raw"]
            asked = message["task"].get("capabilities", {})
            ask = caps.derive(raw, asked)
            rows.append(OttoAuction(
                auction_id=f"pending-{guid}"[:64], task_guid=guid, raw=raw,
                capabilities={**ask.as_dict(), **{k: asked[k] for k in ask.unknown}},
                state=state.state, attempt=1, duration_s=duration_s, submitted_at=now, starts=state.starts,
                ends=state.ends, unmet=caps.unmet_by_all(ask, offers), note="opened",
                history=[[round(now, 3), "opened"]], updated_wall=wall))
        if not rows:
            return effects
        OttoAuction.objects.bulk_create(rows, batch_size=500)
        created = list(OttoAuction.objects.filter(auction_id__in=[r.auction_id for r in rows]))
        for row in created:
            row.auction_id = f"a-{row.pk}"
        save_fields(OttoAuction, created, ["auction_id"])
        counters_add({"OttoAuctionsOpened": len(created)})
        events_store([BBSEvent(at=now, type="otto_opened", key=r.auction_id,
                               data={"task_guid": r.task_guid, "ends": r.ends}) for r in created])
        for row in sorted(created, key=lambda r: r.pk):
            _announce(row, effects)
    return effects


@dataclass(frozen=True, slots=True)
class IncomingBid:
    message: dict[str, Any]
    received_at: float
    sequence: int


def otto_bids_record(incoming: list[IncomingBid], wall: float | None = None) -> Effects:
    """Record a batch of bids and declines as they reached the auctioneer (otto.md 6 accept bid)."""
    effects = Effects()
    if not incoming:
        return effects
    wall = time.time() if wall is None else wall
    with transaction.atomic():
        ids = {b.message["auction_id"] for b in incoming}
        rows = {r.auction_id: r for r in OttoAuction.objects.select_for_update().filter(auction_id__in=ids)}
        roster = {r.client_id: r for r in OttoOrchestrator.objects.filter(
            client_id__in={b.message["bidder"] for b in incoming})}
        existing = _existing_bids(rows, incoming)
        new: dict[tuple[str, int, str], OttoBid] = {}
        counts = {"OttoBidsReceived": 0, "OttoLateBids": 0}
        asks: dict[str, caps.Ask] = {}
        for item in incoming:
            m = item.message
            row = rows.get(m["auction_id"])
            if row is None:
                counters_add({"OttoMalformedMessages": 1})
                continue
            if m["type"] == msg.DECLINE:
                otto_decline(row, m["bidder"], m["attempt"], m.get("reason", ""), item.received_at, effects)
                continue
            counts["OttoBidsReceived"] += 1
            key = (row.auction_id, m["attempt"], m["bidder"])
            if row.auction_id not in asks:
                asks[row.auction_id] = row_ask(row)
            refusal = core_bids.rejection(
                Bid(m["bidder"], m["attempt"], float(m["cost"]), item.received_at, item.sequence, m["kind"],
                    float(m["ready_in_s"])),
                attempt=row.attempt, ends=row.ends, state_open=row.state == OttoAuction.State.OPEN,
                ask=asks[row.auction_id], roster=roster_entry(roster.get(m["bidder"])), wall=wall,
                excluded=row.excluded)
            status = OttoBid.Status.ACCEPTED if refusal is None else OttoBid.Status(refusal.status)
            reason = "" if refusal is None else refusal.reason
            if status == OttoBid.Status.LATE:
                counts["OttoLateBids"] += 1
            held = new.get(key) or existing.get(key)
            if held is not None and held.status == OttoBid.Status.ACCEPTED and status != OttoBid.Status.ACCEPTED:
                continue  # a refused duplicate never replaces the live bid
            bid = held or OttoBid(auction=row, attempt=m["attempt"], bidder=m["bidder"])
            # Stored to the 6 places the ranking compares (bids.COST_PLACES), so SQL can rank.
            bid.kind, bid.cost, bid.breakdown = m["kind"], round(float(m["cost"]), COST_PLACES), m["breakdown"]
            bid.ready_in_s, bid.sent_at = float(m["ready_in_s"]), m["_t"].get("sent_at")
            bid.received_at, bid.sequence, bid.status, bid.reason = item.received_at, item.sequence, status, reason
            new[key] = bid
            effects.touched.add(row.auction_id)
        creates = [b for b in new.values() if b.pk is None]
        updates = [b for b in new.values() if b.pk is not None]
        OttoBid.objects.bulk_create(creates, batch_size=1000)
        save_fields(OttoBid, updates, ["kind", "cost", "breakdown", "ready_in_s", "sent_at", "received_at",
                                       "sequence", "status", "reason"])
        counters_add(counts)
    return effects


def _existing_bids(rows: dict[str, OttoAuction], incoming: list[IncomingBid]) -> dict[tuple[str, int, str], OttoBid]:
    """The stored bids with the same (auction, attempt, bidder) keys as this batch, and no others."""
    keys = {(rows[b.message["auction_id"]].pk, b.message["attempt"], b.message["bidder"])
            for b in incoming if b.message["auction_id"] in rows and b.message["type"] == msg.BID}
    if not keys:
        return {}
    by_pk = {row.pk: row for row in rows.values()}
    # A light read of the candidate keys first; whole rows only for the (rare) replacements.
    candidates = OttoBid.objects.filter(
        auction_id__in={k[0] for k in keys}, bidder__in={k[2] for k in keys},
    ).values_list("pk", "auction_id", "attempt", "bidder")
    wanted = [pk for pk, auction, attempt, bidder in candidates if (auction, attempt, bidder) in keys]
    found: dict[tuple[str, int, str], OttoBid] = {}
    for bid in OttoBid.objects.filter(pk__in=wanted):
        bid.auction = by_pk[bid.auction_id]
        found[(bid.auction.auction_id, bid.attempt, bid.bidder)] = bid
    return found


def save_fields(model: Any, rows: list[Any], fields: list[str]) -> None:
    """UPDATE ``fields`` of ``rows`` with one prepared statement run many times.

    Django's bulk_update builds a CASE per field and row, which takes seconds for a few
    hundred auctions; award latency cannot afford that (bench_otto).
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


def _close_due_wall(clock: SimClock, closes_at: float) -> float:
    """The wall instant the sim clock reached ``closes_at`` (a step reaches it at the step)."""
    if clock.paused or clock.speed <= 0:
        return clock.anchor_wall
    return max(clock.anchor_wall, clock.anchor_wall + (closes_at - clock.anchor_sim) / clock.speed)


def _due(rows: Iterable[OttoAuction], rule: Callable[[lifecycle.AuctionState, float], bool],
         now: float) -> list[OttoAuction]:
    """The candidate rows (selected with ``lifecycle.due_bounds``) that the core says are due."""
    return [row for row in rows if rule(to_state(row), now)]


def otto_due(now: float, wall: float | None = None) -> Effects:
    """Every transition due at ``now``: closes, start timeouts, re-announcements, expiries.

    The database selects candidates with the core's ``due_bounds``; the core's predicates
    decide each one (``close_due``, ``start_timed_out``, ``reannounce_due``, ``pending_expired``).
    """
    effects = Effects()
    wall = time.time() if wall is None else wall
    clock = clock_row()
    bounds = lifecycle.due_bounds(now)
    rows = OttoAuction.objects.select_for_update()
    with transaction.atomic():
        due_close = _due(rows.filter(state=OttoAuction.State.OPEN, ends__lte=bounds.ends),
                         lifecycle.close_due, now)
        if due_close:
            _close(due_close, now, clock, effects)
        for row in _due(rows.filter(state=OttoAuction.State.AWARDED, start_by__lte=bounds.start_by),
                        lifecycle.start_timed_out, now):
            counters_add({"OttoStartTimeouts": 1})
            OttoOrchestrator.objects.filter(client_id=row.winner).update(start_timeouts=F("start_timeouts") + 1)
            _reauction(row, now, f"{row.winner} did not start by {msg.to_iso(row.start_by or now)}", effects)
        for row in _due(rows.filter(state=OttoAuction.State.NO_BIDS, next_announce_at__lte=bounds.next_announce_at),
                        lifecycle.reannounce_due, now):
            if lifecycle.pending_expired(to_state(row), now):
                continue  # expired below, never announced again
            state = lifecycle.reannounced(to_state(row), now, row.duration_s)
            apply_state(row, state, now)
            row.unmet = _unmet(row_ask(row), wall)
            row.save()
            _announce(row, effects)
        for row in _due(rows.filter(state__in=lifecycle.EXPIRABLE_STATES, submitted_at__lte=bounds.submitted_at),
                        lifecycle.pending_expired, now):
            state = lifecycle.expired(to_state(row))
            apply_state(row, state, now)
            row.save()
            _fail_task(row, state.failure_reason, now)
            effects.touched.add(row.auction_id)
    return effects


def _close(rows: list[OttoAuction], now: float, clock: SimClock, effects: Effects) -> None:
    """Close at ends + grace, exactly once: the rows are locked and re-checked as open."""
    bids_by: dict[int, list[Bid]] = {}
    for b in _best_bids(rows):
        bids_by.setdefault(b[0], []).append(Bid(b[2], b[1], b[3], b[4], b[5], b[6], b[7]))
    wall = time.time()
    awarded: list[OttoAuction] = []
    for row in rows:
        state = lifecycle.closed(to_state(row), bids_by.get(row.pk, []), now, jitter_seed=row.auction_id)
        apply_state(row, state, now)
        row.closed_at = state.closes_at
        if state.state == lifecycle.AWARDED:
            row.awarded_wall = wall
            effects.awards.append((row.auction_id, _close_due_wall(clock, state.closes_at)))
            awarded.append(row)
            effects.send(bus.inbox(row.winner), msg.award_message(
                row.auction_id, row.attempt, {"raw": row.raw, "capabilities": row.capabilities},
                row.cost or 0.0, row.start_by or now))
        else:
            row.unmet = _unmet(row_ask(row), wall)
            if row.unmet:
                row.note = f"{row.note} (nobody offers {', '.join(row.unmet)})"
                row.history[-1][1] = row.note
        effects.touched.add(row.auction_id)
    save_fields(OttoAuction, rows, ["state", "attempt", "starts", "ends", "announcements", "winner", "cost",
                                    "start_by", "next_announce_at", "failure_reason", "note", "excluded",
                                    "history", "updated_wall", "closed_at", "awarded_wall", "unmet"])
    no_bids = len(rows) - len(awarded)
    counters_add({"OttoAuctionsAwarded": len(awarded), "OttoAuctionsNoBids": no_bids,
                  "OttoCostTotal": 0})
    wins: dict[str, int] = {}
    for row in awarded:
        wins[row.winner] = wins.get(row.winner, 0) + 1
    for winner, n in wins.items():
        OttoOrchestrator.objects.filter(client_id=winner).update(wins=F("wins") + n)
    events_store(
        [BBSEvent(at=now, type="otto_awarded", key=r.auction_id,
                  data={"winner": r.winner, "cost": r.cost, "attempt": r.attempt}) for r in awarded]
        + [BBSEvent(at=now, type="otto_no_bids", key=r.auction_id,
                    data={"unmet": r.unmet, "next_announce_at": r.next_announce_at})
           for r in rows if r.state == OttoAuction.State.NO_BIDS])


# Bidder ids tie-break by code point, as Python compares them (bids.ranking_key). A
# database's default collation may not: glibc's en_US.UTF-8 (PostgreSQL's docker image)
# ignores the hyphen, putting "cell1" before "cell-2".
_CODEPOINT_COLLATION = {"postgresql": "C", "sqlite": "BINARY"}


def _by_code_point(field: str) -> Any:
    collation = _CODEPOINT_COLLATION.get(connection.vendor)
    return Collate(F(field), collation) if collation else F(field)


def _best_bids(rows: list[OttoAuction]) -> list[tuple[Any, ...]]:
    """Per closing auction, its best accepted bid of the open attempt, ranked in SQL.

    The same order as ``bids.ranking_key`` (costs are stored to 6 places; one row per
    bidder and attempt is a constraint), so ``lifecycle.closed`` picks the same winner
    from this one bid as from all of them, while a close of 1,000 auctions with 50 bids
    each reads 1,000 rows, not 50,000.
    """
    ranked = OttoBid.objects.filter(
        auction__in=rows, status=OttoBid.Status.ACCEPTED, attempt=F("auction__attempt"),
    ).annotate(rank=Window(RowNumber(), partition_by=[F("auction_id")],
                           order_by=[F("cost").asc(), F("received_at").asc(), F("sequence").asc(),
                                     _by_code_point("bidder").asc()]))
    return list(ranked.filter(rank=1).values_list(
        "auction_id", "attempt", "bidder", "cost", "received_at", "sequence", "kind", "ready_in_s"))


def _reauction(row: OttoAuction, now: float, reason: str, effects: Effects) -> None:
    loser, lost_attempt = row.winner, row.attempt
    state = lifecycle.reauctioned(to_state(row), now, reason, row.duration_s)
    apply_state(row, state, now)
    row.save()
    effects.send(bus.inbox(loser), msg.revoke_message(row.auction_id, lost_attempt, reason))
    effects.touched.add(row.auction_id)
    if state.state == lifecycle.FAILED:
        _fail_task(row, state.failure_reason, now)
        return
    counters_add({"OttoReauctions": 1})
    event_record("otto_reauctioned", now, key=row.auction_id, attempt=row.attempt, reason=reason)
    _announce(row, effects)


def otto_decline(row: OttoAuction, bidder: str, attempt: int, reason: str, now: float, effects: Effects) -> None:
    """The winner declined (its capacity is gone): re-auction at once (otto.md 7)."""
    if not lifecycle.start_allowed(to_state(row), bidder, attempt):
        return
    counters_add({"OttoDeclines": 1})
    OttoOrchestrator.objects.filter(client_id=bidder).update(declines=F("declines") + 1)
    OttoBid.objects.filter(auction=row, attempt=attempt, bidder=bidder).update(
        status=OttoBid.Status.DECLINED, reason=reason)
    _reauction(row, now, f"declined by {bidder}" + (f" ({reason})" if reason else ""), effects)


def _fail_task(row: OttoAuction, reason: str, now: float) -> None:
    Task.objects.filter(task_guid=row.task_guid, state=Task.State.PENDING).update(
        state=Task.State.COMPLETED, failed=True, failure_reason=reason, updated_at=now, first_completed_at=now)
    event_record("task_changed", now, key=row.task_guid, after={"state": "COMPLETED", "failed": True,
                                                                "failure_reason": reason})


def otto_started_seen(message: dict[str, Any], now: float) -> Effects:
    """``otto.started`` for an attempt that is no longer the winner's: reply ``otto.revoke``."""
    effects = Effects()
    row = OttoAuction.objects.filter(auction_id=message["auction_id"]).first()
    if row is None:
        return effects
    if lifecycle.started_by(to_state(row), message["bidder"], message["attempt"]):
        effects.touched.add(row.auction_id)
        return effects
    effects.send(bus.inbox(message["bidder"]), msg.revoke_message(
        row.auction_id, message["attempt"], "superseded"))
    return effects


def otto_recover(now: float) -> Effects:
    """A (re)started auctioneer re-announces the open auctions; deadlines re-arm from the rows."""
    effects = Effects()
    for row in OttoAuction.objects.filter(state=OttoAuction.State.OPEN):
        _announce(row, effects)
    return effects


def otto_next_deadline() -> float | None:
    """The soonest sim instant any auction needs the auctioneer (for the clock's step).

    The core's ``due_at`` of the rows that hold the soonest of each deadline column.
    """
    State = OttoAuction.State
    firsts = [
        OttoAuction.objects.filter(state=State.OPEN).order_by("ends", "pk").first(),
        OttoAuction.objects.filter(state=State.NO_BIDS, next_announce_at__isnull=False)
        .order_by("next_announce_at", "pk").first(),
        OttoAuction.objects.filter(state__in=lifecycle.EXPIRABLE_STATES).order_by("submitted_at", "pk").first(),
        OttoAuction.objects.filter(state=State.AWARDED, start_by__isnull=False).order_by("start_by", "pk").first(),
    ]
    dues = [lifecycle.due_at(to_state(row)) for row in firsts if row is not None]
    found = [d for d in dues if d is not None]
    return min(found) if found else None


def task_placement_mode_set(task_guid: str, mode: str) -> Task:
    """Switch a PENDING task between Diego and Otto; never while in an open auction (otto.md 9)."""
    from auction.services.errors import InvalidRequest
    from auction.services.work import work_request_tasks

    if mode not in Task.PlacementMode.values:
        raise InvalidRequest(f"Invalid field: placement_mode ({mode!r})")
    with transaction.atomic():
        task = Task.objects.select_for_update().get(task_guid=task_guid)
        if task.placement_mode == mode:
            return task
        if task.state != Task.State.PENDING:
            raise InvalidRequest("placement_mode can change only while the task is PENDING")
        if otto_live_auction(task_guid) is not None:
            raise InvalidRequest("placement_mode cannot change while the task is in an open auction")
        Task.objects.filter(pk=task.pk).update(placement_mode=mode)
        task.placement_mode = mode
        from auction.selectors.clock import sim_now

        now = sim_now()
        if mode == Task.PlacementMode.OTTO:
            otto_task_submit([task], now)
        else:
            work_request_tasks([task_guid], now, "placement_mode")
    return task


def otto_award_latencies_record(latencies_ms: dict[str, float]) -> None:
    """Award latency = award sent - close due, measured by the auctioneer after sending.

    Kept for an auction's first award (a re-auction's award is a new window, not a delay).
    """
    rows = list(OttoAuction.objects.filter(auction_id__in=list(latencies_ms), award_latency_ms__isnull=True)
                .only("pk", "auction_id"))
    for row in rows:
        row.award_latency_ms = round(latencies_ms[row.auction_id], 3)
    save_fields(OttoAuction, rows, ["award_latency_ms"])
