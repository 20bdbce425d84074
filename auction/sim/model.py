"""The plain data of a simulated cluster, shared by both stores.

The BBS's own records are ``auction.bbs.types`` (ActualLRP, Task); what a simulated
Diego adds around them lives here: cells with the rep's health and presence, apps (a
DesiredLRP with the simulator's knobs), tasks with their definition and run time, and
the auctioneer's queue of start requests. The database store maps its models to these,
the memory store holds them directly; the rules in ``auction.sim`` read and return them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Final

from auction.bbs import types as core

HEALTHY: Final = "healthy"
DRAINING: Final = "draining"
FAILED: Final = "failed"
CELL_STATES: Final = (HEALTHY, DRAINING, FAILED)
#: The cell states whose rep reports nothing: its timers wait (``auction.sim.timers``).
SILENT_STATES: Final = frozenset({FAILED})


@dataclass(slots=True)
class SimCell:
    """A Diego cell (rep): capacity, what it can run, and its health as the sim sees it."""

    cell_id: str
    zone: str
    index: int = 0
    memory_mb: int = 8192
    disk_mb: int = 32768
    containers: int = 250
    preloaded_rootfses: tuple[str, ...] = ("cflinuxfs4",)
    rootfs_providers: tuple[str, ...] = ("docker",)
    volume_drivers: tuple[str, ...] = ()
    placement_tags: tuple[str, ...] = ()
    optional_placement_tags: tuple[str, ...] = ()
    proxy_memory_mb: int = 0
    state: str = HEALTHY
    presence_lost_at: float | None = None
    evacuating_since: float | None = None
    evacuation_synced_at: float | None = None

    def has_presence(self, now: float) -> bool:
        """bbs.md 6.1: the presence is alive until the instant it lapses."""
        return self.presence_lost_at is None or now < self.presence_lost_at

    def answers(self, now: float) -> bool:
        """auction.md 1.3: the state fetch reaches a healthy cell with a presence."""
        return self.state == HEALTHY and self.has_presence(now)

    @property
    def silent(self) -> bool:
        """A failed cell's rep reports nothing (no start, crash or completion)."""
        return self.state in SILENT_STATES


@dataclass(slots=True)
class SimApp:
    """A DesiredLRP (the fields the simulation reads) with the simulator's knobs."""

    process_guid: str
    domain: str = "cf-apps"
    instances: int = 1
    memory_mb: int = 256
    disk_mb: int = 1024
    rootfs: str = "preloaded:cflinuxfs4"
    placement_tags: tuple[str, ...] = ()
    volume_drivers: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    start_delay_s: float = 3.0
    crash_probability: float = 0.0
    crash_after_s: float = 10.0
    # The BBS's modification tag (bbs.md 1.1): a new epoch at desire, index + 1 per update.
    epoch: str = ""
    tag: int = 0


@dataclass(slots=True)
class SimTask:
    """A task: the BBS record (``task``) and its definition and run time."""

    task: core.Task
    memory_mb: int = 256
    disk_mb: int = 1024
    rootfs: str = "preloaded:cflinuxfs4"
    placement_tags: tuple[str, ...] = ()
    volume_drivers: tuple[str, ...] = ()
    duration_s: float = 60.0
    placement_mode: str = "diego"

    @property
    def task_guid(self) -> str:
        return self.task.task_guid


@dataclass(slots=True)
class QueuedWork:
    """One item of a start request waiting for an auction (auction.md 1 steps 1 and 4).

    ``seq`` orders arrivals (the database's row id); ``queued_at`` is the first time the
    item was queued and survives carry-over; a carried item waits in its previous batch
    position and cannot start an auction by itself.
    """

    seq: int
    kind: str  # "lrp" | "task"
    process_guid: str = ""
    index: int = 0
    task_guid: str = ""
    queued_at: float = 0.0
    reason: str = ""
    carried: bool = False
    batch_position: int = 0
    attempts: int = 0
    last_error: str = ""

    @property
    def ident(self) -> str:
        return f"{self.process_guid}.{self.index}" if self.kind == "lrp" else self.task_guid

    def batch_key(self) -> tuple[bool, int, int]:
        """Carried items first in their previous order, then new ones by arrival (1.4)."""
        return (not self.carried, self.batch_position, self.seq)

    def numbered(self, seq: int) -> QueuedWork:
        """This item under its arrival number (``dataclasses.replace`` took five times as
        long, and a real-size run queues 136,000 items)."""
        return QueuedWork(seq, self.kind, self.process_guid, self.index, self.task_guid, self.queued_at,
                          self.reason, self.carried, self.batch_position, self.attempts, self.last_error)


def app_from_spec(spec: dict[str, Any]) -> SimApp:
    """A SimApp from a scenario's or a request's fields (unknown members ignored)."""
    return SimApp(**record_fields(SimApp, spec))


def record_fields(kind: type, spec: dict[str, Any]) -> dict[str, Any]:
    """The members of ``spec`` that ``kind`` (a dataclass) has, lists as tuples."""
    known = {f.name for f in fields(kind)}
    return {k: (tuple(v) if isinstance(v, list) else v) for k, v in spec.items() if k in known}


def evolve_cell(cell: SimCell, **changes: Any) -> SimCell:
    return replace(cell, **changes)


@dataclass(slots=True)
class Load:
    """What a rep has reserved: CLAIMED/RUNNING instances (any presence) and RUNNING tasks.

    ``lrps`` counts the instances per process guid (what the auction's zone walk reads).
    """

    memory_mb: int = 0
    disk_mb: int = 0
    containers: int = 0
    starting: int = 0
    lrps: dict[str, int] = field(default_factory=dict)
    tasks: list[str] = field(default_factory=list)
