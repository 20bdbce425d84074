"""Named, seeded scenarios as data files (dashboard.md C4): reading and checking them.

Pure (no Django): the database shell (``auction.services.scenarios``) and the in-memory
cluster (``auction.sim.scenario``) load the same files. Besides explicit lists a file may
hold ``lrp_groups`` (many alike apps: ``{"prefix": "app-", "count": 200, "width": 3,
...app fields}`` gives app-001 ... app-200), an ``auction`` block (the auctioneer's
settings, e.g. the in-flight cap) and a ``timeline`` of timed chaos and deploys
(``{"at": 60, "action": "zone_fail", "zone": "z3"}``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from auction.sim.chaos import ACTIONS as CHAOS
from auction.sim.chaos import ChaosError, chaos_args

# A scenario is a few hundred lines; a file this large is a mistake (or garbage).
MAX_FILE_BYTES = 16 * 2**20


class ScenarioError(ValueError):
    """A scenario file is missing or malformed; the message names the field."""


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    title: str
    description: str
    seed: int
    data: dict[str, Any]


_TOP = {
    "name": str, "title": str, "description": str, "seed": int, "zones": list,
    "cell_defaults": dict, "cells": list, "domains": list, "desired_lrps": list, "tasks": list,
    "otto": dict,
    "lrp_groups": list, "auction": dict, "timeline": list, "watch": str,
}
_AUCTION = {
    "starting_container_weight": (int, float), "bin_pack_first_fit_weight": (int, float),
    "starting_container_count_maximum": int, "locality_offset": int, "placement_strategy": str,
    "go_compat": bool,
}
_GROUP_KEYS = {"prefix": str, "count": int, "first": int, "width": int}
# A timeline step names an action of the chaos registry (auction.sim.chaos); a deploy
# (desire_lrps) is written with the file's own app lists.
DEPLOY = {"desired_lrps": list, "lrp_groups": list}
_REQUIRED_TOP = ("name", "zones", "cells")
_CELL = {
    "cell_id": str, "zone": str, "index": int, "memory_mb": int, "disk_mb": int,
    "containers": int, "preloaded_rootfses": list, "rootfs_providers": list,
    "volume_drivers": list, "placement_tags": list, "optional_placement_tags": list,
    "proxy_memory_mb": int, "state": str,
    "cores": int, "docker_build": bool, "hourly_cost": (int, float), "speed": (int, float),
}
_DOMAIN = {"name": str, "ttl": (int, float)}


def available() -> list[str]:
    folder = resources.files(__package__)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def is_path(name: str) -> bool:
    """A scenario given as a file (``./mine.json``, ``/tmp/x.json``) rather than by name."""
    return name.endswith(".json") or "/" in name


def _read(name: str) -> str:
    """The file's text; every way a file can be unreadable is one ScenarioError line."""
    try:
        if is_path(name):
            raw = Path(name).read_bytes()
        elif name in available():
            raw = resources.files(__package__).joinpath(f"{name}.json").read_bytes()
        else:
            raise ScenarioError(f"unknown scenario {name!r}; known: {', '.join(available())}")
    except OSError as exc:
        raise ScenarioError(f"scenario {name}: cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ScenarioError(f"scenario {name}: file larger than {MAX_FILE_BYTES // 2**20} MiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"scenario {name}: not UTF-8 text (byte {exc.start})") from None


def load(name: str) -> Scenario:
    """A scenario by name (a file of this package) or by path; ScenarioError, one line,
    for anything wrong with it (dashboard.md C9)."""
    text = _read(name)
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise ScenarioError(f"scenario {name}: not valid JSON: {str(exc).splitlines()[0]}") from None
    check(data, where=f"scenario {name}")
    return Scenario(
        name=data["name"], title=data.get("title", data["name"]),
        description=data.get("description", ""), seed=data.get("seed", 0), data=data,
    )


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_object(obj: Any, shape: dict[str, Any], where: str, required: tuple[str, ...]) -> None:
    if not isinstance(obj, dict):
        raise ScenarioError(f"{where}: expected an object")
    for key in required:
        if key not in obj:
            raise ScenarioError(f"{where}.{key}: missing")
    for key, value in obj.items():
        if key not in shape:
            raise ScenarioError(f"{where}.{key}: unknown field")
        expected = shape[key]
        if isinstance(value, bool) and expected is not bool:
            raise ScenarioError(f"{where}.{key}: wrong type")
        if not isinstance(value, expected):
            raise ScenarioError(f"{where}.{key}: wrong type")


def check(data: Any, where: str) -> None:
    """Structural checks; field values are then checked by the services that apply them."""
    _check_object(data, _TOP, where, _REQUIRED_TOP)
    zones = data["zones"]
    if not zones or not all(isinstance(z, str) and z for z in zones):
        raise ScenarioError(f"{where}.zones: expected a non-empty list of names")
    for i, cell in enumerate(data["cells"]):
        _check_object(cell, _CELL, f"{where}.cells[{i}]", ("cell_id", "zone"))
        if cell["zone"] not in zones:
            raise ScenarioError(f"{where}.cells[{i}].zone: {cell['zone']!r} is not in zones")
    for i, domain in enumerate(data.get("domains", [])):
        _check_object(domain, _DOMAIN, f"{where}.domains[{i}]", ("name", "ttl"))
    for key, ident in (("desired_lrps", "process_guid"), ("tasks", "task_guid")):
        for i, item in enumerate(data.get(key, [])):
            if not isinstance(item, dict) or ident not in item:
                raise ScenarioError(f"{where}.{key}[{i}].{ident}: missing")
    _check_groups(data.get("lrp_groups", []), f"{where}.lrp_groups")
    if "auction" in data:
        _check_object(data["auction"], _AUCTION, f"{where}.auction", ())
    for i, step in enumerate(data.get("timeline", [])):
        at = f"{where}.timeline[{i}]"
        if not isinstance(step, dict):
            raise ScenarioError(f"{at}: expected an object")
        action = step.get("action")
        if action not in CHAOS:
            raise ScenarioError(f"{at}.action: expected one of {', '.join(sorted(CHAOS))}")
        when = step.get("at")
        if isinstance(when, bool) or not isinstance(when, (int, float)) or when < 0:
            raise ScenarioError(f"{at}.at: expected sim seconds >= 0")
        args = {k: v for k, v in step.items() if k not in ("at", "action")}
        if action == "desire_lrps":
            _check_object(args, DEPLOY, at, ())
            _check_groups(args.get("lrp_groups", []), f"{at}.lrp_groups")
            continue
        try:
            chaos_args(action, args)
        except ChaosError as exc:
            raise ScenarioError(f"{at}: {exc.message}") from None


def _check_groups(groups: list[Any], where: str) -> None:
    for i, group in enumerate(groups):
        if not isinstance(group, dict):
            raise ScenarioError(f"{where}[{i}]: expected an object")
        for key in ("prefix", "count"):
            if key not in group:
                raise ScenarioError(f"{where}[{i}].{key}: missing")
        for key, kind in _GROUP_KEYS.items():
            if key in group and (isinstance(group[key], bool) or not isinstance(group[key], kind)):
                raise ScenarioError(f"{where}[{i}].{key}: wrong type")
        if group["count"] < 0 or group["count"] > 100_000:
            raise ScenarioError(f"{where}[{i}].count: expected 0 to 100000")


def desired_lrps(block: dict[str, Any]) -> list[dict[str, Any]]:
    """The explicit ``desired_lrps`` then each ``lrp_groups`` entry expanded, in order."""
    specs = [dict(spec) for spec in block.get("desired_lrps", [])]
    for group in block.get("lrp_groups", []):
        template = {k: v for k, v in group.items() if k not in _GROUP_KEYS}
        first, width = group.get("first", 1), group.get("width", 0)
        for n in range(first, first + group["count"]):
            specs.append({**template, "process_guid": f"{group['prefix']}{n:0{width}d}"})
    return specs


def timeline(data: dict[str, Any]) -> list[tuple[float, str, dict[str, Any]]]:
    """The timed actions, in time order (equal times keep file order)."""
    steps = [(float(step["at"]), step["action"], {k: v for k, v in step.items() if k not in ("at", "action")})
             for step in data.get("timeline", [])]
    return sorted(steps, key=lambda s: s[0])
