"""No bids at close: re-announce after 2, 4, 8, 16, 32, 60, 60... sim-s, +-10 % seeded jitter (otto.md 7)."""

from __future__ import annotations

import random

BASE_S = 2.0
CAP_S = 60.0
JITTER = 0.10


def backoff_delay(announcements: int, jitter_seed: str | None = None) -> float:
    """Delay after the ``announcements``-th announcement drew no bids (1 -> 2 s, 2 -> 4 s ...)."""
    if announcements < 1:
        raise ValueError("announcements start at 1")
    delay = min(CAP_S, BASE_S * 2.0 ** (announcements - 1))
    if jitter_seed is None:
        return delay
    factor = 1 + random.Random(f"{jitter_seed}:{announcements}").uniform(-JITTER, JITTER)
    return round(delay * factor, 3)
