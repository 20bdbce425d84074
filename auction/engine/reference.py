"""The ``diego`` strategy as a straightforward scan, with explanations (auction.md 4).

This path does per item exactly what the spec says, the way Diego's auctioneer does it:
count the process's instances per zone by walking every cell's instance list, re-apply the
filters to every cell, then score every compatible cell of each zone group in input order.
It is the explanation path (every decision recorded), the path for configurations the
heap search does not cover (negative weights, see ``diego.fast_path_applies``) and the
baseline ``bench`` measures the fast path against. Results are identical to ``diego.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .batch import identifier, priority_group
from .diego import INITIAL_BEST, bin_indices
from .explain import OUTCOME_FILTERED, OUTCOME_SCORED, OUTCOME_UNFIT, CellVerdict, ItemExplanation
from .filters import (
    ALL_PROBLEMS,
    ERR_IN_FLIGHT,
    ERR_NO_CELLS,
    failed_filter,
    filter_error,
    fit_problems,
    insufficient_resources_error,
)
from .state import AuctionState
from .types import AuctionConfig, AuctionResult, CellState, LRPWork, WorkItem


def _parts(st: AuctionState, pos: int, item: WorkItem, config: AuctionConfig,
           bins: list[int], instances: list[list[str]]) -> tuple[float, float, float, float, float]:
    """(resource, starting, locality, bin_pack, score) with auction.md 4.5's order."""
    is_lrp = type(item) is LRPWork
    mem = item.memory_mb + (st.proxy[pos] if is_lrp else 0)
    fm = 1.0 - (st.a_mem[pos] - mem) / st.t_mem[pos]
    fd = 1.0 - (st.a_disk[pos] - item.disk_mb) / st.t_disk[pos]
    fc = 1.0 - (st.a_cont[pos] - 1) / st.t_cont[pos]
    resource = ((fm + fd) + fc) / 3.0
    starting = st.starting[pos] * float(config.starting_container_weight)
    if is_lrp:
        n = instances[pos].count(item.process_guid)  # type: ignore[union-attr]
        locality = float(config.locality_offset * n)
        bin_pack = bins[pos] * float(config.bin_pack_first_fit_weight)
        return resource, starting, locality, bin_pack, ((resource + starting) + locality) + bin_pack
    locality = float(config.locality_offset * st.n_tasks[pos])
    return resource, starting, locality, 0.0, (resource + starting) + locality


def _zone_count(st: AuctionState, instances: list[list[str]], zone: str, guid: str) -> int:
    """auction.md 4.2 step 1 the way Diego does it: walk every cell's instance list."""
    return sum(instances[p].count(guid) for p in range(len(st.cells)) if st.zone_of[p] == zone)


def schedule_reference(cells: Sequence[CellState], items: Sequence[WorkItem],
                       config: AuctionConfig, explain: bool = False) -> AuctionResult:
    """Schedule an already ordered batch with the ``diego`` strategy, scanning every cell."""
    st = AuctionState(cells)
    bins = bin_indices(st, float(config.bin_pack_first_fit_weight))
    # Every cell's instance list, this auction's wins appended (auction.md 4.6).
    instances = [list(c.lrps) for c in cells]
    order: list[str] = []
    placements: dict[str, str] = {}
    failures: dict[str, str] = {}
    scores: dict[str, float | None] = {}
    notes: list[ItemExplanation] = []
    group_seen = {1: 0, 2: 0, 3: 0}
    for position, item in enumerate(items):
        ident = identifier(item)
        order.append(ident)
        group = priority_group(item)
        note = ItemExplanation(ident, "lrp" if type(item) is LRPWork else "task", group,
                               position, group_seen[group])
        group_seen[group] += 1
        if explain:
            notes.append(note)
        error, found = _schedule_one(st, instances, item, config, bins,
                                     note if explain else None)
        if found is None:
            failures[ident] = note.error = error or ""
            continue
        pos, score = found
        st.reserve(pos, item)
        if type(item) is LRPWork:
            instances[pos].append(item.process_guid)
        placements[ident] = note.winner = st.cell_ids[pos]
        scores[ident] = note.score = score
    return AuctionResult(
        order=order, items=list(items), placements=placements, failures=failures,
        scores=scores, won=st.won_by_cell(),
        strategy="diego", seed=config.seed, go_compat=config.go_compat,
        explanations=notes if explain else None)


