"""``random``: a uniformly random feasible cell (auction.md 8.3)."""

from __future__ import annotations

import random

from ..state import AuctionState, FilterClass
from ..types import AuctionConfig, WorkItem


class RandomChooser:
    """One ``random.Random(seed)`` per engine call; one draw per item with a candidate."""

    def __init__(self, state: AuctionState, config: AuctionConfig) -> None:
        self.state = state
        self.rng = random.Random(config.seed)

    def __call__(self, item: WorkItem, fc: FilterClass) -> tuple[int, float | None] | None:
        candidates = self.state.feasible(item, fc)
        if not candidates:
            return None
        return candidates[self.rng.randrange(len(candidates))], None
