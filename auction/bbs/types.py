"""Rows and snapshot of the BBS core (bbs.md sections 1, 2.1, 5, 7).

Plain slotted dataclasses: the shell builds them from the database, the core reads
them and never mutates them (every change is a new row made with
``dataclasses.replace``), so a "before" row handed back in an event or row change is
exactly what the shell loaded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, Final

# bbs.md 2.1: the four states and three presences, written as Diego writes them.
UNCLAIMED: Final = "UNCLAIMED"
CLAIMED: Final = "CLAIMED"
RUNNING: Final = "RUNNING"
CRASHED: Final = "CRASHED"
LRP_STATES: Final = (UNCLAIMED, CLAIMED, RUNNING, CRASHED)

ORDINARY: Final = "ORDINARY"
EVACUATING: Final = "EVACUATING"
SUSPECT: Final = "SUSPECT"
PRESENCES: Final = (ORDINARY, EVACUATING, SUSPECT)

PENDING: Final = "PENDING"
TASK_RUNNING: Final = "RUNNING"
COMPLETED: Final = "COMPLETED"
RESOLVING: Final = "RESOLVING"
TASK_STATES: Final = (PENDING, TASK_RUNNING, COMPLETED, RESOLVING)

# (process_guid, index, presence): the ActualLRP key, unique per row (bbs.md 2.1).
RowKey = tuple[str, int, str]
# (process_guid, index): an LRP instance, what start requests and case lists name.
LRPKey = tuple[str, int]

# bbs.md 0: placement error, crash reason and failure reason are cut to
# 1,013 characters + "(truncated)" once they reach 1,024 characters.
MAX_MESSAGE_LENGTH: Final = 1024
TRUNCATED_SUFFIX: Final = "(truncated)"


def truncate_message(text: str) -> str:
    """Cut a stored reason the way ``db/sqldb/actual_lrp_db.go`` does (bbs.md 0)."""
    if len(text) < MAX_MESSAGE_LENGTH:
        return text
    return text[: MAX_MESSAGE_LENGTH - len(TRUNCATED_SUFFIX)] + TRUNCATED_SUFFIX


def lrp_id(key: LRPKey | RowKey) -> str:
    """``<process_guid>.<index>``: how cases and the auctioneer name an instance."""
    return f"{key[0]}.{key[1]}"


@dataclass(slots=True)
class DesiredLRP:
    """The part of a DesiredLRP convergence reads (bbs.md 1.1)."""

    process_guid: str
    domain: str
    instances: int


@dataclass(slots=True)
class ActualLRP:
    """One ActualLRP row (bbs.md 2.1). ``since`` is seconds on the simulator clock."""

    process_guid: str
    index: int
    state: str
    presence: str = ORDINARY
    cell_id: str = ""
    instance_guid: str = ""
    domain: str = ""
    since: float = 0.0
    crash_count: int = 0
    crash_reason: str = ""
    placement_error: str = ""
    address: str = ""
    ports: tuple[tuple[int, int], ...] = ()
    availability_zone: str = ""
    modification_tag_epoch: str = ""
    modification_tag_index: int = 0
    # The simulated rep's timers, not part of Diego's record: when a CLAIMED instance
    # becomes RUNNING, and when a started one crashes (injected). A claim sets the first
    # and clears the second, a start clears the first and may set the second; every
    # other change keeps them (they belong to the instance, not to its state).
    ready_at: float | None = None
    crash_at: float | None = None

    @property
    def key(self) -> RowKey:
        return (self.process_guid, self.index, self.presence)

    @property
    def lrp_key(self) -> LRPKey:
        return (self.process_guid, self.index)


@dataclass(slots=True)
class Task:
    """One Task row, the fields convergence and the state machine use (bbs.md 7)."""

    task_guid: str
    state: str
    domain: str = ""
    cell_id: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    first_completed_at: float | None = None
    failed: bool = False
    failure_reason: str = ""
    result: str = ""
    callback_url: str = ""
    rejection_count: int = 0
    rejection_reason: str = ""
    # The simulated rep's timer, not part of Diego's record: when a RUNNING task completes.
    finishes_at: float | None = None


@dataclass(slots=True, frozen=True)
class ConvergenceConfig:
    """Thresholds of one pass, seconds (bbs.md 0, 7; conformance.md 2 ``config``)."""

    stale_unclaimed_s: float = 30.0
    expire_pending_task_s: float = 1800.0
    expire_completed_task_s: float = 120.0
    kick_task_s: float = 30.0


@dataclass(slots=True)
class Snapshot:
    """Everything one convergence pass reads, at one ``now`` (bbs.md 4.1).

    ``domains`` maps a domain to its expiry instant, ``None`` meaning never (a ttl of
    0, bbs.md 5); a domain absent from the map is not fresh. ``cells`` is C, the
    cells whose presence is alive. The caller must not call the core at all when the
    presence store errored (bbs.md 4.1: that pass does nothing).
    """

    now: float
    cells: frozenset[str]
    domains: Mapping[str, float | None] = field(default_factory=dict)
    desired: Sequence[DesiredLRP] = ()
    actual: Sequence[ActualLRP] = ()
    tasks: Sequence[Task] = ()
    config: ConvergenceConfig = field(default_factory=ConvergenceConfig)
    #: ``actual`` is already in key order and ``desired`` in process guid order (a store
    #: that keeps them so spares the pass a sort of every row).
    ordered: bool = False


_ACTUAL_FIELDS: Final = tuple(f.name for f in fields(ActualLRP))
_actual_values: Final = attrgetter(*_ACTUAL_FIELDS)
_ACTUAL_POSITION: Final = {name: pos for pos, name in enumerate(_ACTUAL_FIELDS)}


def evolve(row: ActualLRP, **changes: Any) -> ActualLRP:
    """``dataclasses.replace`` for ActualLRP, several times faster: a pass makes tens of
    thousands of changed rows at the target size (bbs.md 4). The changes are written
    into the row's values before the new row is made from them."""
    values = list(_actual_values(row))
    position = _ACTUAL_POSITION
    try:
        for name, value in changes.items():
            values[position[name]] = value
    except KeyError:
        raise TypeError(f"ActualLRP has no field {name!r}") from None
    return ActualLRP(*values)


