"""Scheduling one batch: order it, then place each item in turn (auction.md 1 step 5).

The driver owns what every strategy shares (auction.md 8): the no-cell error, the in-flight
cap (4.1), the filters and the global filter error (3, 6.3), the insufficient-resources
error (6.4) and the reservation (4.6). A strategy only chooses among compatible cells.
Nothing is committed here; see ``commit.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from .batch import check_unique, dedupe, identifier, order_batch, priority_group
from .diego import DiegoChooser, deal_bin_pack_order, fast_path_applies
from .explain import OUTCOME_FEASIBLE, OUTCOME_FILTERED, OUTCOME_UNFIT, CellVerdict, ItemExplanation
from .filters import ERR_IN_FLIGHT, ERR_NO_CELLS, failed_filter
from .reference import schedule_reference
from .state import AuctionState, CellColumns, FilterClass, Holders, filter_key
from .strategies import make_chooser
from .types import STRATEGIES, AuctionConfig, AuctionResult, CellState, LRPWork, WorkItem

Choose = Callable[[WorkItem, FilterClass], "tuple[int, float | None] | None"]


def schedule(cells: Sequence[CellState], work: Iterable[WorkItem],
             config: AuctionConfig | None = None, *, explain: bool = False,
             ordered: bool = False, holders: Holders | None = None,
             columns: CellColumns | None = None) -> AuctionResult:
    """Schedule a batch against the fetched cell states, without committing.

    ``work`` is the formed batch (auction.md 1 step 4); it is de-duplicated and ordered
    here unless ``ordered`` says it already is; ``holders`` (``AuctionState``) reads a
    process's instances per cell from the caller's index; ``columns`` are the caller's
    ``CellColumns`` kept from its last auction, refreshed here for ``cells``. Returns tentative winners, errors, scores
    and each cell's won work; ``explain`` adds an ``ItemExplanation`` per item.
    """
    config = config or AuctionConfig()
    if config.placement_strategy not in STRATEGIES:
        raise ValueError(f"unknown placement_strategy {config.placement_strategy!r}")
    items = list(work) if ordered else order_batch(dedupe(work), config.go_compat)
    check_unique(items)
    if config.placement_strategy == "diego":
        if config.bin_pack_first_fit_weight > 0:
            cells = deal_bin_pack_order(cells, config.go_compat)
        if explain or not fast_path_applies(config):
            return schedule_reference(cells, items, config, explain)
        state = _state(cells, holders, columns)
        return drive(state, items, config, DiegoChooser(state, config).choose)
    state = _state(cells, holders, columns)
    return drive(state, items, config, make_chooser(state, config), explain)


def _state(cells: Sequence[CellState], holders: Holders | None,
           columns: CellColumns | None) -> AuctionState:
    if columns is not None:
        columns.refresh(cells)
    return AuctionState(cells, holders, columns)


def drive(state: AuctionState, items: Sequence[WorkItem], config: AuctionConfig,
          choose: Choose, explain: bool = False) -> AuctionResult:
    """Place each item of an ordered batch in turn with ``choose``."""
    order: list[str] = []
    placements: dict[str, str] = {}
    failures: dict[str, str] = {}
    scores: dict[str, float | None] = {}
    notes: list[ItemExplanation] = []
    cap = config.starting_container_count_maximum
    cell_ids = state.cell_ids
    classes: dict[tuple[str, tuple[str, ...], tuple[str, ...]], FilterClass] = {}
    reserve = state.reserve
    state.count_zones({item.process_guid for item in items if type(item) is LRPWork})
    for item in items:
        if type(item) is LRPWork:
            ident = f"{item.process_guid}.{item.index}"
        else:
            ident = item.task_guid  # type: ignore[union-attr]
        order.append(ident)
        fc: FilterClass | None = None
        found = None
        error: str | None
        if not cell_ids:
            error = ERR_NO_CELLS
        elif cap > 0 and state.in_flight >= cap:
            error = ERR_IN_FLIGHT  # before any filtering (auction.md 4.1)
        else:
            key = filter_key(item)
            fc = classes.get(key)
            if fc is None:
                fc = classes[key] = state.filter_class(key)
            error = fc.error
            if error is None:
                found = choose(item, fc)
                if found is None:
                    error = state.insufficient_error(item, fc)
        if explain:  # recorded before the reservation: the state the decision saw
            notes.append(_note(state, item, len(order) - 1, fc, found, config, error, choose))
        if found is None:
            assert error is not None  # nothing found: the filter or the fit said why
            failures[ident] = error
        else:
            pos, score = found
            reserve(pos, item)
            placements[ident] = cell_ids[pos]
            scores[ident] = score
    if explain:
        _number_groups(notes)
    return AuctionResult(
        order=order, items=list(items), placements=placements, failures=failures,
        scores=scores, won=state.won_by_cell(),
        strategy=config.placement_strategy, seed=config.seed, go_compat=config.go_compat,
        explanations=notes if explain else None)


def _note(state: AuctionState, item: WorkItem, position: int, fc: FilterClass | None,
          found: tuple[int, float | None] | None, config: AuctionConfig,
          error: str | None, choose: Choose) -> ItemExplanation:
    """A generic record for the non-diego strategies (taken before the reservation)."""
    note = ItemExplanation(identifier(item), "lrp" if type(item) is LRPWork else "task",
                           priority_group(item), position, 0,
                           strategy=config.placement_strategy, error=error)
    if type(item) is LRPWork:
        per_zone = state.zone_counts_of(item.process_guid)
        note.zone_counts = {z: per_zone.get(z, 0) for z in state.zones}
    if fc is None:
        return note
    for pos, cell in enumerate(state.cells):
        failed = failed_filter(cell, item.rootfs, item.volume_drivers, item.placement_tags)
        if failed is not None:
            note.cells.append(CellVerdict(cell.cell_id, cell.zone, OUTCOME_FILTERED,
                                          filter=failed))
            continue
        lacks = state.problems(item, pos)
        outcome = OUTCOME_UNFIT if lacks else OUTCOME_FEASIBLE
        note.cells.append(CellVerdict(cell.cell_id, cell.zone, outcome,
                                      problems=tuple(sorted(lacks))))
    narrow = getattr(choose, "narrow", None)  # dea's final candidates before the draw
    positions = narrow(item, fc) if narrow is not None else state.feasible(item, fc)
    note.candidates = [state.cell_ids[p] for p in positions]
    if found is not None:
        note.winner = state.cell_ids[found[0]]
        note.score = found[1]
    return note


def _number_groups(notes: list[ItemExplanation]) -> None:
    seen = {1: 0, 2: 0, 3: 0}
    for note in notes:
        note.group_position = seen[note.priority_group]
        seen[note.priority_group] += 1
