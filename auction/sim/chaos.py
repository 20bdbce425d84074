"""Chaos and operator actions, each declared once (dashboard.md C2, C3; scenario timelines).

An action has a name (the API path, the CLI verb, the scenario timeline's ``action``),
its parameters, the audit entry it leaves, the line the feed and the controls show, the
permission it needs, and its rule: a pure function from what it reads (a
``ChaosReader``: the store) and its arguments to a ``ChangeSet``. The API, the dashboard
controls, the CLI, scenario timelines and plans all go through ``chaos_args`` (validation)
and ``chaos_change`` (the rule), so adding "fail a rack" means one declaration here plus
whatever door should offer it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from auction.bbs import types as core
from auction.bbs.changes import RowUpdate, TaskUpdate
from auction.bbs.validation import (
    bbs_message,
    desired_lrp_errors,
    out_of_range,
    simulation_errors,
    text_too_long,
)
from auction.sim.changes import ChangeSet, Note
from auction.sim.lrps import lrp_desire, lrp_update
from auction.sim.model import DRAINING, FAILED, HEALTHY, SimApp, SimCell, SimTask, app_from_spec
from auction.sim.reps import crash_report, evacuation_sync, presence_lapses_at

CONTROL_PERMISSION = "auction.control"


class ChaosError(ValueError):
    """An action the cluster refuses now; ``status`` is the HTTP status (400, 404)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class ChaosReader(Protocol):
    """What the rules read (both stores implement it)."""

    def cell(self, cell_id: str) -> SimCell | None: ...
    def zone_cells(self, zone: str) -> list[SimCell]: ...
    def app(self, process_guid: str) -> SimApp | None: ...
    def app_rows(self, process_guid: str) -> list[core.ActualLRP]: ...
    def rows_on(self, cell_id: str) -> list[core.ActualLRP]: ...
    def tasks_on(self, cell_id: str) -> list[SimTask]: ...
    def reachable(self, cell_id: str, at: float) -> bool: ...

    def evacuation_view(self, cell_id: str) -> tuple[list[core.ActualLRP], dict[core.LRPKey, str],
                                                     set[str], bool]:
        """What one evacuation sync reads: the rows on the cell, the state of the ORDINARY
        row of each of their indices, which of their apps are desired, whether tasks
        still run there."""
        ...


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    # "cell" | "zone" | "app" | "count" | "index" (an instance: with the app, one
    # ``<process_guid>.<index>`` field in forms) | "apps" (a deploy's specs)
    kind: str
    label: str


Rule = Callable[[ChaosReader, Mapping[str, Any], float], ChangeSet]


@dataclass(frozen=True, slots=True)
class ChaosAction:
    name: str
    label: str
    params: tuple[Param, ...]
    audit: str
    done: str  # what happened, ``str.format``-ed with the arguments
    rule: Rule
    permission: str = CONTROL_PERMISSION
    dashboard: bool = True  # offered by the dashboard's controls and the API

    def describe(self, args: Mapping[str, Any], cells: int = 0) -> str:
        return self.done.format(count=len(args.get("apps", ())), cells=cells, **args)

    def target(self, args: Mapping[str, Any]) -> str:
        """What the audit entry names: the cell, zone, instance or app acted on."""
        if "instance" in args:
            return str(args["instance"])
        first = self.params[0].name
        return str(args.get(first, ""))


# -- cells -------------------------------------------------------------------------------

def _cell(reader: ChaosReader, cell_id: str) -> SimCell:
    cell = reader.cell(cell_id)
    if cell is None:
        raise ChaosError(f"unknown cell {cell_id!r}", 404)
    return cell


def _cell_change(cell: SimCell, at: float, note: str, **fields: Any) -> ChangeSet:
    change = ChangeSet(at)
    change.cells_put.append(replace(cell, **fields))
    change.notes.append(Note(note, cell.cell_id, cell.cell_id, {"state": [cell.state, fields.get("state", cell.state)]}))
    change.touched.add(cell.cell_id)
    return change


def cell_fail(cell: SimCell, at: float) -> ChangeSet:
    """The rep stops answering: auctions skip it, it reports nothing, and its presence
    lapses 10-15 s later (bbs.md 6.1), after which convergence treats its instances as
    missing."""
    lapse = cell.presence_lost_at if cell.presence_lost_at is not None else presence_lapses_at(at)
    return _cell_change(cell, at, "cell_fail", state=FAILED, presence_lost_at=lapse)


def cell_restore(cell: SimCell, rows: Sequence[core.ActualLRP], tasks: Sequence[SimTask],
                 at: float) -> ChangeSet:
    """The rep is back with a fresh presence. What it would have reported while silent
    (a start, a crash, a completion whose time passed) it reports now."""
    change = _cell_change(cell, at, "cell_restore", state=HEALTHY, presence_lost_at=None,
                          evacuating_since=None, evacuation_synced_at=None)
    for row in rows:
        ready = row.ready_at if row.ready_at is None or row.ready_at >= at else at
        crash_at = row.crash_at if row.crash_at is None or row.crash_at >= at else at
        if (ready, crash_at) != (row.ready_at, row.crash_at):
            change.lrp_ops.append(RowUpdate(row.key, row, core.evolve(row, ready_at=ready,
                                                                       crash_at=crash_at)))
    for sim_task in tasks:
        task = sim_task.task
        if task.finishes_at is not None and task.finishes_at < at:
            change.task_ops.append(TaskUpdate(task, replace(task, finishes_at=at)))
    return change


