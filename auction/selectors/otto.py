"""The Otto board's read model (dashboard.md O1-O5), shared by the page, its frames and the API."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from auction.models import OttoAuction, OttoBid, OttoOrchestrator
from auction.otto.bids import GRACE_S, Bid, ranking_key
from auction.otto.times import to_iso

CLOSED_LANE = 100
# The board draws at most this many cards per live lane (soonest due first) and counts
# the rest: with 1,000 auctions open, a full board took seconds to render and megabytes
# per frame (bench.otto). The API lists them all.
LANE_CARDS = 100
# A card shows the newest bids (and always the leader); the API keeps them all.
BIDS_SHOWN = 8
PENDING = ("open", "no_bids")


@dataclass(slots=True)
class BidView:
    bidder: str
    kind: str
    attempt: int
    cost: float
    breakdown: dict[str, float]
    status: str
    reason: str
    received_at: float
    sent_at: float | None
    skew_s: float | None
    ready_in_s: float
    leader: bool = False
    sequence: int = 0  # arrival order on the auctioneer: ties on cost and receipt go to the earlier

    def as_dict(self) -> dict[str, Any]:
        return {"bidder": self.bidder, "kind": self.kind, "attempt": self.attempt, "cost": round(self.cost, 6),
                "breakdown": self.breakdown, "status": self.status, "reason": self.reason,
                "received_at": to_iso(self.received_at),
                "sent_at": to_iso(self.sent_at) if self.sent_at is not None else None,
                "skew_s": self.skew_s, "ready_in_s": self.ready_in_s, "leader": self.leader}


@dataclass(slots=True)
class AuctionView:
    auction_id: str
    task_guid: str
    state: str
    attempt: int
    announcements: int
    capabilities: dict[str, Any]
    starts: float
    ends: float
    closes_at: float
    closed_at: float | None
    next_announce_at: float | None
    winner: str
    cost: float | None
    start_by: float | None
    started_at: float | None
    started_cell: str
    failure_reason: str
    note: str
    unmet: list[str]
    history: list[list[Any]]
    bids: list[BidView] = field(default_factory=list)
    order: int = 0

    @property
    def leader(self) -> BidView | None:
        return next((b for b in self.bids if b.leader), None)

    @property
    def bids_shown(self) -> list[BidView]:
        shown = self.bids[-BIDS_SHOWN:]
        leader = self.leader
        if leader is not None and leader not in shown:
            shown = [leader, *shown[1:]]
        return shown

    @property
    def bids_hidden(self) -> int:
        return max(0, len(self.bids) - BIDS_SHOWN)

    @property
    def lane(self) -> str:
        if self.state in PENDING:
            return "open"
        return "awarded" if self.state == "awarded" else "closed"

    @property
    def starts_iso(self) -> str:
        return to_iso(self.starts)

    @property
    def ends_iso(self) -> str:
        return to_iso(self.ends)

    def as_dict(self) -> dict[str, Any]:
        iso = lambda v: to_iso(v) if v is not None else None  # noqa: E731
        leader = self.leader
        return {
            "auction_id": self.auction_id, "task_guid": self.task_guid, "state": self.state, "lane": self.lane,
            "attempt": self.attempt, "announcements": self.announcements, "capabilities": self.capabilities,
            "auction": {"starts": iso(self.starts), "ends": iso(self.ends)},
            "closes_at": iso(self.closes_at), "closed_at": iso(self.closed_at),
            "next_announce_at": iso(self.next_announce_at),
            "leader": leader.bidder if leader else None,
            "winner": self.winner or None, "cost": self.cost, "start_by": iso(self.start_by),
            "started_at": iso(self.started_at), "started_cell": self.started_cell or None,
            "failure_reason": self.failure_reason, "note": self.note, "unmet": self.unmet,
            "history": [{"at": iso(at), "text": text} for at, text in self.history],
            "bids": [b.as_dict() for b in self.bids],
        }


@dataclass(slots=True)
class RosterView:
    client_id: str
    kind: str
    cell_id: str
    live: bool
    enabled: bool
    capabilities: dict[str, Any]
    rate_per_hour: float
    speed: float
    load: float
    wins: int
    start_timeouts: int
    declines: int

    def as_dict(self) -> dict[str, Any]:
        return {"client_id": self.client_id, "kind": self.kind, "cell_id": self.cell_id or None,
                "live": self.live, "enabled": self.enabled, "capabilities": self.capabilities,
                "rate_per_hour": self.rate_per_hour, "speed": self.speed, "load": self.load,
                "wins": self.wins, "start_timeouts": self.start_timeouts, "declines": self.declines}


@dataclass(slots=True)
class Board:
    open: list[AuctionView]
    awarded: list[AuctionView]
    closed: list[AuctionView]
    roster: list[RosterView]
    open_total: int = 0
    awarded_total: int = 0

    @property
    def open_more(self) -> int:
        return max(0, self.open_total - len(self.open))

    @property
    def awarded_more(self) -> int:
        return max(0, self.awarded_total - len(self.awarded))


def _bids(rows: list[OttoAuction]) -> dict[int, list[BidView]]:
    by: dict[int, list[BidView]] = {}
    for b in OttoBid.objects.filter(auction__in=rows).order_by("received_at", "sequence"):
        by.setdefault(b.auction_id, []).append(BidView(
            b.bidder, b.kind, b.attempt, b.cost, b.breakdown, b.status, b.reason, b.received_at, b.sent_at,
            b.skew_s, b.ready_in_s, sequence=b.sequence))
    return by


def _view(row: OttoAuction, bids: list[BidView]) -> AuctionView:
    current = [b for b in bids if b.attempt == row.attempt]
    live = [b for b in current if b.status == "accepted"]
    if live:
        best = min(live, key=lambda b: ranking_key(Bid(b.bidder, b.attempt, b.cost, b.received_at, b.sequence)))
        best.leader = True
    return AuctionView(
        row.auction_id, row.task_guid, row.state, row.attempt, row.announcements, row.capabilities, row.starts,
        row.ends, row.ends + GRACE_S, row.closed_at, row.next_announce_at, row.winner, row.cost, row.start_by,
        row.started_at, row.started_cell, row.failure_reason, row.note, list(row.unmet), list(row.history),
        current, row.pk)


def auction_views(rows: list[OttoAuction]) -> list[AuctionView]:
    bids = _bids(rows)
    return [_view(r, bids.get(r.pk, [])) for r in rows]


def auction_detail(auction_id: str) -> AuctionView | None:
    row = OttoAuction.objects.filter(auction_id=auction_id).first()
    if row is None:
        return None
    view = auction_views([row])[0]
    # The detail keeps every attempt's bids, not only the current one.
    view.bids = _bids([row]).get(row.pk, [])
    return view


def _open_due(state: str, ends: float, next_announce_at: float | None) -> float:
    return ends + GRACE_S if state == "open" else (next_announce_at or 0.0)


def open_auctions(limit: int | None = None) -> list[AuctionView]:
    """Open lane: soonest close first (O1); auctions backing off count as open.

    With ``limit``, the order is found on light rows first, and only the first ``limit``
    auctions (and their bids) are loaded whole.
    """
    if limit is None:
        rows = list(OttoAuction.objects.filter(state__in=PENDING))
    else:
        light = OttoAuction.objects.filter(state__in=PENDING).values_list("pk", "state", "ends", "next_announce_at")
        first = sorted(light, key=lambda r: (_open_due(r[1], r[2], r[3]), r[0]))[:limit]
        rows = list(OttoAuction.objects.filter(pk__in=[r[0] for r in first]))
    views = auction_views(rows)
    return sorted(views, key=lambda v: (_open_due(v.state, v.ends, v.next_announce_at), v.order))


def roster() -> list[RosterView]:
    wall = time.time()
    return [RosterView(r.client_id, r.kind, r.cell_id, r.is_live(wall), r.enabled, r.capabilities,
                       r.rate_per_hour, r.speed, r.load, r.wins, r.start_timeouts, r.declines)
            for r in OttoOrchestrator.objects.all()]


def board() -> Board:
    awarded = auction_views(list(OttoAuction.objects.filter(state="awarded").order_by("start_by", "id")[:LANE_CARDS]))
    closed = auction_views(list(OttoAuction.objects.filter(
        state__in=["started", "finished", "failed"]).order_by("-updated_wall", "-id")[:CLOSED_LANE]))
    return Board(open_auctions(LANE_CARDS), awarded, closed, roster(),
                 open_total=OttoAuction.objects.filter(state__in=PENDING).count(),
                 awarded_total=OttoAuction.objects.filter(state="awarded").count())
