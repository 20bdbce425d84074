"""One render of a region per (group, page query, frame number), shared by everyone
connecting at that moment (dashboard.md L1).

A region rendered after its group's frame number was read holds every change up to that
number (and maybe later ones, which the next frames bring again: frames replace elements
whole). So any page that reads the same number can take that render instead of making its
own: a room of 200 screens opening a 1,500-block grid renders it once, not 200 times. The
coalescer numbers a group's changes even while nobody watches it, so a number never stands
for two different states.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

TTL_S = 5.0
ENTRIES = 32

_lock = threading.Lock()
_entries: OrderedDict[Hashable, tuple[float, str]] = OrderedDict()
_rendering: dict[Hashable, threading.Lock] = {}


def _fresh(key: Hashable, now: float) -> str | None:
    hit = _entries.get(key)
    if hit is None or hit[0] < now:
        return None
    _entries.move_to_end(key)
    return hit[1]


def region_snapshot(key: Hashable, render: Callable[[], str]) -> str:
    """The region for ``key`` (group, query, frame number): rendered once, by whichever
    caller comes first; the others wait for that render instead of repeating it."""
    with _lock:
        hit = _fresh(key, time.monotonic())
        if hit is not None:
            return hit
        rendering = _rendering.setdefault(key, threading.Lock())
    with rendering:
        with _lock:
            hit = _fresh(key, time.monotonic())
            if hit is not None:
                return hit
        html = render()
        with _lock:
            _entries[key] = (time.monotonic() + TTL_S, html)
            while len(_entries) > ENTRIES:
                _entries.popitem(last=False)
            _rendering.pop(key, None)
    return html


def clear() -> None:
    with _lock:
        _entries.clear()