def cell_drain(reader: ChaosReader, cell: SimCell, at: float) -> ChangeSet:
    """Evacuation begins (bbs.md 6.3): the cell reports itself evacuating, auctions skip
    it, commits to it are rejected; its rep syncs now (in the same change) and every 10 s."""
    if cell.state != HEALTHY:
        raise ChaosError(f"cell {cell.cell_id} is {cell.state}; only a healthy cell can drain")
    change = _cell_change(cell, at, "cell_drain", state=DRAINING, evacuating_since=at,
                          evacuation_synced_at=None)
    draining = change.cells_put[-1]
    rows, ordinary, desired, tasks_left = reader.evacuation_view(cell.cell_id)
    return change.merge(evacuation_sync(draining, rows, ordinary, desired, tasks_left, at))


def _fail(reader: ChaosReader, args: Mapping[str, Any], at: float) -> ChangeSet:
    return cell_fail(_cell(reader, args["cell"]), at)


def _restore(reader: ChaosReader, args: Mapping[str, Any], at: float) -> ChangeSet:
    cell = _cell(reader, args["cell"])
    return cell_restore(cell, reader.rows_on(cell.cell_id), reader.tasks_on(cell.cell_id), at)


def _drain(reader: ChaosReader, args: Mapping[str, Any], at: float) -> ChangeSet:
    return cell_drain(reader, _cell(reader, args["cell"]), at)


def _zone(reader: ChaosReader, zone: str) -> list[SimCell]:
    cells = sorted(reader.zone_cells(zone), key=lambda c: (c.index, c.cell_id))
    if not cells:
        raise ChaosError(f"unknown zone {zone!r}", 404)
    return cells


def _zone_fail(reader: ChaosReader, args: Mapping[str, Any], at: float) -> ChangeSet:
    change = ChangeSet(at)
    for cell in _zone(reader, args["zone"]):
        change.merge(cell_fail(cell, at))
    return _one_zone_note(change, "zone_fail", args["zone"])


def _zone_restore(reader: ChaosReader, args: Mapping[str, Any], at: float) -> ChangeSet:
    change = ChangeSet(at)
    for cell in _zone(reader, args["zone"]):
        change.merge(cell_restore(cell, reader.rows_on(cell.cell_id),
                                  reader.tasks_on(cell.cell_id), at))
    return _one_zone_note(change, "zone_restore", args["zone"])


def _one_zone_note(change: ChangeSet, note: str, zone: str) -> ChangeSet:
    """A zone's failure or return is one event that names its cells, not one per cell
    (the feed showed "cell_fail … +1 similar" for a zone)."""
    cells = [n.key for n in change.notes if n.type in ("cell_fail", "cell_restore")]
    change.notes = [n for n in change.notes if n.type not in ("cell_fail", "cell_restore")]
    change.notes.append(Note(note, zone, "", {"cells": cells}))
    return change


# -- instances and apps ------------------------------------------------------------------

def _crash(reader: ChaosReader, args: Mapping[str, Any], at: float) -> ChangeSet:
    guid, index = args["process_guid"], args["index"]
    row = next((r for r in reader.app_rows(guid)
                if r.index == index and r.presence == core.ORDINARY), None)
    if row is None:
        raise ChaosError(f"no instance {guid}.{index}", 404)
    if row.state not in (core.CLAIMED, core.RUNNING):
        raise ChaosError(f"{guid}.{index} is {row.state}: only a CLAIMED or RUNNING instance can crash")
    change = ChangeSet(at)
    crash_report(change, row, at)
    return change


def _scale(reader: ChaosReader, args: Mapping[str, Any], at: float) -> ChangeSet:
    guid = args["process_guid"]
    app = reader.app(guid)
    if app is None:
        raise ChaosError(f"no desired LRP {guid!r}", 404)
    _, change = lrp_update(app, {"instances": args["instances"]}, reader.app_rows(guid),
                           lambda cell_id: reader.reachable(cell_id, at), at)
    return change


def _desire(reader: ChaosReader, args: Mapping[str, Any], at: float) -> ChangeSet:
    change = ChangeSet(at)
    for spec in args["apps"]:
        app = desired_app(spec)
        if reader.app(app.process_guid) is not None:
            raise ChaosError(f"desired LRP {app.process_guid!r} already exists")
        existing = [r.index for r in reader.app_rows(app.process_guid) if r.presence == core.ORDINARY]
        change.merge(lrp_desire(app, existing, at))
    return change


