"""Publishing from services: mark what changed, after the transaction commits.

Services never render and never send (dashboard.md L3). They only mark keys dirty in
Redis (a set per world); the coalescer (auction/live/coalescer.py) renders each dirty
element once per 250 ms tick, in its latest state, and sends one frame per group. A
burst of 10,000 placements therefore costs one render per changed cell, not one
frame per placement.

Marks are made after commit (zulip's ``send_event_on_commit``) so a browser never sees
a change that was rolled back. The database is the truth and Redis only notifies, so a
Redis outage loses a frame, never data: errors are logged, not raised into the service.

Dirty keys are ``<renderer>:<argument>``: ``cell:<cell_id>``, ``zone:<zone>``,
``tile:<zone>``, ``tray``, ``clock``, and ``html:<group>|<element id>`` for a fragment a
caller rendered itself (its latest HTML waits in Redis under that key).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import redis
from django.conf import settings
from django.db import transaction

log = logging.getLogger(__name__)

# A stored fragment lives this long without a tick to take it (no viewer anywhere).
STORED_TTL_S = 120
_ROOT_ID = re.compile(r"""^\s*<[A-Za-z][\w-]*[^>]*?\sid=["']([^"']+)["']""")

_suppressed = False


@contextmanager
def suppressed() -> Iterator[None]:
    """No marks at all: for set-up commands that run before any server or browser."""
    global _suppressed
    previous, _suppressed = _suppressed, True
    try:
        yield
    finally:
        _suppressed = previous


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)


def state_redis() -> redis.Redis:
    return _client(settings.REDIS_STATE_URL)


def key_prefix(world: str | None = None) -> str:
    return f"live:{world or settings.DIEGO_WORLD}"


def dirty_set(world: str | None = None) -> str:
    return f"{key_prefix(world)}:dirty"


def wake_list(world: str | None = None) -> str:
    """The coalescer blocks on this list between ticks, so a lone change waits no tick."""
    return f"{key_prefix(world)}:wake"


def stored_key(dirty_key: str, world: str | None = None) -> str:
    return f"{key_prefix(world)}:store:{dirty_key}"


def generation_key(world: str | None = None) -> str:
    """A counter every mark but beat's clock tick increments (dashboard.md L9): while it
    stands still nothing visible changed, so the simulation's next due instant stands too."""
    return f"{key_prefix(world)}:generation"


def generation() -> int | None:
    """The world's change counter now; None when Redis cannot say."""
    try:
        value = state_redis().get(generation_key())
    except redis.RedisError as exc:
        log.warning("live: reading the change counter failed: %s", exc)
        return None
    return int(value or 0)


def mark_dirty(*keys: str, stored: dict[str, str] | None = None, changed: bool = True) -> bool:
    """Mark elements changed now. ``stored`` holds the payload of ``html:``/``msg:`` keys.

    The payload is written before the mark, so a tick that sees the mark finds it.
    ``changed=False`` (beat's clock tick only: the face moves, nothing else) leaves the
    change counter (``generation_key``) as it is.
    """
    if _suppressed or not keys:
        return False
    try:
        pipe = state_redis().pipeline(transaction=False)
        for key, value in (stored or {}).items():
            pipe.set(stored_key(key), value, ex=STORED_TTL_S)
        pipe.sadd(dirty_set(), *keys)
        if changed:
            pipe.incr(generation_key())
        # One wake-up token is enough however many marks arrive (the list stays <= 1).
        pipe.lpush(wake_list(), 1)
        pipe.ltrim(wake_list(), 0, 0)
        pipe.execute()
    except redis.RedisError as exc:
        log.warning("live: marking %d keys dirty failed: %s", len(keys), exc)
        return False
    return True


def clock_channel(world: str | None = None) -> str:
    """Pub/Sub channel told of every change of the clock (otto.md 11): the Otto processes
    wait on it instead of re-reading the clock row."""
    return f"{key_prefix(world)}:clock-changed"


def clock_changed(state: dict[str, Any] | None = None) -> bool:
    """Tell whoever waits on the clock that it changed (pause, speed, step, reset), with
    its new state (``anchor_sim``, ``anchor_wall``, ``speed``, ``paused``): a listener
    stamps arrivals on the new clock at once, before it could read the row."""
    if _suppressed:
        return False
    try:
        state_redis().publish(clock_channel(), json.dumps(state) if state is not None else "{}")
    except redis.RedisError as exc:
        log.warning("live: announcing a clock change failed: %s", exc)
        return False
    return True


