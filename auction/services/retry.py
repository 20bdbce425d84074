"""Writers that can meet another writer retry instead of failing (issue 14 point 3).

SQLite serialises writers: WAL lets readers run beside the one writer, the busy timeout
(settings ``OPTIONS["timeout"]``) makes a second writer wait, and ``IMMEDIATE``
transactions take the write lock up front, so "database is locked" only reaches code
when a writer waited longer than the timeout. PostgreSQL can answer a deadlock or a
serialization failure the same way. ``retry_locked`` runs the whole write again, a few
times with a growing pause, before giving up; it only wraps the outermost transaction
(a retry inside an open one could not undo what it already did, so there the error
goes up to the outermost writer, which retries). It also pauses Python's cyclic garbage
collector for the call: a mass change allocates millions of objects and the collector
re-scanned them again and again (seconds on a 100,000-instance auction); collection
resumes after the call.

``lock_stats`` counts what happened, for ``bench.bbs`` and the tests.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import redis
from django.db import OperationalError, connection

from auction.bbs.collector import collector_paused

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

ATTEMPTS = 5
FIRST_PAUSE_S = 0.05
# Words of the errors that mean "another writer holds it, try again".
_TRANSIENT = ("database is locked", "database table is locked", "deadlock detected",
              "could not serialize access")

#: "retried": attempts that met a lock and were run again; "gave_up": calls that failed.
lock_stats: Counter[str] = Counter()


def is_lock_error(error: BaseException) -> bool:
    return isinstance(error, OperationalError) and any(w in str(error).lower() for w in _TRANSIENT)




def transient(error: BaseException) -> bool:
    """A failure the next round of a loop meets no more: another writer's lock, a Redis
    that did not answer in time or restarted."""
    return is_lock_error(error) or isinstance(error, redis.RedisError)


def round_failed(logger: logging.Logger, what: str, error: BaseException) -> None:
    """What a long-running loop (the Otto auctioneer's tick, the orchestrators'
    housekeeping, beat's tick) says of a round that failed and runs again next round: one
    line for a transient failure, a traceback for anything else (a bug)."""
    if transient(error):
        logger.warning("%s: %s; the next round runs it again", what, _first_line(error))
    else:
        logger.error("%s failed", what, exc_info=error)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


@contextmanager
def round_guarded(logger: logging.Logger, what: str) -> Iterator[None]:
    """Around one round of a loop that runs again anyway (beat's tick, a queued auction):
    its failure is ``round_failed``'s words, and the loop goes on."""
    try:
        yield
    except Exception as error:  # noqa: BLE001 - the loop's next round is the retry
        round_failed(logger, what, error)


def retry_locked(fn: F) -> F:
    """Run ``fn`` again when it meets another writer's lock (module docstring)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if connection.in_atomic_block:
            return fn(*args, **kwargs)  # the outermost writer retries
        pause = FIRST_PAUSE_S
        for attempt in range(1, ATTEMPTS + 1):
            try:
                with collector_paused():
                    return fn(*args, **kwargs)
            except OperationalError as error:
                if not is_lock_error(error):
                    raise
                if attempt == ATTEMPTS:
                    lock_stats["gave_up"] += 1
                    raise
                lock_stats["retried"] += 1
                # Not a warning: a retry that succeeds is the design working; one that
                # gives up reaches the loop's ``round_failed``, which says so once.
                log.info("%s met a lock (%s); retry %d of %d in %.2f s", fn.__qualname__,
                         error, attempt, ATTEMPTS - 1, pause)
                time.sleep(pause)
                pause *= 2
        raise AssertionError("unreachable")

    return wrapper  # type: ignore[return-value]
