"""The simulated rep's rules, shared by the database shell and the in-memory cluster.

Pure: given the seed and an instance, when does it crash; which address does it get;
when does a failed rep's presence lapse; what does one evacuation sync do (bbs.md 6.1,
6.3). Both shells call these, so a
scenario replays the same way in memory and over the database.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

PRESENCE_TTL_S = 15.0
PRESENCE_REFRESH_S = 5.0
EVACUATION_SYNC_S = 10.0
EVACUATION_TIMEOUT_S = 600.0
CRASH_REASON = "APP/PROC/WEB: Exited with status 1 (simulated crash)"


def presence_lapses_at(now: float) -> float:
    """A failed rep stops refreshing; its presence lapses 15 s after the last refresh
    (every 5 s), so 10-15 s after the failure (bbs.md 6.1)."""
    last_refresh = math.floor(now / PRESENCE_REFRESH_S) * PRESENCE_REFRESH_S
    return last_refresh + PRESENCE_TTL_S


def instance_address(cell_id: str, index: int) -> str:
    h = zlib.crc32(cell_id.encode())
    return f"10.{h % 250}.{(h >> 8) % 250}.{(index % 250) + 2}"


def crash_time(seed: int, process_guid: str, index: int, tag_index: int, started_at: float,
               crash_probability: float, crash_after_s: float) -> float | None:
    """When a just-started instance will crash, or None: one seeded draw per start.

    The draw depends only on the seed and the instance's identity and tag, not on the
    order events happen in, so two shells (or two strategies) replay the same crashes.
    """
    if crash_probability <= 0:
        return None
    draw = random.Random(f"{seed}:{process_guid}:{index}:{tag_index}")
    if draw.random() < crash_probability:
        return started_at + crash_after_s
    return None


@dataclass(slots=True)
class EvacuationPlan:
    """What one sync of a draining cell's rep does (bbs.md 6.3), row by row.

    Apply in this order: ``delete`` (containers that go), then ``evacuate`` (RUNNING
    ORDINARY rows copied as EVACUATING, which keep serving until the replacement
    runs), then ``unclaim`` (the ORDINARY rows go back to the auction), then one start
    request for ``restart``.
    """

    delete: list[Any] = field(default_factory=list)
    evacuate: list[Any] = field(default_factory=list)
    unclaim: list[Any] = field(default_factory=list)
    restart: list[tuple[str, int]] = field(default_factory=list)
    removed: int = 0


def evacuation_plan(rows: Iterable[Any], ordinary_state: Mapping[tuple[str, int], str],
                    desired: Container[str]) -> EvacuationPlan:
    """Plan one evacuation sync over the rows on the cell (any object with
    ``process_guid``, ``index``, ``presence`` and ``state``: a core row or a model).

    ``ordinary_state`` maps (process_guid, index) to the state of its ORDINARY row, read
    before the sync; ``desired`` holds the process guids still desired.
    """
    plan = EvacuationPlan()
    for row in sorted(rows, key=lambda r: (r.process_guid, r.index, r.presence)):
        key = (row.process_guid, row.index)
        if row.presence == "ORDINARY" and row.state == "CLAIMED":
            plan.unclaim.append(row)
            plan.restart.append(key)
            plan.removed += 1
        elif row.presence == "ORDINARY" and row.state == "RUNNING":
            plan.evacuate.append(row)
            plan.unclaim.append(row)
            plan.restart.append(key)
        elif row.presence == "EVACUATING":
            replacement = ordinary_state.get(key)
            if row.process_guid not in desired or replacement in ("RUNNING", "CRASHED", None):
                plan.delete.append(row)
                plan.removed += 1
        elif row.state == "CLAIMED":  # a starting SUSPECT copy
            plan.delete.append(row)
            plan.removed += 1
    return plan


def evacuation_over(at: float, evacuating_since: float | None, containers_left: bool) -> tuple[bool, bool]:
    """(over, timed out): the rep drops its presence once nothing is left on the cell,
    or when the evacuation timeout passes with copies stranded (bbs.md 6.3)."""
    timed_out = evacuating_since is not None and at - evacuating_since >= EVACUATION_TIMEOUT_S
    return timed_out or not containers_left, timed_out
