"""Sign-in throttling (dashboard.md AD7): failed passwords per username and address.

Counted in Django's cache (the default per-process memory cache: the dashboard is one
daphne process; a restart forgets the counts, which only shortens a wait). After
``FREE_FAILURES`` failures for one username from one address within ``WINDOW_S``, each
further attempt must wait ``WAIT_S`` seconds after the last failure, doubling with every
failure after that up to ``WAIT_CAP_S``; while waiting, the password is not even checked.
A success clears the count.
"""

from __future__ import annotations

import hashlib
import time

from django.core.cache import cache

FREE_FAILURES = 5
WINDOW_S = 15 * 60
WAIT_S = 30
WAIT_CAP_S = 15 * 60


def _key(username: str, address: str) -> str:
    # Hashed: usernames can be any text, cache keys cannot.
    digest = hashlib.sha256(f"{username.strip().lower()}\x00{address}".encode("utf-8", "replace"))
    return "signin-failures:" + digest.hexdigest()


def signin_wait_s(username: str, address: str, now: float | None = None) -> int:
    """Seconds this username from this address must still wait before trying; 0 = may try."""
    record = cache.get(_key(username, address))
    if not record:
        return 0
    failures, last = record
    if failures < FREE_FAILURES:
        return 0
    wait = min(WAIT_CAP_S, WAIT_S * 2 ** (failures - FREE_FAILURES))
    left = last + wait - (time.time() if now is None else now)
    return max(0, int(left + 0.999))


def signin_failed(username: str, address: str, now: float | None = None) -> None:
    key = _key(username, address)
    failures, _ = cache.get(key) or (0, 0.0)
    cache.set(key, (failures + 1, time.time() if now is None else now), WINDOW_S + WAIT_CAP_S)


def signin_succeeded(username: str, address: str) -> None:
    cache.delete(_key(username, address))
