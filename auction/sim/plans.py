"""What-if plans (plans.md 1): changes applied to a clone of a base, run forward beside
the baseline, and the difference at the horizon.

Pure (no Django). A change is a dict ``{"action": name, ...fields, "at": sim-s}``;
``plan_changes`` checks a list with the chaos registry's rules and messages
(``auction.sim.chaos``), the BBS's cell checks and the auctioneer settings' checks, and
returns them typed. ``run_plan`` clones the base twice (plan and baseline), applies each
change at its instant through the same rules the live cluster runs, and measures both
worlds at the horizon (``PlanResult``).
"""

from __future__ import annotations

import hashlib
import json
import math
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from auction.bbs import types as core
from auction.bbs.validation import bbs_message, cell_errors, storable_text, text_too_long
from auction.engine import zone_skew
from auction.sim.auction_settings import FIELDS as SETTINGS_FIELDS
from auction.sim.auction_settings import auction_settings_errors
from auction.sim.chaos import ChaosError, chaos_args, chaos_change, desired_app
from auction.sim.lrps import lrp_remove
from auction.sim.memory import World
from auction.sim.model import FAILED, SimCell
from auction.sim.quality import QualitySample, quality_sample
from auction.sim.reps import PRESENCE_TTL_S

DEFAULT_HORIZON_S = 600.0
MAX_HORIZON_S = 3600.0
MAX_CHANGES = 100
MAX_ADDED_CELLS = 1000
#: Steps of a run: progress is reported and cancellation looked at after each, and the
#: report card's spread line gets one point per step (plus instant 0).
STEPS = 60
#: The result lists this many of the plan's auctions, one summary line each, and counts
#: them all (``auctions_total``): a long horizon on a crash-heavy foundation runs tens of
#: thousands (plans.md 1.4).
AUCTION_LINES = 2000

#: A plan's change name -> (the chaos registry's action, plan field -> action field).
CHAOS_CHANGES: dict[str, tuple[str, dict[str, str]]] = {
    "scale": ("scale", {"process_guid": "process_guid", "instances": "instances"}),
    "fail_cell": ("cell_fail", {"cell_id": "cell"}),
    "restore_cell": ("cell_restore", {"cell_id": "cell"}),
    "drain_cell": ("cell_drain", {"cell_id": "cell"}),
    "fail_zone": ("zone_fail", {"zone": "zone"}),
    "restore_zone": ("zone_restore", {"zone": "zone"}),
}
CELL_FIELDS = ("memory_mb", "disk_mb", "containers", "proxy_memory_mb", "preloaded_rootfses",
               "rootfs_providers", "volume_drivers", "placement_tags", "optional_placement_tags")
CELL_LISTS = CELL_FIELDS[4:]
CONFIG_ALIASES = {"strategy": "placement_strategy"}
CHANGE_NAMES = (*CHAOS_CHANGES, "desire", "remove", "add_cells", "remove_cell", "auction_config")


class PlanError(ValueError):
    """A plan refused (a bad change, horizon or base); ``message`` is one line."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True, slots=True)
class Change:
    """One checked change: its name, its typed fields, its instant (sim-s after the base)."""

    action: str
    args: Mapping[str, Any]
    at: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action, **self.args, "at": self.at}

    def describe(self) -> str:
        fields_ = " ".join(f"{k}={_plain_text(v)}" for k, v in self.args.items() if k != "spec")
        when = f" at {self.at:g} s" if self.at else ""
        return f"{self.action} {fields_}".strip() + when


def _plain_text(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


# -- checking ----------------------------------------------------------------------------

def plan_horizon(value: Any) -> float:
    if value is None:
        return DEFAULT_HORIZON_S
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 < value <= MAX_HORIZON_S:
        raise PlanError("Invalid field: horizon_s")
    return float(value)


def plan_changes(raw: Any, horizon: float = MAX_HORIZON_S) -> list[Change]:
    """Check a list of changes (JSON values); the first bad one is refused with its
    position and the live action's own message (plans.md 1.2)."""
    if not isinstance(raw, list):
        raise PlanError("Invalid field: changes")
    if len(raw) > MAX_CHANGES:
        raise PlanError(f"Invalid field: changes (at most {MAX_CHANGES})")
    out = []
    for position, item in enumerate(raw):
        try:
            out.append(plan_change(item, horizon))
        except PlanError as exc:
            name = item.get("action") if isinstance(item, dict) else None
            label = f"changes[{position}]" + (f" ({name})" if isinstance(name, str) else "")
            raise PlanError(f"{label}: {exc.message}", exc.status) from None
    return out


