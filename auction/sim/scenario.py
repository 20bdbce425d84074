"""Building an in-memory cluster from a named scenario (dashboard.md C4).

The same file the database shell loads; the same seed gives the same placements. The
scenario's timeline becomes timed actions on the world's event heap.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from auction import scenarios
from auction.bbs import types as core
from auction.engine import AuctionConfig
from auction.scenarios import Scenario, ScenarioError
from auction.sim.world import SimApp, SimCell, SimTask, World, WorldError, app_from_spec

_CELL_FIELDS = {f.name for f in fields(SimCell)} - {"presence_lost_at", "evacuating_since", "evacuation_synced_at"}
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
            unknown = set(merged) - _CELL_FIELDS
            if unknown:
                raise ScenarioError(f"scenario {name}: cells[{i}]: unknown field {sorted(unknown)[0]}")
            world.add_cell(SimCell(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in merged.items()}))
        for domain in data.get("domains", []):
            world.upsert_domain(domain["name"], domain["ttl"])
        for spec in scenarios.desired_lrps(data):
            world.desire_lrp(_app(spec))
        for spec in data.get("tasks", []):
            world.desire_task(_task(spec))
        for at, action, args in scenarios.timeline(data):
            if action == "desire_lrps":
                args = {"apps": scenarios.desired_lrps(args)}
                for spec in args["apps"]:
                    _app(spec)  # refuse a bad app at load time, not at its instant
            world.schedule_action(at, action, **args)
    except WorldError as exc:
        raise ScenarioError(f"scenario {name}: {exc}") from None
    return world


def _app(spec: dict[str, Any]) -> SimApp:
    return app_from_spec(spec)


def _task(spec: dict[str, Any]) -> SimTask:
    task = core.Task(spec["task_guid"], core.PENDING, domain=spec.get("domain", ""))
    return SimTask(task, **{k: (tuple(v) if isinstance(v, list) else v)
                            for k, v in spec.items() if k in _TASK_FIELDS})
