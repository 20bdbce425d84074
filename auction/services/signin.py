"""Sign-in throttling (dashboard.md AD7): failed passwords per username and address.

Counted in the state Redis, so every web process of a deployment (two daphnes behind
one address, issue 14's topology) shares one count: an attacker gains nothing by
landing on the other process. Should that Redis not answer, the count falls back to
this process's memory cache rather than refusing every sign-in. After
``FREE_FAILURES`` failures for one username from one address within ``WINDOW_S``, each
further attempt must wait ``WAIT_S`` seconds after the last failure, doubling with every
failure after that up to ``WAIT_CAP_S``; while waiting, the password is not even checked.
A success clears the count.
"""

from __future__ import annotations

import hashlib
import logging
import time

import redis
from django.core.cache import cache

from auction.live.publish import key_prefix, state_redis

FREE_FAILURES = 5
WINDOW_S = 15 * 60
WAIT_S = 30
WAIT_CAP_S = 15 * 60

log = logging.getLogger(__name__)


def _key(username: str, address: str) -> str:
    # Hashed: usernames can be any text, keys should not be.
    digest = hashlib.sha256(f"{username.strip().lower()}\x00{address}".encode("utf-8", "replace"))
    return f"{key_prefix()}:signin-failures:{digest.hexdigest()}"


def _record(key: str) -> tuple[int, float]:
    try:
        failures, last = state_redis().hmget(key, "failures", "last")
    except redis.RedisError:
        log.warning("sign-in throttle: Redis does not answer; counting in this process")
        failures, last = cache.get(key) or (0, 0.0)
    return int(failures or 0), float(last or 0.0)


def signin_wait_s(username: str, address: str, now: float | None = None) -> int:
    """Seconds this username from this address must still wait before trying; 0 = may try."""
    failures, last = _record(_key(username, address))
    if failures < FREE_FAILURES:
        return 0
    wait = min(WAIT_CAP_S, WAIT_S * 2 ** (failures - FREE_FAILURES))
    left = last + wait - (time.time() if now is None else now)
    return max(0, int(left + 0.999))


def signin_failed(username: str, address: str, now: float | None = None) -> None:
    key, at = _key(username, address), time.time() if now is None else now
    try:
        # One transaction: two processes failing at once both count.
        with state_redis().pipeline(transaction=True) as pipe:
            pipe.hincrby(key, "failures", 1).hset(key, "last", repr(at)).expire(key, WINDOW_S + WAIT_CAP_S)
            pipe.execute()
    except redis.RedisError:
        failures, _ = cache.get(key) or (0, 0.0)
        cache.set(key, (failures + 1, at), WINDOW_S + WAIT_CAP_S)


def signin_succeeded(username: str, address: str) -> None:
    key = _key(username, address)
    cache.delete(key)
    try:
        state_redis().delete(key)
    except redis.RedisError:
        pass