def plan_change(item: Any, horizon: float = MAX_HORIZON_S) -> Change:
    if not isinstance(item, dict):
        raise PlanError("Invalid field: action")
    for name, value in item.items():
        if not _storable(name) or not _storable(value):  # bbs.md 1.5: NUL, lone surrogates
            raise PlanError(f"Invalid field: {name if _storable(name) else 'name'}")
    fields_ = dict(item)
    action = fields_.pop("action", None)
    at = fields_.pop("at", 0)
    if action not in CHANGE_NAMES:
        raise PlanError(f"unknown change {action!r}; known: {', '.join(sorted(CHANGE_NAMES))}")
    if isinstance(at, str):
        at = _number(at, "at")
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at) \
            or not 0 <= at <= horizon:
        raise PlanError("Invalid field: at")
    return Change(action, _args(action, fields_), float(at))


def _storable(value: Any) -> bool:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, (list, tuple)):
        return all(_storable(v) for v in value)
    if isinstance(value, dict):
        return all(_storable(k) and _storable(v) for k, v in value.items())
    return True


def _args(action: str, fields_: dict[str, Any]) -> dict[str, Any]:
    try:
        if action in CHAOS_CHANGES:
            name, names = CHAOS_CHANGES[action]
            unknown = sorted(set(fields_) - set(names))
            if unknown:
                raise PlanError(f"Invalid field: {unknown[0]}")
            args = chaos_args(name, {names[k]: v for k, v in fields_.items()})
            back = {v: k for k, v in names.items()}
            return {back[k]: v for k, v in args.items()}
        if action == "desire":
            app = desired_app(fields_)
            return {"process_guid": app.process_guid, "spec": dict(fields_)}
        if action == "remove":
            return _only(fields_, ("process_guid",))
        if action == "remove_cell":
            return _only(fields_, ("cell_id",))
        if action == "add_cells":
            return _cells_args(fields_)
        return _config_args(fields_)
    except ChaosError as exc:
        raise PlanError(exc.message, exc.status) from None