def _schedule_one(st: AuctionState, instances: list[list[str]], item: WorkItem,
                  config: AuctionConfig, bins: list[int], note: ItemExplanation | None) -> tuple[str | None, tuple[int, float] | None]:
    if not st.cells:
        return ERR_NO_CELLS, None
    cap = config.starting_container_count_maximum
    if cap > 0 and st.in_flight >= cap:
        return ERR_IN_FLIGHT, None
    compatible: list[int] = []
    verdicts: dict[int, CellVerdict] = {}
    for pos, cell in enumerate(st.cells):
        failed = failed_filter(cell, item.rootfs, item.volume_drivers, item.placement_tags)
        if failed is None:
            compatible.append(pos)
        elif note is not None:
            verdicts[pos] = CellVerdict(cell.cell_id, cell.zone, OUTCOME_FILTERED, filter=failed)
    if not compatible:
        _finish_note(note, st, verdicts)
        return filter_error(st.cells, item.rootfs, item.volume_drivers, item.placement_tags), None
    if type(item) is LRPWork:
        zones = list(dict.fromkeys(st.zone_of[p] for p in compatible))
        counts = {z: _zone_count(st, instances, z, item.process_guid) for z in zones}
        groups = [[z for z in zones if counts[z] == c] for c in sorted(set(counts.values()))]
        if note is not None:
            note.zone_counts = {z: _zone_count(st, instances, z, item.process_guid) for z in st.zones}
    else:
        groups = [[]]  # tasks ignore zones: one group of every compatible cell
    problems = set(ALL_PROBLEMS)
    best: tuple[int, float] | None = None
    best_score = INITIAL_BEST
    for group in groups:
        members = [p for p in compatible if not group or st.zone_of[p] in group]
        for pos in members:
            lacks = fit_problems(st.a_mem[pos], st.a_disk[pos], st.a_cont[pos],
                                 st.memory_needed(item, pos), item.disk_mb)
            if lacks:
                problems &= lacks
                if note is not None:
                    verdicts[pos] = CellVerdict(st.cell_ids[pos], st.zone_of[pos], OUTCOME_UNFIT,
                                                problems=tuple(sorted(lacks)))
                continue
            parts = _parts(st, pos, item, config, bins, instances)
            if note is not None:
                verdicts[pos] = _scored(st, pos, parts, True)
            if parts[4] < best_score:  # strictly lower: a tie keeps the earlier cell (4.6)
                best_score, best = parts[4], (pos, parts[4])
        if note is not None and group:
            note.zone_groups.append({"count": note.zone_counts[group[0]], "zones": group})
        if best is not None:
            if note is not None and group:
                note.chosen_zones = group
            break
    if note is not None:
        for pos in compatible:  # groups the walk never reached, shown for the replay
            if pos not in verdicts:
                lacks = st.problems(item, pos)
                verdicts[pos] = (
                    CellVerdict(st.cell_ids[pos], st.zone_of[pos], OUTCOME_UNFIT,
                                problems=tuple(sorted(lacks)), reached=False) if lacks
                    else _scored(st, pos, _parts(st, pos, item, config, bins, instances), False))
        _finish_note(note, st, verdicts)
    if best is None:
        return insufficient_resources_error(problems), None
    return None, best


def _scored(st: AuctionState, pos: int, parts: tuple[float, float, float, float, float],
            reached: bool) -> CellVerdict:
    resource, starting, locality, bin_pack, score = parts
    return CellVerdict(st.cell_ids[pos], st.zone_of[pos], OUTCOME_SCORED, resource=resource,
                       starting=starting, locality=locality, bin_pack=bin_pack, score=score,
                       reached=reached)


def _finish_note(note: ItemExplanation | None, st: AuctionState,
                 verdicts: dict[int, CellVerdict]) -> None:
    if note is not None:
        note.cells = [verdicts[p] for p in range(len(st.cells)) if p in verdicts]
