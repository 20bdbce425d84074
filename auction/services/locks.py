"""Cluster-wide locks in Redis: one auctioneer, one sim advance, one Otto auctioneer, one
live coalescer at a time.

Diego holds the Locket lock ``auctioneer`` so only one auction runs in the whole
deployment (auction.md 1 step 2): a presence with a 15 s TTL that its holder refreshes
every 5 s. Here the same shape: a redis-py ``Lock`` (SET NX PX with a token, released by
a Lua check-and-delete) with a short TTL, kept alive by a renewer thread while the holder
runs. A killed worker stops renewing, so its lock lapses within the TTL instead of
blocking the cluster. Every holder renews through ``lock_renew``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

import redis
from django.conf import settings

log = logging.getLogger(__name__)

LOCK_TTL_S = 15.0
LOCK_RENEW_S = 5.0


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)


def redis_client() -> redis.Redis:
    return _client(settings.REDIS_STATE_URL)


def lock_renew(lock: redis.lock.Lock, *, expected: bool = False) -> bool:
    """Extend a held lock back to its full TTL; False when it is lost (lapsed, taken by
    another holder, or Redis unreachable): its holder must stop acting as the holder at
    once, and may try to acquire it again. A warning, unless the holder says a lapse is
    ``expected`` and harmless (the live coalescer: a tick that waited behind a slow page
    render lets its short lock lapse, and simply takes it again; dashboard.md S5)."""
    try:
        lock.reacquire()
    except redis.exceptions.RedisError as exc:  # LockError, LockNotOwnedError, ConnectionError ...
        name = lock.name.decode() if isinstance(lock.name, bytes) else lock.name
        log.log(logging.INFO if expected else logging.WARNING,
                "lock %s: renewal failed, no longer held (%s: %s)", name, type(exc).__name__, exc)
        return False
    return True


def _renew(lock: redis.lock.Lock, stop: threading.Event) -> None:
    while not stop.wait(LOCK_RENEW_S):
        if not lock_renew(lock):
            return  # lost it; the holder's writes are still guarded by their transactions


@contextmanager
def cluster_lock(name: str, ttl_s: float = LOCK_TTL_S) -> Iterator[bool]:
    """Yield True when this process holds ``diego:<world>:<name>``, False when another does."""
    lock = redis_client().lock(f"diego:{settings.DIEGO_WORLD}:{name}", timeout=ttl_s,
                               blocking=False, thread_local=False)
    acquired = lock.acquire()
    stop = threading.Event()
    renewer = None
    if acquired:
        renewer = threading.Thread(target=_renew, args=(lock, stop), daemon=True,
                                   name=f"lock-renew-{name}")
        renewer.start()
    try:
        yield acquired
    finally:
        if acquired:
            stop.set()
            if renewer is not None:
                renewer.join(timeout=1)
            try:
                lock.release()
            except redis.exceptions.LockError:
                pass  # expired meanwhile: someone else may hold it now; nothing to undo