def _only(fields_: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    unknown = sorted(set(fields_) - set(names))
    if unknown:
        raise PlanError(f"Invalid field: {unknown[0]}")
    for name in names:
        value = fields_.get(name)
        if not isinstance(value, str) or not value.strip() or text_too_long("process_guid", value):
            raise PlanError(f"Invalid field: {name}")
    return {name: fields_[name].strip() for name in names}


def _number(value: str, name: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise PlanError(f"Invalid field: {name}") from None


def _cells_args(fields_: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(fields_) - {"zone", "count", *CELL_FIELDS})
    if unknown:
        raise PlanError(f"Invalid field: {unknown[0]}")
    zone = fields_.get("zone")
    if not isinstance(zone, str) or not zone.strip() or text_too_long("process_guid", zone):
        raise PlanError("Invalid field: zone")
    args: dict[str, Any] = {"zone": zone.strip()}
    count = fields_.get("count", 1)
    if isinstance(count, str) and count.strip().isdigit():
        count = int(count)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_ADDED_CELLS:
        raise PlanError("Invalid field: count")
    args["count"] = count
    defaults = SimCell("x", "z")
    for name in CELL_FIELDS:
        value = fields_.get(name, getattr(defaults, name))
        if name in CELL_LISTS:
            if isinstance(value, str):
                value = [v for v in value.replace(",", " ").split() if v]
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
                raise PlanError(f"Invalid field: {name}")
            args[name] = tuple(value)
        else:
            if isinstance(value, str) and value.strip().isdigit():
                value = int(value)
            args[name] = value
    errors = cell_errors(cell_id="plan-cell", index=0, memory_mb=_int(args["memory_mb"]),
                         disk_mb=_int(args["disk_mb"]), containers=_int(args["containers"]),
                         proxy_memory_mb=_int(args["proxy_memory_mb"]))
    if errors:
        raise PlanError(bbs_message(errors))
    return args


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _config_args(fields_: dict[str, Any]) -> dict[str, Any]:
    values = {CONFIG_ALIASES.get(k, k): v for k, v in fields_.items()}
    unknown = sorted(set(values) - set(SETTINGS_FIELDS))
    if unknown:
        raise PlanError(f"Invalid field: {unknown[0]}")
    if not values:
        raise PlanError("Invalid field: auction_config (no setting given)")
    for name, value in list(values.items()):
        if isinstance(value, str):  # from the command line or a form
            values[name] = _typed_setting(name, value)
    errors = auction_settings_errors(values)
    if errors:
        raise PlanError(", ".join(errors))
    return values


def _typed_setting(name: str, value: str) -> Any:
    if name == "placement_strategy":
        return value.strip()
    if name == "go_compat":
        return {"true": True, "false": False}.get(value.strip().lower(), value)
    try:
        number = float(value)
    except ValueError:
        return value
    return int(number) if number.is_integer() and name in (
        "starting_container_count_maximum", "locality_offset") else number


def parse_change(text: str) -> dict[str, Any]:
    """``fail_zone zone=z2 at=30`` (the command line's form) as a change dict; numbers
    stay text for the checks to type, as a form's would."""
    words = shlex.split(text)
    if not words:
        raise PlanError("empty change")
    out: dict[str, Any] = {"action": words[0]}
    for word in words[1:]:
        name, sep, value = word.partition("=")
        if not sep or not name:
            raise PlanError(f"{word!r}: expected name=value")
        out[name] = value
    if out["action"] == "desire":
        for name in ("instances", "memory_mb", "disk_mb"):
            if isinstance(out.get(name), str) and out[name].isdigit():
                out[name] = int(out[name])
    return out


def change_text(change: Mapping[str, Any]) -> str:
    """A recorded change (``Change.as_dict``) in the command line's form (``parse_change``)."""
    fields_ = dict(change.get("spec") or {k: v for k, v in change.items() if k not in ("action", "at")})
    words = [str(change.get("action", ""))]
    words += [shlex.quote(f"{k}={_plain_text(v)}") for k, v in fields_.items()]
    if change.get("at"):
        words.append(f"at={change['at']:g}")
    return " ".join(words)


# -- applying ----------------------------------------------------------------------------

def apply_change(world: World, change: Change) -> None:
    """The change at the world's now, through the same rules the live cluster runs."""
    at = world.now
    try:
        if change.action in CHAOS_CHANGES:
            name, names = CHAOS_CHANGES[change.action]
            args = {names[k]: v for k, v in change.args.items()}
            world.apply(chaos_change(world, name, args, at))
        elif change.action == "desire":
            world.apply(chaos_change(world, "desire_lrps", {"apps": [dict(change.args["spec"])]}, at))
        elif change.action == "remove":
            guid = change.args["process_guid"]
            app = world.app(guid)
            if app is None:
                raise PlanError(f"no desired LRP {guid!r}", 404)
            world.apply(lrp_remove(app, world.app_rows(guid), lambda c: world.reachable(c, at), at))
        elif change.action == "add_cells":
            for cell in added_cells(world.cells, change.args):
                world.add_cell(cell)
        elif change.action == "remove_cell":
            cell_remove(world, change.args["cell_id"])
        else:
            world.config = replace(world.config, **change.args)
    except ChaosError as exc:
        raise PlanError(exc.message, exc.status) from None


def added_cells(existing: Mapping[str, SimCell], args: Mapping[str, Any]) -> list[SimCell]:
    """``count`` new cells in ``zone`` named ``<zone>-plan-<n>``, after every index in use
    (the plan's and, when applied, the live cluster's)."""
    zone = args["zone"]
    index = max((c.index for c in existing.values()), default=-1) + 1
    cells: list[SimCell] = []
    n = 0
    while len(cells) < args["count"]:
        n += 1
        cell_id = f"{zone}-plan-{n}"
        if cell_id in existing:
            continue
        cells.append(SimCell(cell_id, zone, index=index + len(cells),
                             **{k: args[k] for k in CELL_FIELDS}))
    return cells


def cell_remove(world: World, cell_id: str) -> None:
    """The cell is gone (``services.cells.cell_remove``): its rep and presence with it;
    convergence finds its instances missing."""
    if cell_id not in world.cells:
        raise PlanError(f"unknown cell {cell_id!r}", 404)
    world.remove_cell(cell_id)


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


def check_references(cells: Iterable[str], zones: Iterable[str], apps: Iterable[str],
                     changes: Sequence[Change]) -> None:
    """What a change names exists in the base (its cells, zones and desired LRPs), or is
    made by an earlier change (a cell ``add_cells`` adds, an app ``desire`` desires):
    refused before any run."""
    cells, zones, apps = set(cells), set(zones), set(apps)
    for index, change in sorted(enumerate(changes), key=lambda p: (p[1].at, p[0])):
        label = f"changes[{index}] ({change.action})"
        guid = change.args.get("process_guid")
        if change.action == "desire":
            if guid in apps:
                raise PlanError(f"{label}: desired LRP {guid!r} already exists")
            apps.add(str(guid))
        elif change.action == "add_cells":
            zones.add(change.args["zone"])  # its cells are named <zone>-plan-<n>
        elif guid is not None and guid not in apps:
            raise PlanError(f"{label}: no desired LRP {guid!r}", 404)
        elif change.action == "remove" and guid is not None:
            apps.discard(guid)
        cell_id = change.args.get("cell_id")
        if cell_id is not None and cell_id not in cells and "-plan-" not in cell_id:
            raise PlanError(f"{label}: unknown cell {cell_id!r}", 404)
        zone = change.args.get("zone")
        if change.action in ("fail_zone", "restore_zone") and zone not in zones:
            raise PlanError(f"{label}: unknown zone {zone!r}", 404)


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
    for item in left:
        name = item.get("instance") or item.get("task")
        out.append(f"{name} never placed ({item['error']})")
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
