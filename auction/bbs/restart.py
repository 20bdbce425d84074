"""The crash restart policy (bbs.md 3; ``bbs: models/restart_calculator.go``).

Pure arithmetic on a crash count and two instants, shared by the crash operation
(``crash.py``) and convergence step 10 (``lrp_convergence.py``).
"""

from __future__ import annotations

import math
from typing import Final

from auction.bbs.types import RUNNING

# bbs.md 3: the first two crashes restart at once ...
IMMEDIATE_RESTARTS: Final = 2
# ... after that back-off starts at 30 s and doubles up to 2^5 times (960 s) ...
BACKOFF_BASE_S: Final = 30.0
MAX_BACKOFF_EXPONENT: Final = 5
# ... and at 200 crashes the instance is never restarted again.
MAX_RESTART_ATTEMPTS: Final = 200
# bbs.md 0/3: an instance RUNNING for more than this long gets its count reset.
CRASH_RESET_AFTER_S: Final = 300.0


def backoff_s(crash_count: int) -> float:
    """B(n) of bbs.md 3: 0 for n < 3, 30 x 2^min(n-3, 5) up to 199, infinity from 200."""
    if crash_count <= IMMEDIATE_RESTARTS:
        return 0.0
    if crash_count >= MAX_RESTART_ATTEMPTS:
        return math.inf
    exponent = min(crash_count - IMMEDIATE_RESTARTS - 1, MAX_BACKOFF_EXPONENT)
    return BACKOFF_BASE_S * 2.0**exponent


def restarts_immediately(crash_count: int) -> bool:
    """bbs.md 3: only the 1st and 2nd crash go UNCLAIMED with a start in the same call."""
    return crash_count <= IMMEDIATE_RESTARTS


def should_restart(crash_count: int, since: float, now: float) -> bool:
    """Is a CRASHED row due for a restart at ``now``? (bbs.md 3, step 10 of 4.2).

    Non-strict: ``since + B(n) <= now`` (bbs.md 10 lists this ``<=`` as a quirk to
    keep); n < 3 restarts at the next pass whatever ``since`` is; n >= 200 never.
    """
    if crash_count >= MAX_RESTART_ATTEMPTS:
        return False
    if crash_count <= IMMEDIATE_RESTARTS:
        return True
    return since + backoff_s(crash_count) <= now


def crash_count_after(state: str, since: float, crash_count: int, now: float) -> int:
    """n after a crash (bbs.md 3): 1 after more than 300 s RUNNING, else old n + 1.

    A CLAIMED instance never resets: it never proved healthy, however long it took.
    """
    if state == RUNNING and now - since > CRASH_RESET_AFTER_S:
        return 1
    return crash_count + 1
