"""``dea``: the pre-Diego Cloud Controller placement (auction.md 8.1).

From the seed ``dea-placement-algorithm.txt`` and ``eligible_advertisement_filter.rb``:
feasible cells, then (LRPs only) the least-loaded zone and the fewest instances of the
app per cell, then the top half by available memory, then one random pick.
"""

from __future__ import annotations

import random

from ..state import AuctionState, FilterClass
from ..types import AuctionConfig, LRPWork, WorkItem


def top_half_by_memory(candidates: list[int], memory: list[int]) -> list[int]:
    """Step 4: keep cells with at least the memory at position ⌊n/2⌋ of the ascending sort."""
    threshold = sorted(memory[p] for p in candidates)[len(candidates) // 2]
    return [p for p in candidates if memory[p] >= threshold]


class DeaChooser:
    def __init__(self, state: AuctionState, config: AuctionConfig) -> None:
        self.state = state
        self.rng = random.Random(config.seed)

    def narrow(self, item: WorkItem, fc: FilterClass) -> list[int]:
        """The final candidates before the random pick, in input order."""
        st = self.state
        candidates = st.feasible(item, fc)  # step 1: adequate disk, memory, stack
        if candidates and type(item) is LRPWork:
            guid = item.process_guid
            per_zone = st.zone_counts_of(guid)
            # Step 2: zone counts over all cells of the zone, as in auction.md 4.2.
            zone_load = {p: per_zone.get(st.zone_of[p], 0) for p in candidates}
            least = min(zone_load.values())
            candidates = [p for p in candidates if zone_load[p] == least]
            # Step 3: the fewest instances of the app on the cell itself.
            own = {p: st.lrp_counts[p].get(guid, 0) for p in candidates}
            fewest = min(own.values())
            candidates = [p for p in candidates if own[p] == fewest]
        if candidates:
            candidates = top_half_by_memory(candidates, st.a_mem)
        return candidates

    def __call__(self, item: WorkItem, fc: FilterClass) -> tuple[int, float | None] | None:
        candidates = self.narrow(item, fc)
        if not candidates:
            return None
        return candidates[self.rng.randrange(len(candidates))], None  # dea has no score
