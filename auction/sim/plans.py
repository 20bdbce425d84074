"""What-if plans (plans.md 1): changes applied to a clone of a base, run forward beside
the baseline, and the difference at the horizon.

Pure (no Django). The changes are ``auction.sim.plan_changes``'s, checked. ``run_plan``
clones the base twice (plan and baseline), applies each change at its instant through
the same rules the live cluster runs, and measures both worlds at the horizon
(``plan_result``); ``zone_loss`` answers what losing one zone would leave.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from auction.bbs import types as core
from auction.engine import zone_skew
from auction.sim.memory import World
from auction.sim.model import FAILED
from auction.sim.plan_changes import (
    DEFAULT_HORIZON_S,
    Change,
    PlanError,
    apply_change,
    check_references,
)
from auction.sim.quality import QualitySample, quality_sample
from auction.sim.reps import PRESENCE_TTL_S

#: Steps of a run: progress is reported and cancellation looked at after each, and the
#: report card's spread line gets one point per step (plus instant 0).
STEPS = 60
#: The result lists this many of the plan's auctions, one summary line each, and counts
#: them all (``auctions_total``): a long horizon on a crash-heavy foundation runs tens of
#: thousands (plans.md 1.4).
AUCTION_LINES = 2000

# -- running -----------------------------------------------------------------------------

@dataclass(slots=True)
class PlanRun:
    """Both worlds at the horizon and their spread along the way."""

    base_now: float
    horizon: float
    changes: list[Change]
    plan: World
    baseline: World
    plan_series: list[QualitySample] = field(default_factory=list)
    baseline_series: list[QualitySample] = field(default_factory=list)
    plan_auctions_before: int = 0
    plan_passes_before: int = 0


class PlanCancelled(Exception):
    """The run was cancelled between two steps."""


def run_plan(base: World, changes: Sequence[Change], horizon: float = DEFAULT_HORIZON_S, *,
             progress: Callable[[float], None] | None = None,
             cancelled: Callable[[], bool] | None = None, steps: int = STEPS,
             sample: bool = True) -> PlanRun:
    """Run the plan and its baseline from ``base`` (left untouched) to the horizon."""
    return run_plan_worlds(base.clone(), base.clone(), changes, horizon, progress=progress,
                           cancelled=cancelled, steps=steps, sample=sample)


def run_plan_worlds(plan: World, baseline: World, changes: Sequence[Change],
                    horizon: float = DEFAULT_HORIZON_S, *, progress: Callable[[float], None] | None = None,
                    cancelled: Callable[[], bool] | None = None, steps: int = STEPS,
                    sample: bool = True,
                    replays: Callable[[dict[str, Any]], bool] | None = None) -> PlanRun:
    """Run two identical fresh worlds (two clones of one base) as the plan and the baseline.

    Each change is applied at ``base.now + at`` after everything else due at that instant
    (the base is already handled to its now); the changes of one instant all land before
    the world reacts to any of them. ``sample`` records both worlds' spread after every
    step (the report card's line); without it only at the start and the horizon.
    ``replays`` is handed each of the plan's auctions' replay records (plans.md 1.7)
    while it answers True.
    """
    check_references(plan.cells, {c.zone for c in plan.cells.values()}, plan.apps, changes)
    plan.replay_sink = replays
    try:
        return _run_worlds(plan, baseline, changes, horizon, progress, cancelled, steps, sample)
    finally:
        plan.replay_sink = None


def _run_worlds(plan: World, baseline: World, changes: Sequence[Change], horizon: float,
                progress: Callable[[float], None] | None, cancelled: Callable[[], bool] | None,
                steps: int, sample: bool) -> PlanRun:
    start = plan.now
    run = PlanRun(start, horizon, list(changes), plan, baseline,
                  plan_auctions_before=len(plan.auctions), plan_passes_before=len(plan.passes))
    pending = sorted(enumerate(changes), key=lambda p: (p[1].at, p[0]))
    instants = [start + horizon * i / steps for i in range(steps + 1)]
    for n, at in enumerate(instants):
        while pending and start + pending[0][1].at <= at:
            index, change = pending.pop(0)
            if start + change.at > plan.now:
                # Changes at one instant all land before anything reacts to them, as an
                # operator's requests do between two beats.
                plan.run_until(start + change.at)
            try:
                apply_change(plan, change)
            except PlanError as exc:
                raise PlanError(f"changes[{index}] ({change.action}) at {change.at:g} s: {exc.message}",
                                exc.status) from None
        plan.run_until(at)
        baseline.run_until(at)
        if sample or n in (0, steps):
            run.plan_series.append(quality_sample(plan))
            run.baseline_series.append(quality_sample(baseline))
        if progress is not None:
            progress(n / steps)
        if cancelled is not None and n < steps and cancelled():
            raise PlanCancelled()
    return run


# -- measuring ---------------------------------------------------------------------------

def _up(world: World, row: core.ActualLRP) -> bool:
    """An instance that holds a container on a cell that is there and not failed."""
    if row.state not in (core.CLAIMED, core.RUNNING):
        return False
    cell = world.cells.get(row.cell_id)
    return cell is not None and cell.state != FAILED


def placed_by_zone(world: World) -> dict[str, dict[str, int]]:
    """Per app, ORDINARY instances RUNNING per zone (plans.md 1.4)."""
    zone_of = {c.cell_id: c.zone for c in world.cells.values()}
    out: dict[str, dict[str, int]] = {}
    for row in world.rows.values():
        if row.state == core.RUNNING and row.presence == core.ORDINARY:
            zone = zone_of.get(row.cell_id, "(removed cell)")
            by_zone = out.get(row.process_guid)
            if by_zone is None:
                by_zone = out[row.process_guid] = {}
            by_zone[zone] = by_zone.get(zone, 0) + 1
    return {g: dict(sorted(z.items())) for g, z in sorted(out.items())}


def unplaced(world: World) -> list[dict[str, Any]]:
    """Work still unclaimed: each with its placement error and since when."""
    rows = sorted((r for r in world.rows.values() if r.state == core.UNCLAIMED and r.presence == core.ORDINARY),
                  key=lambda r: (r.process_guid, r.index))
    out: list[dict[str, Any]] = [{"instance": core.lrp_id(row.key), "error": row.placement_error or "awaiting auction",
                                  "since": row.since} for row in rows]
    for guid, sim_task in sorted(world.tasks.items()):
        task = sim_task.task
        if task.state == core.PENDING:
            out.append({"task": guid, "error": task.rejection_reason or "awaiting auction",
                        "since": task.created_at})
    return out


def _cells_of(world: World) -> dict[core.LRPKey, str]:
    return {row.lrp_key: row.cell_id for row in world.rows.values()
            if row.presence == core.ORDINARY and row.state in (core.CLAIMED, core.RUNNING)}


def zone_resources(world: World) -> dict[str, dict[str, int]]:
    """Per zone: reserved and free memory, disk and containers (free counts only cells
    that take work: healthy with a presence)."""
    loads = world.loads()
    out: dict[str, dict[str, int]] = {}
    for cell in sorted(world.cells.values(), key=lambda c: (c.zone, c.index, c.cell_id)):
        load = loads[cell.cell_id]
        zone = out.setdefault(cell.zone, {k: 0 for k in (
            "cells", "memory_reserved_mb", "memory_free_mb", "disk_reserved_mb", "disk_free_mb",
            "containers_reserved", "containers_free")})
        zone["cells"] += 1
        zone["memory_reserved_mb"] += load.memory_mb
        zone["disk_reserved_mb"] += load.disk_mb
        zone["containers_reserved"] += load.containers
        if cell.answers(world.now):
            zone["memory_free_mb"] += max(cell.memory_mb - load.memory_mb, 0)
            zone["disk_free_mb"] += max(cell.disk_mb - load.disk_mb, 0)
            zone["containers_free"] += max(cell.containers - load.containers, 0)
    return out


def time_to_converge(world: World, start: float) -> float | None:
    """Sim-s after the base until every desired instance is RUNNING, or None (never
    within the horizon). A RUNNING row's ``since`` is when it became RUNNING, so when all
    are RUNNING at the horizon the newest ``since`` is the instant the last one did."""
    latest = start
    for app in world.apps.values():
        for index in range(app.instances):
            row = world.rows.get((app.process_guid, index, core.ORDINARY))
            if row is None or row.state != core.RUNNING:
                return None
            latest = max(latest, row.since)
    return latest - start


def skew_by_app(world: World) -> dict[str, int]:
    """Zone skew per app (auction.md 9), over every cell."""
    states = world.cell_states(sorted(world.cells.values(), key=lambda c: (c.zone, c.index, c.cell_id)))
    return {g: s for g, s in zone_skew(states).per_app.items() if g in world.apps}


def warnings(world: World, placed: Mapping[str, Mapping[str, int]],
             left: Iterable[Mapping[str, Any]]) -> list[str]:
    """What an operator should look at: an app of several instances held in one zone
    of several, and work never placed."""
    out = []
    zones = {c.zone for c in world.cells.values()}
    for guid, by_zone in placed.items():
        total = sum(by_zone.values())
        app = world.apps.get(guid)
        if app is not None and len(zones) > 1 and total > 1 and len(by_zone) == 1:
            zone = next(iter(by_zone))
            out.append(f"{zone} would hold {total} of {app.instances} instances of {guid}")
    # Work never placed, grouped by app (or tasks) and reason: a zone loss leaves
    # thousands of instances, one line each buried the tables (issue 28).
    groups: dict[tuple[str, str], list[str]] = {}
    for item in left:
        instance = item.get("instance")
        owner = instance.rsplit(".", 1)[0] if instance else "tasks"
        groups.setdefault((owner, item["error"]), []).append(instance or item.get("task") or "")
    for (owner, error), names in groups.items():
        if len(names) == 1:
            out.append(f"{names[0]} never placed ({error})")
        else:
            kind = "tasks" if owner == "tasks" else f"instances of {owner}"
            out.append(f"{len(names)} {kind} never placed ({error})")
    return out


def world_summary(world: World, start: float) -> dict[str, Any]:
    placed = placed_by_zone(world)
    left = unplaced(world)
    ttc = time_to_converge(world, start)
    return {
        "placed": placed, "unplaced": left,
        "time_to_converge": "never" if ttc is None else ttc,
        "zones": zone_resources(world), "zone_skew": skew_by_app(world),
        "warnings": warnings(world, placed, left),
    }


def plan_result(run: PlanRun) -> dict[str, Any]:
    """The plan against its baseline (plans.md 1.4), JSON-ready."""
    plan, baseline = run.plan, run.baseline
    planned = world_summary(plan, run.base_now)
    base = world_summary(baseline, run.base_now)
    plan_cells, base_cells = _cells_of(plan), _cells_of(baseline)
    moved = [{"instance": f"{g}.{i}", "from": base_cells[(g, i)], "to": cell}
             for (g, i), cell in sorted(plan_cells.items())
             if (g, i) in base_cells and base_cells[(g, i)] != cell]
    stopped = [{"instance": f"{g}.{i}", "cell": cell} for (g, i), cell in sorted(base_cells.items())
               if (g, i) not in plan_cells and (g not in plan.apps or i >= plan.apps[g].instances)]
    ran = plan.auctions[run.plan_auctions_before:]
    auctions = [{"at": a.at, "items": a.items, "placed": len(a.placed), "failed": len(a.failures),
                 "failures": dict(Counter(a.failures.values()))}
                for a in ran[:AUCTION_LINES]]
    passes = [{"at": at, "metrics": metrics} for at, metrics in plan.passes[run.plan_passes_before:]]
    return {
        "base_now": run.base_now, "horizon_s": run.horizon,
        "changes": [c.as_dict() for c in run.changes],
        "placed": planned["placed"], "unplaced": planned["unplaced"],
        "moved": moved, "stopped": stopped,
        "time_to_converge": planned["time_to_converge"],
        "zones": planned["zones"], "zone_skew": planned["zone_skew"],
        "warnings": planned["warnings"],
        "auctions": auctions, "auctions_total": len(ran), "passes": passes,
        "baseline": {k: base[k] for k in ("placed", "unplaced", "time_to_converge", "zones",
                                          "zone_skew", "warnings")},
        "series": {"plan": [[s.at, s.distribution, s.worst_skew] for s in run.plan_series],
                   "baseline": [[s.at, s.distribution, s.worst_skew] for s in run.baseline_series]},
    }


def zone_loss_fingerprint(epoch: Any, cells: Iterable[Sequence[Any]], apps: Iterable[Sequence[Any]]) -> str:
    """The world a zone-loss answer is for, as text every process computes alike (a
    Python ``hash`` of text differs from process to process)."""
    digest = hashlib.sha256(json.dumps([epoch, [list(c) for c in cells], [list(a) for a in apps]],
                                       separators=(",", ":"), default=str).encode())
    return digest.hexdigest()


#: Zone loss (plans.md 2.2): two convergence passes plus the presence lapse.
def zone_loss_horizon(world: World) -> float:
    return 2 * world.convergence_interval_s + PRESENCE_TTL_S


def zone_loss(base: World, zone: str, *, fresh: bool = False) -> dict[str, Any]:
    """Fail ``zone`` at 0 and look at the horizon: apps that lose every instance, apps
    left with fewer than desired, instances unplaced. ``fresh``: ``base`` is a clone made
    for this question and may be run (no second copy)."""
    world = base if fresh else base.clone()
    change = Change("fail_zone", {"zone": zone})
    check_references(world.cells, {c.zone for c in world.cells.values()}, world.apps, [change])
    apply_change(world, change)
    world.run_until(world.now + zone_loss_horizon(world))
    up: Counter[str] = Counter()
    for row in world.rows.values():
        if _up(world, row):
            up[row.process_guid] += 1
    down, degraded = [], []
    for guid, app in sorted(world.apps.items()):
        if app.instances <= 0:
            continue
        if up[guid] == 0:
            down.append(guid)
        elif up[guid] < app.instances:
            degraded.append(guid)
    left = sum(1 for r in world.rows.values() if r.presence == core.ORDINARY and r.state == core.UNCLAIMED)
    return {"unplaced": left, "apps_down": down, "apps_degraded": degraded,
            "survives": not down, "status": "red" if down else "amber" if degraded or left else "green"}
