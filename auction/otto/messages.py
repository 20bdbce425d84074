"""Messages on the Otto channels (otto.md 2, 3): building and validating them.

Every message has a ``type`` (Channels dispatches on it); from the announcement on, each
also carries ``auction_id`` and ``attempt``. A naive timestamp, an unknown type or a bad
field makes ``validate`` raise ``MalformedMessage``: the receiver drops the message and
counts it (``OttoMalformedMessages``); nothing crashes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from auction.otto.capabilities import CapabilityError, derive
from auction.otto.times import TimeFormatError, from_iso, to_iso

CLIENT_ID = re.compile(r"^[a-z0-9-]{1,40}$")
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,99}$")

TASK, AUCTION, BID, DECLINE = "otto.task", "otto.auction", "otto.bid", "otto.decline"
AWARD, REVOKE, STARTED, FINISHED = "otto.award", "otto.revoke", "otto.started", "otto.finished"


class MalformedMessage(ValueError):
    """A message the receiver drops and counts."""


def channel(world: str, name: str) -> str:
    """``otto.<w>.<name>``, checked against Channels' rules."""
    full = f"otto.{world}.{name}"
    if not _NAME.match(full):
        raise ValueError(f"invalid Otto channel name {full!r}")
    return full


def inbox(world: str, client_id: str) -> str:
    if not CLIENT_ID.match(client_id):
        raise ValueError(f"invalid clientId {client_id!r}")
    return channel(world, f"inbox.{client_id}")


def task_message(raw: Mapping[str, Any], capabilities: Mapping[str, Any], submitted_at: float) -> dict[str, Any]:
    return {"type": TASK, "task": {"raw": dict(raw), "capabilities": dict(capabilities)},
            "submitted_at": to_iso(submitted_at)}


def announcement(auction_id: str, attempt: int, raw: Mapping[str, Any], capabilities: Mapping[str, Any],
                 starts: float, ends: float) -> dict[str, Any]:
    """The RFC's auction format plus ``type``, ``auction_id`` and ``attempt``."""
    return {"type": AUCTION, "auction_id": auction_id, "attempt": attempt,
            "task": {"raw": dict(raw), "capabilities": dict(capabilities)},
            "auction": {"starts": to_iso(starts), "ends": to_iso(ends)}}


def bid_message(auction_id: str, attempt: int, bidder: str, kind: str, cost: float,
                breakdown: Mapping[str, float], ready_in_s: float, sent_at: float) -> dict[str, Any]:
    return {"type": BID, "auction_id": auction_id, "attempt": attempt, "bidder": bidder, "kind": kind,
            "cost": round(cost, 6), "breakdown": dict(breakdown), "ready_in_s": ready_in_s,
            "sent_at": to_iso(sent_at)}


def decline_message(auction_id: str, attempt: int, bidder: str, reason: str) -> dict[str, Any]:
    return {"type": DECLINE, "auction_id": auction_id, "attempt": attempt, "bidder": bidder, "reason": reason}


def award_message(auction_id: str, attempt: int, task: Mapping[str, Any], cost: float, start_by: float) -> dict[str, Any]:
    return {"type": AWARD, "auction_id": auction_id, "attempt": attempt, "task": dict(task),
            "cost": round(cost, 6), "start_by": to_iso(start_by)}


def revoke_message(auction_id: str, attempt: int, reason: str) -> dict[str, Any]:
    return {"type": REVOKE, "auction_id": auction_id, "attempt": attempt, "reason": reason}


def started_message(auction_id: str, attempt: int, bidder: str, cell_id: str, at: float) -> dict[str, Any]:
    return {"type": STARTED, "auction_id": auction_id, "attempt": attempt, "bidder": bidder,
            "cell_id": cell_id, "at": to_iso(at)}


def finished_message(auction_id: str, attempt: int, task_guid: str, bidder: str, at: float,
                     failed: bool = False, failure_reason: str = "") -> dict[str, Any]:
    return {"type": FINISHED, "auction_id": auction_id, "attempt": attempt, "task_guid": task_guid,
            "bidder": bidder, "at": to_iso(at), "failed": failed, "failure_reason": failure_reason}


# Field checks per type: name -> predicate.
def _str(v: Any) -> bool:
    return isinstance(v, str) and 0 < len(v) <= 255


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v >= 0


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _client(v: Any) -> bool:
    return isinstance(v, str) and bool(CLIENT_ID.match(v))


_ROUTED = {"auction_id": _str, "attempt": _int}
_FIELDS: dict[str, dict[str, Any]] = {
    TASK: {},
    AUCTION: {**_ROUTED},
    BID: {**_ROUTED, "bidder": _client, "kind": lambda v: v in ("agent", "standalone"), "cost": _num,
          "breakdown": lambda v: isinstance(v, dict), "ready_in_s": _num},
    DECLINE: {**_ROUTED, "bidder": _client, "reason": lambda v: isinstance(v, str)},
    AWARD: {**_ROUTED, "task": lambda v: isinstance(v, dict), "cost": _num},
    REVOKE: {**_ROUTED, "reason": lambda v: isinstance(v, str)},
    STARTED: {**_ROUTED, "bidder": _client, "cell_id": _str},
    FINISHED: {**_ROUTED, "task_guid": _str, "bidder": _client, "failed": _bool,
               "failure_reason": lambda v: isinstance(v, str)},
}
_TIMES = {TASK: ("submitted_at",), BID: ("sent_at",), AWARD: ("start_by",), STARTED: ("at",),
          FINISHED: ("at",)}


def validate(message: Any) -> dict[str, Any]:
    """Return the message with its times parsed to sim seconds under ``_t``; raise if malformed."""
    if not isinstance(message, dict):
        raise MalformedMessage("not an object")
    kind = message.get("type")
    if kind not in _FIELDS:
        raise MalformedMessage(f"unknown type {kind!r}")
    for name, ok in _FIELDS[kind].items():
        if name not in message or not ok(message[name]):
            raise MalformedMessage(f"{kind}: bad field {name}: {message.get(name)!r}")
    times: dict[str, float] = {}
    try:
        for name in _TIMES.get(kind, ()):
            times[name] = from_iso(message.get(name))
        if kind in (TASK, AUCTION):
            task = message.get("task")
            if not isinstance(task, dict) or not isinstance(task.get("raw"), dict):
                raise MalformedMessage(f"{kind}: bad field task")
            caps = task.get("capabilities", {})
            if not isinstance(caps, dict):
                raise MalformedMessage(f"{kind}: bad field task.capabilities")
            derive(task["raw"], caps)
        if kind == AUCTION:
            window = message.get("auction")
            if not isinstance(window, dict):
                raise MalformedMessage("otto.auction: bad field auction")
            times["starts"], times["ends"] = from_iso(window.get("starts")), from_iso(window.get("ends"))
    except (TimeFormatError, CapabilityError) as exc:
        raise MalformedMessage(f"{kind}: {exc}") from None
    return {**message, "_t": times}
