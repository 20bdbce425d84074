"""What a memory world records of its run: auctions, the event log, and its one error."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from auction.bbs import types as core
from auction.engine.types import slot_writers
from auction.sim.quality import AuctionStats


class WorldError(ValueError):
    """A request the simulated cluster refuses (unknown cell, duplicate guid, ...)."""


@dataclass(slots=True)
class AuctionRecord:
    at: float
    items: int
    placed: dict[str, str]
    failures: dict[str, str]
    order: list[str]
    stats: AuctionStats


@dataclass(slots=True, frozen=True)
class LogEntry:
    """One event of the run: a BBS event (bbs.md 8) or a note of the simulator's."""

    at: float
    type: str
    key: str = ""
    cell_id: str = ""

    def __init__(self, at: float, type: str, key: str = "", cell_id: str = "") -> None:
        # The slots written directly (``slot_writers``): a run logs a million.
        _set_at(self, at)
        _set_type(self, type)
        _set_key(self, key)
        _set_cell_id(self, cell_id)


_set_at, _set_type, _set_key, _set_cell_id = slot_writers(LogEntry)





def entries(at: float, events: Iterable[Any]) -> list[LogEntry]:
    """An entry per event, keyed by its row (after, else before). An instance change's
    events (instance, then group) name the same row: its key is made once for both."""
    entries: list[LogEntry] = []
    last: Any = None
    key = cell_id = ""
    for event in events:
        row = event.after if event.after is not None else event.before
        if row is not last:
            last = row
            if isinstance(row, core.ActualLRP):
                key, cell_id = f"{row.process_guid}.{row.index}", row.cell_id
            elif isinstance(row, core.Task):
                key, cell_id = row.task_guid, row.cell_id
            else:
                key, cell_id = getattr(row, "process_guid", ""), ""
        entries.append(LogEntry(at, event.type, key, cell_id))
    return entries

