"""What-if plan changes (plans.md 1): what a plan may change, checked, and applied.

Pure (no Django). A change is a dict ``{"action": name, ...fields, "at": sim-s}``;
``plan_changes`` checks a list with the chaos registry's rules and messages
(``auction.sim.chaos``), the BBS's cell checks and the auctioneer settings' checks, and
returns them typed (``Change``); ``parse_change`` and ``change_text`` are its one-line
text form. ``apply_change`` applies one to a world through the same rules the live
cluster runs; ``check_references`` refuses a list naming what the base does not hold.
Running a plan is ``auction.sim.plans``.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from auction.bbs.validation import bbs_message, cell_errors, storable_text, text_too_long
from auction.sim.auction_settings import FIELDS as SETTINGS_FIELDS
from auction.sim.auction_settings import auction_settings_errors
from auction.sim.chaos import ChaosError, chaos_args, chaos_change, desired_app
from auction.sim.lrps import lrp_remove
from auction.sim.memory import World
from auction.sim.model import SimCell

DEFAULT_HORIZON_S = 600.0
MAX_HORIZON_S = 3600.0
MAX_CHANGES = 100
MAX_ADDED_CELLS = 1000
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
