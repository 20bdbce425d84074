"""The comparison strategies of auction.md 8, behind the same chooser interface as ``diego``.

A chooser is called once per item that passed the shared checks, with the item's
compatible cells; it returns ``(cell position, score)`` or ``None`` when no compatible
cell fits. ``make_chooser`` builds the one ``AuctionConfig.placement_strategy`` names.
"""

from __future__ import annotations

from collections.abc import Callable

from ..state import AuctionState, FilterClass
from ..types import AuctionConfig, WorkItem
from .dea import DeaChooser
from .objective import ObjectiveChooser
from .random_ import RandomChooser

Chooser = Callable[[WorkItem, FilterClass], "tuple[int, float | None] | None"]


def make_chooser(state: AuctionState, config: AuctionConfig) -> Chooser:
    strategy = config.placement_strategy
    if strategy == "dea":
        return DeaChooser(state, config)
    if strategy == "objective":
        return ObjectiveChooser(state, config)
    if strategy == "random":
        return RandomChooser(state, config)
    raise ValueError(f"no chooser for placement_strategy {strategy!r}")


__all__ = ["Chooser", "DeaChooser", "ObjectiveChooser", "RandomChooser", "make_chooser"]
