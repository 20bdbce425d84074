"""The memory store: a simulated cluster in plain Python objects (``world.World``)."""

from auction.sim.memory.records import AuctionRecord, LogEntry, WorldError
from auction.sim.memory.rows import RowTable
from auction.sim.memory.world import World
from auction.sim.model import DRAINING, FAILED, HEALTHY, SimApp, SimCell, SimTask, app_from_spec

__all__ = [
    "DRAINING", "FAILED", "HEALTHY", "AuctionRecord", "LogEntry", "RowTable", "SimApp", "SimCell",
    "SimTask", "World", "WorldError", "app_from_spec",
]
