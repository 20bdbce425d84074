"""Loading the BBS core's snapshot from the database, fast (values, not model objects)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db.models import TextField
from django.db.models.functions import Cast

from auction.bbs import types as core
from auction.models import ActualLRP, Cell, DesiredLRP, Domain, Task

# ``ports`` is read as its JSON text: nearly every row's is "[]", and decoding 100,000 of
# them (the flood's auction, a pass at 250,000 rows) cost more than the rest of the row.
ACTUAL_COLUMNS = (
    "id", "desired_id", "index", "state", "presence", "cell_id", "instance_guid", "domain",
    "since", "crash_count", "crash_reason", "placement_error", "address",
    Cast("ports", TextField()),
    "modification_tag_epoch", "modification_tag_index", "ready_at", "crash_at",
)
TASK_COLUMNS = (
    "id", "task_guid", "state", "domain", "cell_id", "created_at", "updated_at",
    "first_completed_at", "failed", "failure_reason", "result", "completion_callback_url",
    "rejection_count", "rejection_reason", "finishes_at",
)


def core_ports(ports: Any) -> tuple[tuple[int, int], ...]:
    return tuple((int(p["container_port"]), int(p["host_port"])) for p in ports or ())


def _ports_from_text(text: str | None) -> tuple[tuple[int, int], ...]:
    return () if text is None or text == "[]" else core_ports(json.loads(text))


def model_ports(ports: tuple[tuple[int, int], ...]) -> list[dict[str, int]]:
    return [{"container_port": c, "host_port": h} for c, h in ports]


def actual_from_values(v: tuple[Any, ...]) -> core.ActualLRP:
    return core.ActualLRP(
        process_guid=v[1], index=v[2], state=v[3], presence=v[4], cell_id=v[5],
        instance_guid=v[6], domain=v[7], since=v[8], crash_count=v[9], crash_reason=v[10],
        placement_error=v[11], address=v[12], ports=_ports_from_text(v[13]),
        modification_tag_epoch=v[14], modification_tag_index=v[15], ready_at=v[16],
        crash_at=v[17],
    )


def task_from_values(v: tuple[Any, ...]) -> core.Task:
    return core.Task(
        task_guid=v[1], state=v[2], domain=v[3], cell_id=v[4], created_at=v[5],
        updated_at=v[6], first_completed_at=v[7], failed=v[8], failure_reason=v[9],
        result=v[10], callback_url=v[11], rejection_count=v[12], rejection_reason=v[13],
        finishes_at=v[14],
    )


def present_cells(now: float) -> frozenset[str]:
    """C: the cells whose presence is alive at ``now`` (bbs.md 4.1, 6.1)."""
    rows = Cell.objects.values_list("cell_id", "presence_lost_at")
    return frozenset(cell_id for cell_id, lost in rows if lost is None or now < lost)


@dataclass(slots=True)
class LoadedSnapshot:
    snapshot: core.Snapshot
    actual_pk: dict[core.RowKey, int]
    task_pk: dict[str, int]


def bbs_snapshot(now: float, config: core.ConvergenceConfig | None = None) -> LoadedSnapshot:
    actual_pk: dict[core.RowKey, int] = {}
    actual = []
    for values in ActualLRP.objects.values_list(*ACTUAL_COLUMNS).iterator(chunk_size=20_000):
        row = actual_from_values(values)
        actual.append(row)
        actual_pk[row.key] = values[0]
    task_pk: dict[str, int] = {}
    tasks = []
    for values in Task.objects.values_list(*TASK_COLUMNS):
        task = task_from_values(values)
        tasks.append(task)
        task_pk[task.task_guid] = values[0]
    snapshot = core.Snapshot(
        now=now,
        cells=present_cells(now),
        domains=dict(Domain.objects.values_list("name", "expires_at")),
        desired=[core.DesiredLRP(g, d, n) for g, d, n in
                 DesiredLRP.objects.values_list("process_guid", "domain", "instances")],
        actual=actual,
        tasks=tasks,
        config=config or core.ConvergenceConfig(),
    )
    return LoadedSnapshot(snapshot, actual_pk, task_pk)