_EVOLVERS: dict[tuple[str, ...], Any] = {}


def evolver(*names: str) -> Any:
    """``evolve`` for a fixed set of fields, their new values passed in that order:
    ``evolver("state", "since")(row, RUNNING, at)`` is ``evolve(row, state=RUNNING,
    since=at)``. One function per set of names, made once: a claim or a start of each of
    100,000 instances spent more on ``evolve``'s keyword walk than on the new row."""
    made = _EVOLVERS.get(names)
    if made is None:
        unknown = [name for name in names if name not in _ACTUAL_POSITION]
        if unknown or len(set(names)) != len(names):
            raise TypeError(f"ActualLRP evolver over {names!r}")
        given = {name: f"v{n}" for n, name in enumerate(names)}
        values = ", ".join(given.get(name, f"row.{name}") for name in _ACTUAL_FIELDS)
        source = f"def evolved(row, {', '.join(given.values())}):\n    return ActualLRP({values})\n"
        namespace: dict[str, Any] = {"ActualLRP": ActualLRP}
        exec(source, namespace)  # noqa: S102 - the names are checked fields
        made = _EVOLVERS[names] = namespace["evolved"]
    return made


def domain_is_fresh(expiry: float | None, now: float) -> bool:
    """bbs.md 5: fresh at t iff expiry > t (strict), and ``None`` never expires."""
    return expiry is None or expiry > now


def fresh_domains(domains: Mapping[str, float | None], now: float) -> frozenset[str]:
    """The domains fresh at ``now``; absent ones are stale by construction."""
    return frozenset(name for name, expiry in domains.items() if domain_is_fresh(expiry, now))
