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
from urllib.parse import urlencode

from auction.bbs.events import LRP_CRASHED
from auction.engine.advice import Need, smallest_change
from auction.engine.filters import failed_filter, fit_problems
from auction.models import ActualLRP, AuctionRun, BBSEvent, Cell, DesiredLRP, Task
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
from auction.selectors.lrps import restart_of

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


def unplaced_verdicts(item: dict[str, Any], error: str) -> Unplaced:
    """Each answering cell's verdict now, and the smallest change that can fit (G9):
    the engine's filters and fit check judge, ``engine.advice`` proposes."""
    states = cell_states(answering_cells(sim_now()))
    need = Need(memory_mb=item["memory_mb"], disk_mb=item["disk_mb"], rootfs=item["rootfs"],
                volume_drivers=tuple(item["volume_drivers"]),
                placement_tags=tuple(item["placement_tags"]), proxy=item["kind"] == "lrp")
    smallest, advice = smallest_change(states, need)
    verdicts: list[Verdict] = []
    for cell, says in zip(states, advice, strict=True):
        failed = failed_filter(cell, need.rootfs, need.volume_drivers, need.placement_tags)
        memory = need.memory_mb + (cell.proxy_memory_mb if need.proxy else 0)
        lacks = fit_problems(cell.available.memory_mb, cell.available.disk_mb,
                             cell.available.containers, memory, need.disk_mb)
        verdict = (f"fails {FILTER_LABELS[failed]}" if failed is not None
                   else "lacks " + ", ".join(sorted(lacks)) if lacks else "fits now")
        verdicts.append(Verdict(cell.cell_id, cell.zone, verdict, change=says.change, fits=says.fits_now))
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
    # An unplaced instance's shape as /plans/capacity/ asks it ("N more of this size fit").
    capacity_query: str = ""
    crash: CrashHistory | None = None


# How many of an instance's crashes the panel lists (newest first).
CRASHES_SHOWN = 10


@dataclass(slots=True)
class CrashHistory:
    """A crashed instance's panel (G9): its crashes and when it restarts (bbs.md 3),
    instead of a placement it no longer has."""

    crash_count: int
    reason: str
    restart: str
    restart_due: float | None
    crashes: list[dict[str, Any]]


def crash_history(ident: str, row: dict[str, Any], now: float) -> CrashHistory:
    restart = restart_of(row["state"], row["crash_count"], row["since"], now)
    crashes = []
    for at, cell_id, data in BBSEvent.objects.filter(key=ident, type=LRP_CRASHED).order_by(
            "-at", "-id").values_list("at", "cell_id", "data")[:CRASHES_SHOWN]:
        before, after = (data or {}).get("before") or {}, (data or {}).get("after") or {}
        crashes.append({"at": at, "cell_id": cell_id or before.get("cell_id", ""),
                        "count": after.get("crash_count", "")})
    return CrashHistory(row["crash_count"], row.get("crash_reason") or "", restart.text,
                        restart.due, crashes)


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
    crash = None
    if ordinary is not None and ordinary["state"] == ActualLRP.State.CRASHED:
        crash = crash_history(ident, ordinary, now)  # no stale "Why here": it holds no cell
    elif ordinary is not None and ordinary["state"] == ActualLRP.State.UNCLAIMED and desired is not None:
        unplaced = unplaced_verdicts({
            "ident": ident, "kind": "lrp", "memory_mb": desired.memory_mb, "disk_mb": desired.disk_mb,
            "rootfs": desired.rootfs, "volume_drivers": tuple(desired.volume_drivers),
            "placement_tags": tuple(desired.placement_tags)}, ordinary["placement_error"])
    else:
        why = why_here(ident)
    values = list(spread.values())
    capacity_query = ""
    if unplaced is not None and desired is not None:
        capacity_query = urlencode({
            "memory_mb": desired.memory_mb, "disk_mb": desired.disk_mb, "rootfs": desired.rootfs,
            "placement_tags": ",".join(desired.placement_tags),
            "volume_drivers": ",".join(desired.volume_drivers), "kind": "lrp", "view": "panel"})
    return InstancePanel(guid=guid, index=index, rows=rows, spread=spread,
                         skew=(max(values) - min(values)) if values else 0, why=why,
                         unplaced=unplaced, memory_mb=desired.memory_mb if desired else 0, now=now,
                         capacity_query=capacity_query, crash=crash)


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
