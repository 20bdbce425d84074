"""Forming and ordering the batch (auction.md 1 step 4, section 2).

``dedupe`` is Diego's ``DedupeAndDrain`` (``cloudfoundry/auction: auctionrunner/batch.go``):
LRPs and tasks are de-duplicated separately, by identifier, keeping the first occurrence.
``order_batch`` is the project's fixed three-group order (conformance.md 1), or with
``go_compat`` the order the real Diego binary produces (auction.md 2.1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .gosort import go_sort_by_key
from .types import LRPWork, WorkItem

#: Priority groups of auction.md 2.
GROUP_LRP_INDEX_0 = 1
GROUP_TASKS = 2
GROUP_LRP_OTHER = 3


def identifier(item: WorkItem) -> str:
    """``<process_guid>.<index>`` for an LRP instance, the ``task_guid`` for a task."""
    if type(item) is LRPWork:
        return f"{item.process_guid}.{item.index}"
    return item.task_guid  # type: ignore[union-attr]


def dedupe(items: Iterable[WorkItem]) -> list[WorkItem]:
    """Drop repeated identifiers, LRPs and tasks separately, keeping the first occurrence.

    The caller builds the batch as auction.md 1 step 4 says (carried-over items in their
    previous batch order, then newly queued ones) and passes it here; relative order is kept.
    """
    seen_lrps: set[tuple[str, int]] = set()
    seen_tasks: set[str] = set()
    out: list[WorkItem] = []
    for item in items:
        if type(item) is LRPWork:
            key = (item.process_guid, item.index)
            if key in seen_lrps:
                continue
            seen_lrps.add(key)
        else:
            guid = item.task_guid  # type: ignore[union-attr]
            if guid in seen_tasks:
                continue
            seen_tasks.add(guid)
        out.append(item)
    return out


def priority_group(item: WorkItem) -> int:
    """1 for an LRP instance of index 0, 2 for a task, 3 for any other instance."""
    if type(item) is LRPWork:
        return GROUP_LRP_INDEX_0 if item.index == 0 else GROUP_LRP_OTHER
    return GROUP_TASKS


def order_batch(items: Sequence[WorkItem], go_compat: bool = False) -> list[WorkItem]:
    """The auction order of auction.md 2: stable sorts within three groups.

    Group 1 (index-0 instances) always comes first, even when the batch has no other
    instance: the project does not copy Diego's tasks-first quirk of ``splitLRPS``, unless
    ``go_compat`` asks for the real binary's order (``order_batch_go``).
    """
    if go_compat:
        return order_batch_go(items)
    first: list[WorkItem] = []
    tasks: list[WorkItem] = []
    rest: list[LRPWork] = []
    for item in items:
        if type(item) is LRPWork:
            (first if item.index == 0 else rest).append(item)
        else:
            tasks.append(item)
    # sorted() is stable: equal keys keep their batch order (conformance.md 1).
    first.sort(key=_neg_memory)
    tasks.sort(key=_neg_memory)
    rest.sort(key=_index_then_neg_memory)
    return [*first, *tasks, *rest]


def order_batch_go(items: Sequence[WorkItem]) -> list[WorkItem]:
    """auction.md 2.1: ``Scheduler.Schedule`` of ``cloudfoundry/auction`` as it runs.

    The LRPs (in batch order) go through Go's ``sort.Sort`` with ``SortableLRPAuctions``'
    ``Less`` (index ascending, then memory descending), the tasks through it with
    ``SortableTaskAuctions``' (memory descending); ``splitLRPS`` then cuts the LRPs at the
    first index > 0 and runs the part before it, the tasks, the part after. With no LRP of
    index > 0 the cut is at 0: every LRP comes after the tasks.
    """
    lrps = [i for i in items if type(i) is LRPWork]
    tasks = [i for i in items if type(i) is not LRPWork]
    # One integer per LRP so the port compares ints: with span > every memory,
    # index * span - memory orders exactly as Diego's two-field Less.
    span = max((i.memory_mb for i in lrps), default=0) + 1
    lrps = go_sort_by_key(lrps, lambda i: i.index * span - i.memory_mb)
    tasks = go_sort_by_key(tasks, _neg_memory)
    cut = next((n for n, lrp in enumerate(lrps) if lrp.index > 0), 0)
    return [*lrps[:cut], *tasks, *lrps[cut:]]


def _neg_memory(item: WorkItem) -> int:
    return -item.memory_mb


def _index_then_neg_memory(item: LRPWork) -> tuple[int, int]:
    return (item.index, -item.memory_mb)


def check_unique(items: Sequence[WorkItem]) -> None:
    """Raise ``ValueError`` if two batch items share an identifier.

    After ``dedupe`` that can only be an LRP identifier equal to a task guid, which the
    results (keyed by identifier) could not tell apart (auction.md 10).
    """
    seen: set[str] = set()
    for item in items:
        ident = identifier(item)
        if ident in seen:
            raise ValueError(f"duplicate work identifier {ident!r} (an LRP and a task?)")
        seen.add(ident)


__all__ = [
    "GROUP_LRP_INDEX_0",
    "GROUP_LRP_OTHER",
    "GROUP_TASKS",
    "check_unique",
    "dedupe",
    "identifier",
    "order_batch",
    "priority_group",
]

