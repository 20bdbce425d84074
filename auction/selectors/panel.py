"""The side panel (dashboard.md G9) and its "why here" section (G10).

"Why here" reads the decision record the auctioneer stored for the auction that placed
the item (``selectors.auctions``); it never re-runs the engine. An unplaced item's
verdicts are about now: each cell as it is at this sim instant, judged by the engine's
own filter and fit functions, with the smallest change that would let the item fit.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from auction.engine.filters import failed_filter, fit_problems
from auction.engine.types import CellState
from auction.models import ActualLRP, AuctionRun, Cell, DesiredLRP, Task
from auction.selectors.auctions import (
    FILTER_LABELS,
    PART_LABELS,
    PARTS,
    STRATEGY_RULES,
    item_lookup,
    reason_cells,
    reason_counts,
    runners_up,
    walk_groups,
)
from auction.selectors.cells import answering_cells, cell_states
from auction.selectors.clock import sim_now

TASK_REJECTIONS_MAX = 3  # bbs.md 7: the 4th rejection fails the task


@dataclass(slots=True)
class WhyHere:
    """G10 for one placed item, from its auction's record."""

    run_id: int
    step: int
    ident: str
    winner: str | None
    strategy: str
    rule: str
    detail: str
    parts: list[tuple[str, float]] = field(default_factory=list)
    total: float | None = None
    zone_counts: dict[str, int] = field(default_factory=dict)
    first_group: str = ""
    runners_up: list[dict[str, Any]] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)
    reason_cells: dict[str, list[str]] = field(default_factory=dict)
    candidates: list[str] | None = None
    kind: str = "lrp"
    go_compat: bool = False  # placed in the Go binary's order (auction.md 2.1)


@dataclass(slots=True)
class Verdict:
    """One cell's answer for an unplaced item, now."""

    cell_id: str
    zone: str
    verdict: str
    change: str = ""
    fits: bool = False


@dataclass(slots=True)
class Unplaced:
    error: str
    verdicts: list[Verdict]
    smallest_change: str
    run_id: int | None = None
    step: int | None = None


def why_here(ident: str) -> WhyHere | None:
    """The newest auction that placed ``ident``, reshaped for the panel."""
    found = item_lookup(ident, placed=True)
    if found is None:
        return None
    run, position = found
    return why_from_run(run, position)


def why_from_run(run: AuctionRun, position: int) -> WhyHere:
    ident = run.order[position]
    note = next((n for n in run.explanations or [] if n.get("identifier") == ident), None)
    strategy = (note or {}).get("strategy") or run.strategy
    why = WhyHere(run_id=run.pk, step=position + 1, ident=ident, winner=run.placements.get(ident),
                  strategy=strategy, rule=STRATEGY_RULES.get(strategy, ""),
                  detail=run.detail if note else "none", total=run.scores.get(ident),
                  kind=(run.batch or {}).get(ident, {}).get("kind") or (note or {}).get("kind", "lrp"),
                  go_compat=run.go_compat)
    if note is None:
        return why
    winner = next((c for c in note.get("cells") or [] if c["cell_id"] == why.winner), None)
    if winner is not None and winner.get("score") is not None:
        why.parts = [(PART_LABELS[p], float(winner.get(p) or 0.0)) for p in PARTS]
        why.total = winner["score"]
    why.zone_counts = dict(note.get("zone_counts") or {})
    groups = walk_groups(note)
    if groups and why.kind == "lrp" and strategy == "diego":
        why.first_group = groups[0]["label"]
    why.runners_up = runners_up(note)
    why.reasons = reason_counts(note)
    why.reason_cells = {} if note.get("trimmed") else reason_cells(note.get("cells") or [])
    why.candidates = note.get("candidates")
    return why


def _needs(item: Any, cell: CellState) -> tuple[int, int]:
    memory = item["memory_mb"] + (cell.proxy_memory_mb if item["kind"] == "lrp" else 0)
    return memory, item["disk_mb"]


def _change_text(cell: CellState, memory: int, disk: int) -> tuple[str, tuple[int, int, int, int]]:
    short_mem = max(0, memory - cell.available.memory_mb)
    short_disk = max(0, disk - cell.available.disk_mb)
    short_cont = max(0, 1 - cell.available.containers)
    parts = []
    if short_mem:
        parts.append(f"{short_mem} MB memory")
    if short_disk:
        parts.append(f"{short_disk} MB disk")
    if short_cont:
        parts.append(f"{short_cont} container")
    text = f"free {' and '.join(parts)} on {cell.cell_id}"
    return text, (len(parts), short_mem, short_disk, short_cont)


