"""Row-level changes the core hands back for a shell to apply generically.

The core never writes: it describes each write as data, in the order it must be
applied (a promotion deletes the ORDINARY row before the SUSPECT row takes its key;
a lost cell's row turns SUSPECT before its replacement takes the ORDINARY key), so a
database shell can replay the list in one transaction under a unique
(process_guid, index, presence) constraint.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from auction.bbs.types import ActualLRP, RowKey, Task
from auction.engine.types import slot_writers


@dataclass(slots=True, frozen=True)
class RowDelete:
    """Delete the ActualLRP row stored under ``key``."""

    key: RowKey
    before: ActualLRP


@dataclass(slots=True, frozen=True)
class RowUpdate:
    """Rewrite the row stored under ``key``; ``after.key`` may differ (presence change)."""

    key: RowKey
    before: ActualLRP
    after: ActualLRP

    def __init__(self, key: RowKey, before: ActualLRP, after: ActualLRP) -> None:
        # The slots written directly (``slot_writers``): one per claim, start and crash.
        _set_key(self, key)
        _set_before(self, before)
        _set_after(self, after)

    @property
    def changed(self) -> dict[str, Any]:
        """The new values of the fields that differ, for an ``UPDATE ... SET``."""
        return _changed_fields(self.before, self.after)


_set_key, _set_before, _set_after = slot_writers(RowUpdate)


@dataclass(slots=True, frozen=True)
class RowCreate:
    """Insert a new ActualLRP row."""

    row: ActualLRP


RowOp = RowDelete | RowUpdate | RowCreate


@dataclass(slots=True, frozen=True)
class StopRequest:
    """Tell ``cell_id`` to stop a container; the row stays until the cell reports it
    removed (bbs.md 2.3 Retire)."""

    key: RowKey
    cell_id: str
    instance_guid: str


@dataclass(slots=True, frozen=True)
class TaskUpdate:
    before: Task
    after: Task

    @property
    def changed(self) -> dict[str, Any]:
        return _changed_fields(self.before, self.after)


@dataclass(slots=True, frozen=True)
class TaskDelete:
    before: Task


TaskOp = TaskUpdate | TaskDelete


def _changed_fields(before: Any, after: Any) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for f in fields(after):
        value = getattr(after, f.name)
        if getattr(before, f.name) != value:
            result[f.name] = value
    return result

