"""Sign-in throttling (dashboard.md AD7): failed passwords per username, per address,
and per username from one address.

Counted in the state Redis, so every web process of a deployment (two daphnes behind
one address, issue 14's topology) shares one count: an attacker gains nothing by
landing on the other process. Should that Redis not answer, the count falls back to
this process's memory cache rather than refusing every sign-in.

Three counts, because each closes a way around the others:
- one username from one address (``FREE_FAILURES`` free): a person who mistyped is held
  up alone, and another address or username is not;
- one username from any address (``USERNAME_FREE_FAILURES``): guesses spread over many
  addresses (a botnet, or forged forwarded headers) still meet the wait;
- one address for any username (``ADDRESS_FREE_FAILURES``): spraying one password over
  many usernames meets it too.
After a count's free failures within ``WINDOW_S``, each further attempt waits ``WAIT_S``
seconds after its last failure, doubling with every failure after that up to
``WAIT_CAP_S``; the longest wait of the three holds, and meanwhile the password is not
even checked. A success clears the pair's and the username's counts, not the address's
(one right password does not wash a spray).
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass

import redis
from django.core.cache import cache

from auction.live.publish import key_prefix, state_redis

FREE_FAILURES = 5
USERNAME_FREE_FAILURES = 10
ADDRESS_FREE_FAILURES = 20
WINDOW_S = 15 * 60
WAIT_S = 30
WAIT_CAP_S = 15 * 60

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Held:
    """Why a sign-in must wait: seconds left, and which count holds it."""

    wait_s: int
    reason: str  # "pair", "username" or "address"

    @property
    def message(self) -> str:
        whose = {"pair": "for this username from your address",
                 "username": "for this username",
                 "address": "from your address"}[self.reason]
        return f"Too many failed sign-ins {whose}: try again in {self.wait_s} s."


def _key(kind: str, *parts: str) -> str:
    # Hashed: usernames can be any text, keys should not be.
    digest = hashlib.sha256("\x00".join((kind, *parts)).encode("utf-8", "replace"))
    return f"{key_prefix()}:signin-failures:{digest.hexdigest()}"


def _keys(username: str, address: str) -> dict[str, str]:
    name = username.strip().lower()
    return {"pair": _key("pair", name, address), "username": _key("username", name),
            "address": _key("address", address)}


_FREE = {"pair": FREE_FAILURES, "username": USERNAME_FREE_FAILURES, "address": ADDRESS_FREE_FAILURES}


def _records(keys: list[str]) -> list[tuple[int, float]]:
    try:
        with state_redis().pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.hmget(key, "failures", "last")
            answers = pipe.execute()
    except redis.RedisError:
        log.warning("sign-in throttle: Redis does not answer; counting in this process")
        answers = [cache.get(key) or (0, 0.0) for key in keys]
    return [(int(failures or 0), float(last or 0.0)) for failures, last in answers]


def signin_held(username: str, address: str, now: float | None = None) -> Held | None:
    """The longest wait any of the three counts asks of this attempt, or None (may try)."""
    keys = _keys(username, address)
    at = time.time() if now is None else now
    held: Held | None = None
    for (reason, _), (failures, last) in zip(keys.items(), _records(list(keys.values())), strict=True):
        free = _FREE[reason]
        if failures < free:
            continue
        wait = min(WAIT_CAP_S, WAIT_S * 2 ** (failures - free))
        left = max(0, int(last + wait - at + 0.999))
        if left and (held is None or left > held.wait_s):
            held = Held(left, reason)
    return held


def signin_wait_s(username: str, address: str, now: float | None = None) -> int:
    """Seconds this username from this address must still wait before trying; 0 = may try."""
    held = signin_held(username, address, now)
    return 0 if held is None else held.wait_s


def signin_failed(username: str, address: str, now: float | None = None) -> None:
    at = time.time() if now is None else now
    keys = list(_keys(username, address).values())
    try:
        # One transaction: two processes failing at once both count.
        with state_redis().pipeline(transaction=True) as pipe:
            for key in keys:
                pipe.hincrby(key, "failures", 1).hset(key, "last", repr(at)).expire(key, WINDOW_S + WAIT_CAP_S)
            pipe.execute()
    except redis.RedisError:
        for key in keys:
            failures, _ = cache.get(key) or (0, 0.0)
            cache.set(key, (failures + 1, at), WINDOW_S + WAIT_CAP_S)


def signin_succeeded(username: str, address: str) -> None:
    keys = _keys(username, address)
    cleared = [keys["pair"], keys["username"]]
    cache.delete_many(cleared)
    try:
        state_redis().delete(*cleared)
    except redis.RedisError:
        pass
