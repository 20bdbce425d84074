"""The events a change emits (bbs.md 8), as data published after commit.

Two ActualLRP streams: the instance stream (``actual_lrp_instance_*``) and the legacy
group stream (``actual_lrp_*``). A change that clears the instance key (to UNCLAIMED)
is an instance *removed* of the before row then an instance *created* of the after
row, but a group *changed*.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from auction.bbs.types import UNCLAIMED, ActualLRP, DesiredLRP, Task
from auction.engine.types import slot_writers

INSTANCE_CREATED: Final = "actual_lrp_instance_created"
INSTANCE_CHANGED: Final = "actual_lrp_instance_changed"
INSTANCE_REMOVED: Final = "actual_lrp_instance_removed"
LRP_CRASHED: Final = "actual_lrp_crashed"
GROUP_CREATED: Final = "actual_lrp_created"
GROUP_CHANGED: Final = "actual_lrp_changed"
GROUP_REMOVED: Final = "actual_lrp_removed"
TASK_CREATED: Final = "task_created"
TASK_CHANGED: Final = "task_changed"
TASK_REMOVED: Final = "task_removed"


@dataclass(slots=True, frozen=True)
class Event:
    """One event: its ``type`` and the rows before and after (``None`` when absent).

    ``actual_lrp_crashed`` carries the pre-crash row as ``before`` (its key) and the
    crashed row as ``after`` (the new count and reason).
    """

    type: str
    before: ActualLRP | Task | DesiredLRP | None = None
    after: ActualLRP | Task | DesiredLRP | None = None

    def __init__(self, type: str, before: ActualLRP | Task | DesiredLRP | None = None,
                 after: ActualLRP | Task | DesiredLRP | None = None) -> None:
        # The slots written directly (``slot_writers``): two events per instance change.
        _set_type(self, type)
        _set_before(self, before)
        _set_after(self, after)


_set_type, _set_before, _set_after = slot_writers(Event)


def created(row: ActualLRP, *, group: bool) -> list[Event]:
    events = [Event(INSTANCE_CREATED, after=row)]
    if group:
        events.append(Event(GROUP_CREATED, after=row))
    return events


def removed(row: ActualLRP, *, group: bool) -> list[Event]:
    events = [Event(INSTANCE_REMOVED, before=row)]
    if group:
        events.append(Event(GROUP_REMOVED, before=row))
    return events


def changed(before: ActualLRP, after: ActualLRP, *, group: bool) -> list[Event]:
    """A change that keeps the row's identity; to UNCLAIMED it is removed + created.

    bbs.md 8 wants the events leaving an instance RUNNING first within an operation:
    the instance events already come first here, the group event last.
    """
    if after.state == UNCLAIMED and before.state != UNCLAIMED:
        events = [Event(INSTANCE_REMOVED, before=before), Event(INSTANCE_CREATED, after=after)]
    else:
        events = [Event(INSTANCE_CHANGED, before, after)]
    if group:
        events.append(Event(GROUP_CHANGED, before, after))
    return events
