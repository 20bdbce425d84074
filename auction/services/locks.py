"""Cluster-wide locks: one auctioneer, one sim advance, one Otto auctioneer, one live
coalescer at a time.

Diego holds the Locket lock ``auctioneer`` so only one auction runs in the whole
deployment (auction.md 1 step 2): a presence with a 15 s TTL that its holder refreshes
every 5 s. Here the same shape: a redis-py ``Lock`` (SET NX PX with a token, released by
a Lua check-and-delete) with a short TTL, kept alive by a renewer thread while the holder
runs. A killed worker stops renewing, so its lock lapses within the TTL instead of
blocking the cluster. Every holder renews through ``lock_renew``.

Locket lives beside the BBS's database, so its lock holds for every auctioneer that
shares that database. A Redis lock only holds for the processes of one Redis: two stacks
on one database, each with its own Redis, ran two auctions at once. So the simulation's
lock (``cluster_lock``) is also held in the database (``database_lock``): a session
advisory lock on PostgreSQL (released by the server when the holder's connection goes),
a row with the same TTL and renewal on SQLite.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache

import redis
from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, connections
from django.db.models import Q

from auction.models import ClusterLock

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
def renewed(renew: Callable[[threading.Event], None], thread_name: str) -> Iterator[None]:
    """Run ``renew(stop)`` in a daemon thread while the block runs (a lock's holder keeps
    it alive); ``stop`` is set when the block ends."""
    stop = threading.Event()
    renewer = threading.Thread(target=renew, args=(stop,), daemon=True, name=thread_name)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        renewer.join(timeout=1)


@contextmanager
def cluster_lock(name: str, ttl_s: float = LOCK_TTL_S) -> Iterator[bool]:
    """Yield True when this process holds ``diego:<world>:<name>`` in Redis and in the
    database (module docstring), False when another process holds either."""
    lock = redis_client().lock(_lock_name(name), timeout=ttl_s, blocking=False, thread_local=False)
    if not lock.acquire():
        yield False
        return
    try:
        with renewed(lambda stop: _renew(lock, stop), f"lock-renew-{name}"), \
                database_lock(name, ttl_s) as held:
            yield held
    finally:
        try:
            lock.release()
        except redis.exceptions.LockError:
            pass  # expired meanwhile: someone else may hold it now; nothing to undo


def _lock_name(name: str) -> str:
    return f"diego:{settings.DIEGO_WORLD}:{name}"


def _advisory_key(name: str) -> int:
    """PostgreSQL's advisory locks take a bigint: the name's first 8 digest bytes."""
    return int.from_bytes(hashlib.sha256(_lock_name(name).encode()).digest()[:8], "big", signed=True)


@contextmanager
def database_lock(name: str, ttl_s: float = LOCK_TTL_S) -> Iterator[bool]:
    """Yield True when this process holds ``name`` in the database every stack of this
    cluster shares, False when another does (module docstring). Taken outside any
    transaction, so it outlives the holder's transactions and not the holder."""
    if connection.vendor == "postgresql":
        key = _advisory_key(name)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            held = bool(cursor.fetchone()[0])
        try:
            yield held
        finally:
            if held:
                try:
                    with connection.cursor() as cursor:
                        cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
                except DatabaseError:
                    pass  # the connection went: the server released the lock with it
        return
    token = uuid.uuid4().hex
    row = _lock_name(name)
    if not _row_take(row, token, ttl_s):
        yield False
        return
    try:
        with renewed(lambda stop: _row_renew(row, token, ttl_s, stop), f"db-lock-renew-{name}"):
            yield True
    finally:
        try:
            ClusterLock.objects.filter(name=row, holder=token).update(expires_at=0.0)
        except DatabaseError:
            pass  # it lapses by its TTL


def _row_take(name: str, token: str, ttl_s: float) -> bool:
    now = time.time()
    try:
        ClusterLock.objects.get_or_create(name=name)
    except IntegrityError:
        pass  # another process made the row first
    return ClusterLock.objects.filter(name=name).filter(
        Q(expires_at__lt=now) | Q(holder=token)).update(holder=token, expires_at=now + ttl_s) == 1


def _row_renew(name: str, token: str, ttl_s: float, stop: threading.Event) -> None:
    try:
        while not stop.wait(LOCK_RENEW_S):
            try:
                renewed = ClusterLock.objects.filter(name=name, holder=token).update(
                    expires_at=time.time() + ttl_s)
            except DatabaseError as exc:  # busy past the timeout: the next renewal may pass
                log.info("lock %s: renewal in the database waited too long (%s)", name, exc)
                continue
            if not renewed:
                log.warning("lock %s: lost in the database (its TTL lapsed)", name)
                return
    finally:
        connections.close_all()  # this thread's own connection