def sim_channel(world: str | None = None) -> str:
    """Pub/Sub channel told when an advance handled something due (tasks may have finished):
    the Otto orchestrators look for finished tasks then, not on a timer (otto.md 11)."""
    return f"{key_prefix(world)}:sim-advanced"


def sim_advanced() -> bool:
    if _suppressed:
        return False
    try:
        state_redis().publish(sim_channel(), "1")
    except redis.RedisError as exc:
        log.warning("live: announcing an advance failed: %s", exc)
        return False
    return True


# The marks a transaction makes, sent as one mark after its commit. One mark per call made
# a change's keys land in two ticks (its events first, then its cells, a moment apart): two
# frames, which spent a page's 4 a second and held the next change's frame back for up
# to a second (dashboard.md L3).
_commit_marks = threading.local()


def _mark_after_commit(keys: Iterable[str], stored: dict[str, str] | None = None) -> None:
    pending = getattr(_commit_marks, "pending", None)
    if pending is None:
        pending = _commit_marks.pending = ({}, {})
    pending[0].update(dict.fromkeys(keys))
    pending[1].update(stored or {})
    # Every call registers the flush: a rolled-back (savepoint) block drops its own
    # registration, and its keys then go with the next commit's (a harmless re-render).
    transaction.on_commit(_flush_commit_marks)


def _flush_commit_marks() -> None:
    pending = getattr(_commit_marks, "pending", None)
    _commit_marks.pending = None
    if pending and pending[0]:
        mark_dirty(*pending[0], stored=pending[1])


def mark_dirty_after_commit(*keys: str) -> None:
    _mark_after_commit(keys)


def commit_marks_forget() -> None:
    """Tests whose transactions never commit (rolled back) leave their marks pending."""
    _commit_marks.pending = None


def cells_changed(cell_ids: Iterable[str]) -> tuple[str, ...]:
    """The keys a change on these cells dirties: the cells, the tray (work moved) and
    desired vs actual (instances changed state)."""
    return (*(f"cell:{c}" for c in cell_ids), "tray", "lrps", "controls")


# What stored BBS events change: the feed and the history (M2), the metrics (M1), desired
# vs actual (D1).
EVENTS_CHANGED = ("feed", "events", "metrics", "lrps")


def topic_of(group_name: str) -> str:
    """``w.<world>.zone.z1`` → ``zone.z1``."""
    parts = group_name.split(".", 2)
    return parts[2] if len(parts) == 3 and parts[0] == "w" else group_name


def html_key(group_name: str, html: str) -> str:
    """The dirty key of a caller-rendered fragment: its group and its root element's id.

    Two fragments with the same id in one tick collapse to the latest (L3).
    """
    match = _ROOT_ID.match(html)
    if match is None:
        raise ValueError("a live fragment needs a root element with an id (it is swapped by id)")
    return f"html:{topic_of(group_name)}|{match.group(1)}"


def publish_html(group_name: str, html: str) -> bool:
    """Send a fragment someone rendered (one root element with an id) at the next tick."""
    key = html_key(group_name, html)
    return mark_dirty(key, stored={key: html})


def _message_marks(group_name: str, message: dict[str, Any]) -> tuple[tuple[str, ...], dict[str, str]]:
    """The dirty keys (and stored payloads) a channel-layer style message stands for (L3).

    - ``live.frame`` with ``html``: the fragment, latest per element id;
    - ``live.cells`` with ``cells``: those cells (re-rendered by the coalescer) and the tray;
    - ``live.events``: the feed, the history, the metrics and desired vs actual;
    - anything else: the latest message of that type per group, forwarded at the tick.
    """
    kind = message.get("type")
    if kind == "live.frame" and "html" in message:
        key = html_key(group_name, message["html"])
        return (key,), {key: message["html"]}
    if kind == "live.cells":
        return cells_changed(message.get("cells", [])), {}
    if kind == "live.events":
        return EVENTS_CHANGED, {}
    key = f"msg:{topic_of(group_name)}|{kind}"
    return (key,), {key: json.dumps(message)}


def publish_after_commit(group_name: str, message: dict[str, Any]) -> None:
    _mark_after_commit(*_message_marks(group_name, message))

