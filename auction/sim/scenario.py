"""Building an in-memory cluster from a named scenario (dashboard.md C4).

The same file the database shell loads; the same seed gives the same placements. The
scenario's timeline becomes timed actions on the world's event heap.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from auction import scenarios
from auction.bbs import types as core
from auction.engine import AuctionConfig
from auction.scenarios import Scenario, ScenarioError
from auction.sim.memory import World, WorldError
from auction.sim.model import SimApp, SimCell, SimTask, app_from_spec, record_fields

_CELL_FIELDS = {f.name for f in fields(SimCell)} - {"presence_lost_at", "evacuating_since", "evacuation_synced_at"}
# What an Otto agent offers beyond Diego's dimensions (otto.md 4): the open auction runs
# beside the simulation, in its own processes, so the world keeps none of it.
_OTTO_CELL_FIELDS = {"cores", "docker_build", "hourly_cost", "speed"}
_TASK_FIELDS = {f.name for f in fields(SimTask)} - {"task"}


def auction_config(scenario: Scenario, base: AuctionConfig | None = None) -> AuctionConfig:
    """The scenario's auctioneer settings over ``base``, seeded with the scenario's seed.

    A caller's ``base`` keeps its strategy (a comparison pane runs its own on the
    scenario); the scenario's cap and weights still apply.
    """
    settings = dict(scenario.data.get("auction", {}))
    if base is not None:
        settings.pop("placement_strategy", None)
    return replace(base or AuctionConfig(), seed=scenario.seed, **settings)


def scenario_steps(data: Mapping[str, Any]) -> list[tuple[str, float, str, dict[str, Any]]]:
    """A scenario's timeline as (marker, at, action, registry arguments), in time order; the
    marker names the step in the memory store and in the database's audit trail alike."""
    out = []
    for position, (at, action, args) in enumerate(scenarios.timeline(dict(data))):
        if action == "desire_lrps":
            args = {"apps": scenarios.desired_lrps(args)}
        out.append((f"{position}:{action}@{at:g}", at, action, args))
    return out


def placement_modes(data: Mapping[str, Any], seed: int) -> dict[str, str]:
    """Each scenario task's placement mode (otto.md 9): its own ``placement_mode``, else
    the ``otto`` section's ``mode``: ``"all"``, or a fraction drawn per task with the
    scenario's seed; else ``diego``."""
    section = data.get("otto") or {}
    mode = section.get("mode", "off")
    draw = random.Random(f"{seed}:otto-mode")
    modes = {}
    for task in data.get("tasks", []):
        if "placement_mode" in task:
            modes[task["task_guid"]] = task["placement_mode"]
            continue
        otto = mode == "all" or (isinstance(mode, int | float) and not isinstance(mode, bool)
                                 and draw.random() < float(mode))
        modes[task["task_guid"]] = "otto" if otto else "diego"
    return modes


def world_from_scenario(scenario: Scenario | str, *, config: AuctionConfig | None = None,
                        seed: int | None = None) -> World:
    """A fresh world at sim time 0 holding the scenario; ``config`` overrides its settings
    (the comparison panes pass their strategy), ``seed`` its seed."""
    if isinstance(scenario, str):
        scenario = scenarios.load(scenario)
    if seed is not None:
        scenario = replace(scenario, seed=seed)
    data = scenario.data
    world = World(seed=scenario.seed, config=auction_config(scenario, config))
    name = scenario.name
    try:
        defaults = data.get("cell_defaults", {})
        for i, spec in enumerate(data["cells"]):
            merged = {**defaults, **spec}
            unknown = set(merged) - _CELL_FIELDS - _OTTO_CELL_FIELDS
            if unknown:
                raise ScenarioError(f"scenario {name}: cells[{i}]: unknown field {sorted(unknown)[0]}")
            world.add_cell(SimCell(**record_fields(SimCell, {k: v for k, v in merged.items()
                                                             if k in _CELL_FIELDS})))
        for domain in data.get("domains", []):
            world.upsert_domain(domain["name"], domain["ttl"])
        for spec in scenarios.desired_lrps(data):
            world.desire_lrp(_app(spec))
        modes = placement_modes(data, scenario.seed)
        for spec in data.get("tasks", []):
            world.desire_task(_task({**spec, "placement_mode": modes[spec["task_guid"]]}))
        for marker, at, action, args in scenario_steps(data):
            if action == "desire_lrps":
                for spec in args["apps"]:
                    _app(spec)  # refuse a bad app at load time, not at its instant
            world.schedule_action(at, action, marker=marker, **args)
    except WorldError as exc:
        raise ScenarioError(f"scenario {name}: {exc}") from None
    return world


def _app(spec: dict[str, Any]) -> SimApp:
    return app_from_spec(spec)


def _task(spec: dict[str, Any]) -> SimTask:
    task = core.Task(spec["task_guid"], core.PENDING, domain=spec.get("domain", ""))
    return SimTask(task, **record_fields(SimTask, {k: v for k, v in spec.items() if k in _TASK_FIELDS}))
