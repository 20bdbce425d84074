"""Cluster-wide locks in Redis: one auctioneer, one converger, one sim tick at a time.

Diego holds the Locket lock ``auctioneer`` so only one auction runs in the whole
deployment (auction.md 1 step 2); here it is a redis-py ``Lock`` (SET NX PX with a
token, released by a Lua check-and-delete) with a TTL, so a killed worker's lock
expires instead of blocking the cluster forever.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

import redis
from django.conf import settings


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)


def redis_client() -> redis.Redis:
    return _client(settings.REDIS_STATE_URL)


@contextmanager
def cluster_lock(name: str, ttl_s: float = 60.0) -> Iterator[bool]:
    """Yield True when this process holds ``diego:<name>``, False when another does."""
    lock = redis_client().lock(f"diego:{settings.DIEGO_WORLD}:{name}", timeout=ttl_s,
                               blocking=False, thread_local=False)
    acquired = lock.acquire()
    try:
        yield acquired
    finally:
        if acquired:
            try:
                lock.release()
            except redis.exceptions.LockError:
                pass  # expired meanwhile: someone else may hold it now; nothing to undo
