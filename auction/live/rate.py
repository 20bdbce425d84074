"""At most N events in any rolling second (dashboard.md L3: at most 4 frames/s).

A minimum spacing of 250 ms would meet the rate too, but makes a change that follows a
frame wait up to 250 ms; a rolling window lets it go at once while the last second had
fewer than N, and still caps a burst at N per second.
"""

from __future__ import annotations

import time
from collections import deque


class RateWindow:
    def __init__(self, per_second: int = 4, window_s: float = 1.0) -> None:
        self.per_second = per_second
        self.window_s = window_s
        self.sent: deque[float] = deque()

    def wait(self, now: float | None = None) -> float:
        """Seconds until one more event may go (0 when it may go now)."""
        now = time.monotonic() if now is None else now
        while self.sent and now - self.sent[0] >= self.window_s:
            self.sent.popleft()
        if len(self.sent) < self.per_second:
            return 0.0
        return self.sent[0] + self.window_s - now

    def record(self, now: float | None = None) -> None:
        self.sent.append(time.monotonic() if now is None else now)
