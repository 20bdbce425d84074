"""Named, seeded scenarios as data files (dashboard.md C4): reading and checking them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any


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
}
_REQUIRED_TOP = ("name", "zones", "cells")
_CELL = {
    "cell_id": str, "zone": str, "index": int, "memory_mb": int, "disk_mb": int,
    "containers": int, "preloaded_rootfses": list, "rootfs_providers": list,
    "volume_drivers": list, "placement_tags": list, "optional_placement_tags": list,
    "proxy_memory_mb": int, "state": str,
}
_DOMAIN = {"name": str, "ttl": (int, float)}


def available() -> list[str]:
    folder = resources.files(__package__)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def load(name: str) -> Scenario:
    if name not in available():
        raise ScenarioError(f"unknown scenario {name!r}; known: {', '.join(available())}")
    text = resources.files(__package__).joinpath(f"{name}.json").read_text("utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"scenario {name}: not valid JSON: {exc}") from None
    check(data, where=f"scenario {name}")
    return Scenario(
        name=data["name"], title=data.get("title", data["name"]),
        description=data.get("description", ""), seed=data.get("seed", 0), data=data,
    )


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