# Each SimApp field a request may set, by the JSON type it must have: a value of another
# type is refused in the BBS's words before anything is built from it (a plan's desire
# without a process guid answered 500).
_APP_FIELD_TYPES: dict[str, str] = {
    "process_guid": "text", "domain": "text", "rootfs": "text", "epoch": "text",
    "instances": "integer", "memory_mb": "integer", "disk_mb": "integer", "tag": "integer",
    "start_delay_s": "number", "crash_probability": "number", "crash_after_s": "number",
    "placement_tags": "texts", "volume_drivers": "texts", "ports": "integers",
}


def _typed(kind: str, value: Any) -> bool:
    if kind == "text":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    item = "text" if kind == "texts" else "integer"
    return isinstance(value, (list, tuple)) and all(_typed(item, v) for v in value)


def app_spec_errors(spec: Any) -> list[str]:
    """The fields of a desired LRP's request that are missing or of the wrong type."""
    if not isinstance(spec, Mapping):
        return ["process_guid"]
    wrong = [name for name, kind in _APP_FIELD_TYPES.items() if name in spec and not _typed(kind, spec[name])]
    return ["process_guid", *wrong] if "process_guid" not in spec and "process_guid" not in wrong else wrong


def desired_app(spec: Mapping[str, Any]) -> SimApp:
    """A SimApp from request fields, refused with the BBS's words when invalid."""
    wrong = app_spec_errors(spec)
    if wrong:
        raise ChaosError(", ".join(f"Invalid field: {name}" for name in wrong))
    app = app_from_spec(dict(spec))
    errors = desired_lrp_errors(
        process_guid=app.process_guid, domain=app.domain, rootfs=app.rootfs,
        instances=app.instances, memory_mb=app.memory_mb, disk_mb=app.disk_mb,
    ) + simulation_errors(start_delay_s=app.start_delay_s,
                          crash_probability=app.crash_probability,
                          crash_after_s=app.crash_after_s)
    if errors:
        raise ChaosError(bbs_message(errors))
    return app


CELL = Param("cell", "cell", "cell")
ZONE = Param("zone", "zone", "AZ")

ACTIONS: dict[str, ChaosAction] = {a.name: a for a in (
    ChaosAction("cell_fail", "✗ Fail cell", (CELL,), "cell_fail",
                "{cell} failed: its presence lapses in 10-15 s", _fail),
    ChaosAction("cell_restore", "✓ Restore cell", (CELL,), "cell_restore", "{cell} restored",
                _restore),
    ChaosAction("cell_drain", "⇢ Drain cell", (CELL,), "cell_drain",
                "{cell} draining (evacuation)", _drain),
    ChaosAction("zone_fail", "✗ Fail AZ", (ZONE,), "zone_fail", "zone {zone} failed ({cells} cells)",
                _zone_fail),
    ChaosAction("zone_restore", "✓ Restore AZ", (ZONE,), "zone_restore",
                "zone {zone} restored ({cells} cells)", _zone_restore),
    ChaosAction("crash", "✗ Crash instance",
                (Param("process_guid", "app", "app"), Param("index", "index", "index")),
                "actual_lrp_crash", "{process_guid}.{index} crashed", _crash),
    ChaosAction("scale", "Scale",
                (Param("process_guid", "app", "app"), Param("instances", "count", "instances")),
                "desired_lrp_update", "{process_guid} scaled to {instances}", _scale),
    ChaosAction("desire_lrps", "Deploy", (Param("apps", "apps", "apps"),), "desired_lrp_desire",
                "deployed {count} apps", _desire, dashboard=False),
)}


def chaos_args(name: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Check an action's arguments (from JSON, a form or a scenario file) and return them
    typed; a ``ChaosError`` names the first bad one."""
    action = ACTIONS.get(name)
    if action is None:
        raise ChaosError(f"unknown action {name!r}; known: {', '.join(sorted(ACTIONS))}")
    allowed = {p.name for p in action.params}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ChaosError(f"Invalid field: {unknown[0]}")
    args: dict[str, Any] = {}
    for param in action.params:
        if param.name not in raw:
            raise ChaosError(f"Invalid field: {param.name}")
        args[param.name] = _value(param, raw[param.name])
    return args


def _value(param: Param, value: Any) -> Any:
    bad = ChaosError(f"Invalid field: {param.name}")
    if param.kind in ("count", "index"):
        digits = value.strip().lstrip("-") if isinstance(value, str) else ""
        if digits.isascii() and digits.isdigit() and len(value.strip()) <= 12:  # not "²"
            value = int(value.strip())
        if value is None or out_of_range("instances", value):  # bbs.md 1.6
            raise bad
        return value
    if param.kind == "apps":
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise bad
        return value
    if not isinstance(value, str) or not value.strip() or text_too_long("process_guid", value):
        raise bad
    return value.strip()


def chaos_change(reader: ChaosReader, name: str, args: Mapping[str, Any], at: float) -> ChangeSet:
    """The action's rule at ``at`` (arguments already checked by ``chaos_args``)."""
    return ACTIONS[name].rule(reader, args, at)
