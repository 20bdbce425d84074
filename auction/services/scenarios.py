"""Loading a named scenario: wipe the live cluster and build the scenario's one.

The load is the scenario's checkpoint: ``scenario_reset`` loads the last loaded scenario
again (dashboard.md C4 "reset to checkpoint"). Its timeline of timed chaos and deploys
fires from ``scenario_timeline_run``, called on every sim tick: each step once, at the
first tick at or after its instant, marked done by an audit entry (so a restart of the
worker never fires a step twice).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import OperationalError, transaction
from django.db.models import F

from auction import scenarios
from auction.models import (
    ActualLRP,
    AuditEntry,
    Cell,
    DesiredLRP,
    Domain,
    PendingWork,
    SimClock,
    Task,
    Zone,
)
from auction.scenarios import ScenarioError
from auction.selectors.clock import sim_now
from auction.services import cells as chaos
from auction.services.auction_settings import auction_settings_from_scenario
from auction.services.audit import audit_record
from auction.services.clock import clock_reset
from auction.services.domains import domain_upsert
from auction.services.errors import BBSError
from auction.services.lrps import desired_lrp_desire
from auction.services.otto_scenario import otto_scenario_prepare
from auction.services.tasks import task_desire


def cluster_is_empty() -> bool:
    return not (Cell.objects.exists() or DesiredLRP.objects.exists() or Task.objects.exists())


def scenario_load(name: str) -> scenarios.Scenario:
    """Replace the cluster with scenario ``name``; all or nothing.

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


def _scenario_load(name: str) -> scenarios.Scenario:
    scenario = scenarios.load(name)
    data = scenario.data
    with transaction.atomic():
        ActualLRP.objects.all().delete()
        DesiredLRP.objects.all().delete()
        Task.objects.all().delete()
        Domain.objects.all().delete()
        Cell.objects.all().delete()
        Zone.objects.all().delete()
        clock_reset(0.0)
        # A new epoch: the first pass 30 s after start (bbs.md 4.1), not at the old
        # cluster's next instant; the old cluster's queued start requests go with it.
        SimClock.objects.filter(pk=1).update(seed=scenario.seed, next_convergence_at=F("convergence_interval_s"),
                                             advanced_to=0.0)
        PendingWork.objects.all().delete()
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
            for spec in data.get("tasks", []):
                task_desire(spec, source="scenario")
        except BBSError as exc:
            raise ScenarioError(f"scenario {name}: {exc.message}") from None
        audit_record("scenario_checkpoint", name, 0.0, source="scenario", user=None, diff={"seed": [None, scenario.seed]})
    return scenario


def _last_load() -> AuditEntry | None:
    return AuditEntry.objects.filter(action="scenario_checkpoint").order_by("-id").first()


def scenario_reset() -> scenarios.Scenario:
    """Back to the checkpoint: the last loaded scenario, loaded again."""
    load = _last_load()
    if load is None:
        raise ScenarioError("no scenario has been loaded; nothing to reset to")
    return scenario_load(load.target)


def scenario_timeline_run(now: float | None = None) -> list[str]:
    """Fire the loaded scenario's timeline steps due at ``now``; return what fired."""
    load = _last_load()
    if load is None or load.target not in scenarios.available():
        return []
    scenario = scenarios.load(load.target)
    steps = scenarios.timeline(scenario.data)
    if not steps:
        return []
    now = sim_now() if now is None else now
    done = set(AuditEntry.objects.filter(action="scenario_step", pk__gt=load.pk).values_list("target", flat=True))
    fired: list[str] = []
    for i, (at, action, args) in enumerate(steps):
        marker = f"{scenario.name}#{i}"
        if at > now or marker in done:
            continue
        outcome = "done"
        try:
            with transaction.atomic():
                _step(action, args)
        except BBSError as exc:
            # A step the cluster refuses now (draining a failed cell, an operator already
            # desired that app) is recorded with its reason and not retried every tick.
            outcome = f"refused: {exc.message}"
        audit_record("scenario_step", marker, now, source="scenario", user=None,
                     diff={"action": [None, action], "at": [None, at], "outcome": [None, outcome]})
        fired.append(f"{action}@{at:g}" + ("" if outcome == "done" else f" ({outcome})"))
    return fired


def _step(action: str, args: dict) -> None:
    if action == "desire_lrps":
        for spec in scenarios.desired_lrps(args):
            desired_lrp_desire(spec, source="scenario")
        return
    if action == "crash":
        chaos.actual_lrp_crash(args["process_guid"], args["index"], source="scenario")
        return
    target = args.get("cell", args.get("zone"))
    getattr(chaos, action)(target, source="scenario")


def _flat(exc: ValidationError) -> str:
    return "; ".join(f"{k}: {', '.join(v)}" for k, v in exc.message_dict.items())
