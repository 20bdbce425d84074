"""Otto auctions' lifecycle (otto.md 6-7), the auctioneer's writes: open, the due
transitions (close, start timeout, re-announce, expiry), recovery and the next deadline.
Each function is one transaction and returns the messages to send afterwards, so nothing
is sent for a change that rolled back. The core (``auction.otto.lifecycle``) decides
every transition; this module selects the rows and applies them."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction

from auction.models import BBSEvent, OttoAuction, Task
from auction.otto import capabilities as caps
from auction.otto import lifecycle
from auction.selectors.clock import clock_row
from auction.services.counters import counters_add
from auction.services.events import events_store
from auction.services.otto.awards import close, start_timeout
from auction.services.otto.rows import (
    STATE_FIELDS,
    Effects,
    announce,
    apply_state,
    fail_task,
    live_offers,
    row_ask,
    save_fields,
    to_state,
    unmet,
)


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
        offers = live_offers(wall)
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
            announce(row, effects)
    return effects


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
            close(due_close, now, clock, effects)
        for row in _due(rows.filter(state=OttoAuction.State.AWARDED, start_by__lte=bounds.start_by),
                        lifecycle.start_timed_out, now):
            start_timeout(row, now, effects)
        for row in _due(rows.filter(state=OttoAuction.State.NO_BIDS, next_announce_at__lte=bounds.next_announce_at),
                        lifecycle.reannounce_due, now):
            if lifecycle.pending_expired(to_state(row), now):
                continue  # expired below, never announced again
            state = lifecycle.reannounced(to_state(row), now, row.duration_s)
            apply_state(row, state, now)
            row.unmet = unmet(row_ask(row), wall)
            row.save()
            announce(row, effects)
        for row in _due(rows.filter(state__in=lifecycle.EXPIRABLE_STATES, submitted_at__lte=bounds.submitted_at),
                        lifecycle.pending_expired, now):
            state = lifecycle.expired(to_state(row))
            apply_state(row, state, now)
            row.save()
            fail_task(row, state.failure_reason, now)
            effects.touched.add(row.auction_id)
    return effects


def otto_recover(now: float) -> Effects:
    """A (re)started auctioneer re-announces the open auctions; deadlines re-arm from the rows."""
    effects = Effects()
    for row in OttoAuction.objects.filter(state=OttoAuction.State.OPEN):
        announce(row, effects)
    return effects


def otto_next_deadline() -> float | None:
    """The soonest sim instant any auction needs the auctioneer (for the clock's step).

    The core's ``due_at`` of the rows that hold the soonest of each deadline column.
    """
    State = OttoAuction.State
    rows = OttoAuction.objects.only(*STATE_FIELDS)
    firsts = [
        rows.filter(state=State.OPEN).order_by("ends", "pk").first(),
        rows.filter(state=State.NO_BIDS, next_announce_at__isnull=False).order_by("next_announce_at", "pk").first(),
        rows.filter(state__in=lifecycle.EXPIRABLE_STATES).order_by("submitted_at", "pk").first(),
        rows.filter(state=State.AWARDED, start_by__isnull=False).order_by("start_by", "pk").first(),
    ]
    dues = [lifecycle.due_at(to_state(row)) for row in firsts if row is not None]
    found = [d for d in dues if d is not None]
    return min(found) if found else None


def otto_restamp(now: float) -> int:
    """The clock went back to ``now``: pending auctions submitted after it move their
    schedule back with it (``lifecycle.restamped``). Called inside the clock's transaction."""
    rows = list(OttoAuction.objects.select_for_update().filter(
        state__in=lifecycle.PENDING_STATES, submitted_at__gt=now + lifecycle.DUE_EPS_S))
    for row in rows:
        state = lifecycle.restamped(to_state(row), now)
        apply_state(row, state, now)
        row.submitted_at = state.submitted_at
    OttoAuction.objects.bulk_update(rows, [
        "submitted_at", "starts", "ends", "start_by", "next_announce_at", "note", "history", "updated_wall"])
    return len(rows)
