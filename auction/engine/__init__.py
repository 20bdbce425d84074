"""The Diego auction as a pure Python library (no Django): ``auction.md`` made executable.

Public API (everything below is importable from ``auction.engine``):

Data (``types``)
    ``Resources(memory_mb, disk_mb, containers)``,
    ``CellState(cell_id, zone, index, total, available, starting_containers=0, lrps=(),
    tasks=(), preloaded_rootfses=("cflinuxfs4",), rootfs_providers=("docker",),
    volume_drivers=(), placement_tags=(), optional_placement_tags=(), proxy_memory_mb=0,
    cached_blob_ids=())``,
    ``LRPWork(process_guid, index, memory_mb, disk_mb, rootfs=..., volume_drivers=(),
    placement_tags=(), total_instances=0, ref=None)``,
    ``TaskWork(task_guid, memory_mb, disk_mb, rootfs=..., volume_drivers=(),
    placement_tags=(), ref=None)`` — ``ref`` is opaque: hang your database id on it;
    results are keyed by ``identifier(item)`` (``guid.index`` / ``task_guid``).
    ``AuctionConfig(starting_container_weight=0.25, bin_pack_first_fit_weight=0.0,
    starting_container_count_maximum=0, locality_offset=1000, placement_strategy="diego",
    seed=0, objective=ObjectiveConfig(...))``; ``AuctionResult`` (order, items, placements,
    failures, scores, won, explanations).

Forming and ordering the batch (auction.md 1.4, 2)
    ``dedupe(items) -> list`` keeps the first occurrence per identifier (the caller puts
    carried-over items first); ``order_batch(items) -> list``; ``priority_group(item)``.

Scheduling, without committing (auction.md 1.5, 3, 4, 6, 8)
    ``schedule(cells, work, config=None, *, explain=False, ordered=False) -> AuctionResult``:
    tentative winners, errors, scores and ``won`` (cell id -> work in won order). With
    ``explain=True`` every item gets an ``ItemExplanation`` (the plain path is untouched).

Commit (auction.md 7)
    ``commit(free, proxy_memory_mb, work, evacuating=False) -> CommitOutcome(accepted,
    rejected)`` for one cell; ``apply_commits(result, {cell_id: outcome})`` folds rejections
    into the failures (error ``""``); ``commit_all(result, cells, evacuating=(),
    unreachable=())`` commits every cell against its fetched ``available``.

Running as a case does (auction.md 10)
    ``run_auction(cells, work, config=None, *, explain=False) -> AuctionResult``;
    ``load_case(path)``, ``parse_case(doc)``, ``run_case(case)``, ``CaseError``.

Quality (auction.md 9)
    ``distribution_score``, ``distribution_scores``, ``memory_in_use``, ``final_memory_in_use``, ``zone_skew``,
    ``failure_summary``, ``communications``, ``spread``, ``wait_times``.

Objective language (auction.md 8.2)
    ``validate_objective(ObjectiveConfig)`` raises ``ObjectiveError`` ("invalid objective:
    <reason> at position <n>").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .batch import dedupe, identifier, order_batch, priority_group
from .cases import AuctionCase, CaseError, load_case, parse_case, run_case
from .commit import CommitOutcome, apply_commits, commit, commit_all, container_memory
from .explain import CellVerdict, ItemExplanation
from .filters import insufficient_resources_error, placement_tag_error
from .quality import (
    FailureSummary,
    ZoneSkew,
    communications,
    distribution_score,
    distribution_scores,
    failure_summary,
    final_memory_in_use,
    memory_in_use,
    spread,
    wait_times,
    zone_skew,
)
from .schedule import schedule
from .strategies.expr import ObjectiveError
from .strategies.objective import validate_objective
from .types import (
    STRATEGIES,
    AuctionConfig,
    AuctionResult,
    CellState,
    LRPWork,
    ObjectiveConfig,
    Resources,
    TaskWork,
    WorkItem,
)


def run_auction(cells: Sequence[CellState], work: Iterable[WorkItem],
                config: AuctionConfig | None = None, *, explain: bool = False) -> AuctionResult:
    """Schedule, then commit every cell against its fetched ``available`` (a case run)."""
    return commit_all(schedule(cells, work, config, explain=explain), cells)


__all__ = [
    "STRATEGIES", "AuctionCase", "AuctionConfig", "AuctionResult", "CaseError", "CellState",
    "CellVerdict", "CommitOutcome", "FailureSummary", "ItemExplanation", "LRPWork",
    "ObjectiveConfig", "ObjectiveError", "Resources", "TaskWork", "WorkItem", "ZoneSkew",
    "apply_commits", "commit", "commit_all", "container_memory", "communications", "dedupe", "distribution_score", "distribution_scores",
    "failure_summary", "final_memory_in_use", "identifier", "insufficient_resources_error",
    "load_case", "memory_in_use", "order_batch", "parse_case", "placement_tag_error",
    "priority_group", "run_auction", "run_case", "schedule", "spread", "validate_objective",
    "wait_times", "zone_skew",
]
