"""Loading a named scenario: wipe the live cluster and build the scenario's one.

The load is the scenario's checkpoint: ``scenario_reset`` loads the last loaded scenario
again (dashboard.md C4 "reset to checkpoint"). Its timeline of timed chaos and deploys is
part of the simulation (``auction.sim.driver``): each step fires once, at its own sim
instant, marked done by an audit entry (so a restart of the worker never fires a step
twice).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import OperationalError, transaction

from auction import scenarios
from auction.models import (
    Cell,
    DesiredLRP,
    SimClock,
    Task,
    Zone,
)
from auction.scenarios import ScenarioError
from auction.selectors.clock import clock_view
from auction.selectors.scenarios import loaded_scenario
from auction.services.auction_settings import auction_settings_from_scenario
from auction.services.audit import audit_record
from auction.services.clock import clock_reset, clock_resume
from auction.services.domains import domain_upsert
from auction.services.errors import BBSError
from auction.services.lrps import desired_lrp_desire
from auction.services.otto_scenario import otto_scenario_prepare
from auction.services.tasks import task_desire
from auction.services.world import cluster_empty, world_changed
from auction.sim.scenario import placement_modes


def cluster_is_empty() -> bool:
    return not (Cell.objects.exists() or DesiredLRP.objects.exists() or Task.objects.exists())


def scenario_load(name: str | scenarios.Scenario) -> scenarios.Scenario:
    """Replace the cluster with scenario ``name`` (or a scenario given whole); all or nothing.

    The wipe locks every row while the running simulation (a tick, an auction) may hold
    some: PostgreSQL then breaks a deadlock by aborting one side. The load is one
    transaction, so it is simply tried again.
    """
    for attempt in range(1, LOAD_ATTEMPTS + 1):
        try:
            return _scenario_load(name)
        except OperationalError as exc:
            if attempt == LOAD_ATTEMPTS or "deadlock" not in str(exc).lower():
                raise
    raise AssertionError("unreachable")


LOAD_ATTEMPTS = 3


def _scenario_load(chosen: str | scenarios.Scenario) -> scenarios.Scenario:
    scenario = scenarios.load(chosen) if isinstance(chosen, str) else chosen
    name = scenario.name
    data = scenario.data
    was_paused = clock_view().paused
    with transaction.atomic():
        cluster_empty()
        # Everything the scenario sets up happens at sim instant 0 exactly, as in memory:
        # the clock stands still while it loads.
        # A new epoch: the first pass 30 s after start (bbs.md 4.1), not at the old
        # cluster's next instant; the old cluster's queued start requests went with it
        # (``cluster_empty``).
        clock_reset(0.0, paused=True)
        SimClock.objects.filter(pk=1).update(seed=scenario.seed, origin_ns=0)
        zones = {name: Zone.objects.create(name=name) for name in data["zones"]}
        defaults = data.get("cell_defaults", {})
        for i, spec in enumerate(data["cells"]):
            fields = {**defaults, **spec, "zone": zones[spec["zone"]]}
            cell = Cell(**fields)
            try:
                cell.full_clean()
            except ValidationError as exc:
                raise ScenarioError(f"scenario {name}: cells[{i}]: {_flat(exc)}") from None
            cell.save()
        otto_scenario_prepare(data, scenario.seed)
        try:
            # The auctioneer's settings become the scenario's (inflight-cap's cap of 3).
            auction_settings_from_scenario(data.get("auction", {}))
            for domain in data.get("domains", []):
                domain_upsert(domain["name"], domain["ttl"], source="scenario")
            for spec in scenarios.desired_lrps(data):
                desired_lrp_desire(spec, source="scenario")
            modes = placement_modes(data, scenario.seed)
            for spec in data.get("tasks", []):
                task_desire({**spec, "placement_mode": modes[spec["task_guid"]]}, source="scenario")
        except BBSError as exc:
            raise ScenarioError(f"scenario {name}: {exc.message}") from None
        # The checkpoint keeps the scenario whole: its timeline runs from it, and a reset
        # reloads it, whether it shipped with the code or not.
        audit_record("scenario_checkpoint", name, 0.0, source="scenario", user=None,
                     diff={"seed": [None, scenario.seed], "scenario": scenario_document(scenario)})
        world_changed()  # every open page draws the new cluster
        if not was_paused:
            clock_resume()
    return scenario


def scenario_reset() -> scenarios.Scenario:
    """Back to the checkpoint: the last loaded scenario, loaded again."""
    loaded = loaded_scenario()
    if loaded is None:
        raise ScenarioError("no scenario has been loaded; nothing to reset to")
    return scenario_load(loaded)


def scenario_document(scenario: scenarios.Scenario) -> dict[str, Any]:
    return {"name": scenario.name, "title": scenario.title, "description": scenario.description,
            "seed": scenario.seed, "data": scenario.data}


def _flat(exc: ValidationError) -> str:
    return "; ".join(f"{k}: {', '.join(v)}" for k, v in exc.message_dict.items())
