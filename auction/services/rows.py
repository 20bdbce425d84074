"""Writing the BBS core's row changes to the database, in bulk and in the core's order.

The core hands back deletes, updates and creates; within one pass a delete never
follows an update or create of the same key, and an update never needs a key that a
later create frees, so applying all deletes, then all updates, then all creates keeps
(process_guid, index, presence) unique (the constraint would abort the transaction
otherwise). Each write first re-checks that the row is still the one the core read
(bbs.md 4.3: an action on a row that changed meanwhile does nothing).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any

from auction.bbs import types as core
from auction.bbs.changes import (
    RowCreate,
    RowDelete,
    RowOp,
    TaskDelete,
    TaskOp,
)
from auction.models import ActualLRP, Task
from auction.selectors.bbs import model_ports
from auction.services.bulk import Values, bulk_delete, bulk_insert, bulk_read, bulk_set

# Core field → model field, where they differ.
_ACTUAL_FIELD = {"process_guid": "desired_id"}
_TASK_FIELD = {"callback_url": "completion_callback_url"}
_SKIPPED = {"availability_zone"}  # derived from the cell, not stored
BULK = 2000


def _actual_value(name: str, value: Any) -> Any:
    return model_ports(value) if name == "ports" else value


_CREATE_SLOTS = tuple(n for n in core.ActualLRP.__slots__  # type: ignore[attr-defined]
                      if n not in _SKIPPED)
CREATE_FIELDS = tuple(_ACTUAL_FIELD.get(n, n) for n in _CREATE_SLOTS)
_PORTS = _CREATE_SLOTS.index("ports")
_create_getter = attrgetter(*_CREATE_SLOTS)


def actual_create_values(row: core.ActualLRP) -> Sequence[Any]:
    """A new row's values in ``CREATE_FIELDS`` order, as a list: no dict per row when a
    scale creates 100,000."""
    values = _create_getter(row)
    if not values[_PORTS]:
        return values  # no ports: the empty tuple is stored as [] like an empty list
    out = list(values)
    out[_PORTS] = model_ports(out[_PORTS])
    return out


def _still_same(stored: tuple[str, str, str] | None, before: core.ActualLRP) -> bool:
    """``stored`` is the row's (state, presence, cell_id) as the database holds it now."""
    return stored == (before.state, before.presence, before.cell_id)


def apply_row_ops(ops: Sequence[RowOp], pk_by_key: dict[core.RowKey, int]) -> list[RowOp]:
    """Apply ``ops``; return the ones applied (skipped ones raced with another writer)."""
    touched = [pk_by_key[op.key] for op in ops if not isinstance(op, RowCreate) and op.key in pk_by_key]
    stored = {pk: (state, presence, cell_id) for pk, state, presence, cell_id in
              bulk_read(ActualLRP, touched, ("state", "presence", "cell_id"), for_update=True)}
    applied: list[RowOp] = []
    deletes: list[int] = []
    updates: dict[tuple[str, ...], list[Values]] = defaultdict(list)
    creates: list[Sequence[Any]] = []
    for op in ops:
        if isinstance(op, RowCreate):
            creates.append(actual_create_values(op.row))
            applied.append(op)
            continue
        pk = pk_by_key.get(op.key)
        if pk is None or not _still_same(stored.get(pk), op.before):
            continue
        if isinstance(op, RowDelete):
            deletes.append(pk)
        else:
            changed = {(_ACTUAL_FIELD.get(k, k)): _actual_value(k, v)
                       for k, v in op.changed.items() if k not in _SKIPPED}
            if changed:
                updates[tuple(sorted(changed))].append(Values(pk, **changed))
        applied.append(op)
    _write(ActualLRP, deletes, updates)
    # Another writer may have created the same key since the snapshot (a desire racing
    # a pass): that row wins and ours is dropped, as a re-read action would.
    # Tuples, not model instances: a scale to 100,000 writes them in well under a second.
    bulk_insert(ActualLRP, CREATE_FIELDS, creates, ignore_conflicts=True)
    return applied


def apply_task_ops(ops: Sequence[TaskOp], pk_by_guid: dict[str, int]) -> list[TaskOp]:
    stored = {
        row["id"]: row["state"]
        for chunk in _chunks([pk_by_guid[op.before.task_guid] for op in ops])
        for row in Task.objects.select_for_update().filter(pk__in=chunk).values("id", "state")
    }
    applied: list[TaskOp] = []
    deletes: list[int] = []
    updates: dict[tuple[str, ...], list[Values]] = defaultdict(list)
    for op in ops:
        pk = pk_by_guid[op.before.task_guid]
        if stored.get(pk) != op.before.state:
            continue
        if isinstance(op, TaskDelete):
            deletes.append(pk)
        else:
            changed = {_TASK_FIELD.get(k, k): v for k, v in op.changed.items()}
            updates[tuple(sorted(changed))].append(Values(pk, **changed))
        applied.append(op)
    _write(Task, deletes, updates)
    return applied


def _write(model: Any, deletes: list[int], updates: dict[tuple[str, ...], list[Any]]) -> None:
    """Deletes by id in chunks, then one bulk update per set of changed fields."""
    bulk_delete(model, deletes)
    for fields, objs in updates.items():
        bulk_set(model, objs, list(fields))


def _chunks(items: Iterable[int], size: int = BULK) -> Iterable[list[int]]:
    batch: list[int] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