def unplaced_verdicts(item: dict[str, Any], error: str) -> Unplaced:
    """Each answering cell's verdict now, and the smallest change that fits (G9)."""
    states = cell_states(answering_cells(sim_now()))
    verdicts: list[Verdict] = []
    best: tuple[tuple[int, int, int, int], str] | None = None
    for cell in states:
        failed = failed_filter(cell, item["rootfs"], item["volume_drivers"], item["placement_tags"])
        if failed is not None:
            verdicts.append(Verdict(cell.cell_id, cell.zone, f"fails {FILTER_LABELS[failed]}"))
            continue
        memory, disk = _needs(item, cell)
        lacks = fit_problems(cell.available.memory_mb, cell.available.disk_mb,
                             cell.available.containers, memory, disk)
        if not lacks:
            verdicts.append(Verdict(cell.cell_id, cell.zone, "fits now", fits=True))
            continue
        text, size = _change_text(cell, memory, disk)
        verdicts.append(Verdict(cell.cell_id, cell.zone, "lacks " + ", ".join(sorted(lacks)), change=text))
        if best is None or size < best[0]:
            best = (size, text)
    if any(v.fits for v in verdicts):
        smallest = "none needed: a cell fits now; the next auction that includes it should place it"
    elif best is not None:
        smallest = best[1]
    elif not states:
        smallest = "no cell answers: restore a cell"
    else:
        smallest = "no cell passes the filters: add a cell with the rootfs, drivers and tags it asks for"
    found = item_lookup(item["ident"], placed=False)
    return Unplaced(error=error, verdicts=verdicts, smallest_change=smallest,
                    run_id=found[0].pk if found else None, step=found[1] + 1 if found else None)


@dataclass(slots=True)
class InstancePanel:
    guid: str
    index: int
    rows: list[dict[str, Any]]
    spread: dict[str, int]
    skew: int
    why: WhyHere | None
    unplaced: Unplaced | None
    memory_mb: int
    now: float


def _zone_names() -> list[str]:
    return list(Cell.objects.order_by("zone__name").values_list("zone__name", flat=True).distinct())


def instance_panel(guid: str, index: int) -> InstancePanel | None:
    desired = DesiredLRP.objects.filter(process_guid=guid).first()
    rows = list(ActualLRP.objects.filter(desired_id=guid, index=index).order_by("presence").values(
        "instance_guid", "index", "state", "presence", "cell_id", "since", "crash_count",
        "placement_error", "crash_reason"))
    if desired is None and not rows:
        return None
    now = sim_now()
    zone_of = dict(Cell.objects.values_list("cell_id", "zone__name"))
    spread = dict.fromkeys(_zone_names(), 0)
    for cell_id in ActualLRP.objects.filter(desired_id=guid).exclude(cell_id="").values_list("cell_id", flat=True):
        zone = zone_of.get(cell_id)
        if zone is not None:
            spread[zone] = spread.get(zone, 0) + 1
    for row in rows:
        row["wait"] = now - row["since"] if row["state"] == ActualLRP.State.UNCLAIMED else None
    ident = f"{guid}.{index}"
    ordinary = next((r for r in rows if r["presence"] == ActualLRP.Presence.ORDINARY), None)
    unplaced = None
    why = None
    if ordinary is not None and ordinary["state"] == ActualLRP.State.UNCLAIMED and desired is not None:
        unplaced = unplaced_verdicts({
            "ident": ident, "kind": "lrp", "memory_mb": desired.memory_mb, "disk_mb": desired.disk_mb,
            "rootfs": desired.rootfs, "volume_drivers": tuple(desired.volume_drivers),
            "placement_tags": tuple(desired.placement_tags)}, ordinary["placement_error"])
    else:
        why = why_here(ident)
    values = list(spread.values())
    return InstancePanel(guid=guid, index=index, rows=rows, spread=spread,
                         skew=(max(values) - min(values)) if values else 0, why=why,
                         unplaced=unplaced, memory_mb=desired.memory_mb if desired else 0, now=now)


@dataclass(slots=True)
class TaskPanel:
    task: Task
    rejections_max: int
    why: WhyHere | None
    unplaced: Unplaced | None


def task_panel(guid: str) -> TaskPanel | None:
    task = Task.objects.filter(task_guid=guid).first()
    if task is None:
        return None
    unplaced = why = None
    if task.state == Task.State.PENDING:
        unplaced = unplaced_verdicts({
            "ident": guid, "kind": "task", "memory_mb": task.memory_mb, "disk_mb": task.disk_mb,
            "rootfs": task.rootfs, "volume_drivers": tuple(task.volume_drivers),
            "placement_tags": tuple(task.placement_tags)}, task.rejection_reason)
    else:
        why = why_here(guid)
    return TaskPanel(task=task, rejections_max=TASK_REJECTIONS_MAX, why=why, unplaced=unplaced)


@dataclass(slots=True)
class CellPanel:
    cell: Cell
    present: bool
    reserved: dict[str, int]
    available: dict[str, int]
    starting: int
    instances: int
    tasks: int
    states: dict[str, int]
    now: float


def cell_panel(cell_id: str) -> CellPanel | None:
    cell = Cell.objects.select_related("zone").filter(cell_id=cell_id).first()
    if cell is None:
        return None
    now = sim_now()
    state = cell_states([cell])[0]
    available = {"memory_mb": state.available.memory_mb, "disk_mb": state.available.disk_mb,
                 "containers": state.available.containers}
    reserved = {"memory_mb": cell.memory_mb - available["memory_mb"],
                "disk_mb": cell.disk_mb - available["disk_mb"],
                "containers": cell.containers - available["containers"]}
    states = Counter(ActualLRP.objects.filter(cell_id=cell_id).values_list("state", flat=True))
    return CellPanel(cell=cell, present=cell.has_presence(now), reserved=reserved, available=available,
                     starting=state.starting_containers, instances=len(state.lrps), tasks=len(state.tasks),
                     states=dict(states), now=now)
