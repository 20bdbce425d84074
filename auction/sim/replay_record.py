"""An auction's replay record (dashboard.md section 2), made from the round's record.

Pure (no Django): the database store writes it as an ``AuctionRun`` row, and a plan's
world keeps it for the plan's own replays (plans.md 1.7), so a live auction and a
predicted one are recorded by one rule and replayed by one view.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Final

from auction.bbs import types as core
from auction.engine.types import CellState
from auction.sim.model import QueuedWork
from auction.sim.round import RoundRecord

#: Full decision records only when the auction is small enough to keep them: one
#: verdict per (item, cell), at most as many as a 200-item auction over 200 cells.
EXPLAIN_MAX_VERDICTS = 200 * 200
#: An auction of more items than this is recorded as a summary and a sample (bbs.md 8.1).
RECORD_ITEMS_MAX = 1000
RECORD_SAMPLE = 200

#: (process guid, index) -> (presence, cell id) of an instance's SUSPECT or EVACUATING copy.
Copies = Mapping[tuple[str, int], tuple[str, str]]


#: The presences whose copy a replay entry names, the first one found winning where an
#: instance has both (a SUSPECT left behind on a lost cell and an EVACUATING one on a
#: draining cell): the evacuation, as its "evac" badge says too (dashboard.md A3).
COPY_PRECEDENCE: Final = (core.EVACUATING, core.SUSPECT)


def named_copy(found: Mapping[str, str]) -> tuple[str, str] | None:
    """The (presence, cell id) a replay entry names of an instance's other copies,
    ``found`` by presence (presence -> cell id); None when it has none of them. Both
    stores' ``_copies`` pick by it."""
    for presence in COPY_PRECEDENCE:
        cell_id = found.get(presence)
        if cell_id is not None:
            return presence, cell_id
    return None


def explain_wanted(items: int, answering: int) -> bool:
    return items * max(answering, 1) <= EXPLAIN_MAX_VERDICTS


def copy_keys(record: RoundRecord) -> set[tuple[str, int]]:
    """The instances whose other copies the batch record names (orphans, evacuations)."""
    return {(w.process_guid, w.index) for w in record.batch if hasattr(w, "index")}


def replay_fields(record: RoundRecord, copies: Copies, *, items_max: int = RECORD_ITEMS_MAX,
                  sample: int = RECORD_SAMPLE) -> dict[str, Any]:
    """The ``AuctionRun`` fields of one auction (all but the wall-clock start). A mass
    auction (more than ``items_max`` items) is a summary: every failure counted
    per error, and the first ``sample`` items of its order as the sample the
    replay steps through (bbs.md 8.1 [project rule])."""
    result = record.result
    placed = dict(result.placements)
    lrp_failed = sum(1 for i in result.failures if "." in i)  # task guids hold no dot (bbs.md 7)
    lrp_placed = sum(1 for i in placed if "." in i)
    # "placed" lets the metrics header count LRP and task placements without decoding the
    # placements themselves (100,000 of them after a big scale, for each of 60 records).
    counts = {"errors": dict(Counter(result.failures.values())), "lrp": lrp_failed,
              "task": len(result.failures) - lrp_failed,
              "placed": {"lrp": lrp_placed, "task": len(placed) - lrp_placed}}
    order, failures, batch = list(result.order), dict(result.failures), record.batch
    sampled = 0
    if len(record.batch) > items_max:
        order = order[:sample]
        sampled = len(order)
        kept = set(order)
        failures = {i: e for i, e in result.failures.items() if i in kept}
        batch = [w for w in record.batch if w.identifier in kept]
    return dict(
        started_at=record.at, duration_ms=record.wall_seconds * 1000,
        fetch_ms=record.fetch_seconds * 1000, trigger="queue",
        strategy=record.config.placement_strategy, go_compat=record.config.go_compat,
        items=len(record.batch), placed=len(placed), failed=len(result.failures),
        cells=[cell_record(s) for s in record.states], order=order, placements=placed,
        failures=failures, scores={k: v for k, v in result.scores.items() if k in placed},
        carried_in={w.identifier: w.ref.attempts for w in batch if w.ref.carried},
        commit={cell: {"accepted": [w.identifier for w in o.accepted],
                       "rejected": [w.identifier for w in o.rejected]}
                for cell, o in record.outcomes.items()} | {c: "unreachable" for c in record.unreachable},
        explanations=[e.to_dict() for e in result.explanations] if result.explanations else None,
        detail="full" if result.explanations else "none", batch=batch_record(batch, copies),
        quality={"distribution_initial": record.stats.distribution_initial,
                 "distribution_final": record.stats.distribution_final},
        failure_counts=counts, sampled=sampled)


def batch_record(batch: Iterable[Any], copies: Copies) -> dict[str, dict[str, Any]]:
    """What the replay's queue strip shows per item (dashboard.md A2, A3): who asked, an
    orphan's lost cell, an evacuation's draining cell, a carried item's previous error."""
    record: dict[str, dict[str, Any]] = {}
    for work in batch:
        q: QueuedWork = work.ref
        lrp = hasattr(work, "index")
        entry: dict[str, Any] = {"kind": "lrp" if lrp else "task", "memory_mb": work.memory_mb,
                                 "disk_mb": work.disk_mb, "queued_at": q.queued_at}
        if q.reason:
            entry["reason"] = q.reason
        if q.carried:
            entry["attempts"] = q.attempts
            entry["previous_error"] = q.last_error
        if lrp:
            presence, cell_id = copies.get((work.process_guid, work.index), ("", ""))
            if presence == core.SUSPECT and cell_id:
                entry["from_cell"] = cell_id
            if presence == core.EVACUATING or q.reason == "evacuation":
                entry["evac"] = True
                if cell_id:
                    entry["from_cell"] = cell_id
        record[work.identifier] = entry
    return record


def cell_record(state: CellState) -> dict[str, Any]:
    return {
        "cell_id": state.cell_id, "zone": state.zone, "index": state.index,
        "total": [state.total.memory_mb, state.total.disk_mb, state.total.containers],
        "available": [state.available.memory_mb, state.available.disk_mb, state.available.containers],
        "starting_containers": state.starting_containers,
    }
