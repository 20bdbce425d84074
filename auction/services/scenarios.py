"""Loading a named scenario: wipe the live cluster and build the scenario's one."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from auction import scenarios
from auction.models import ActualLRP, Cell, DesiredLRP, Domain, Task, Zone
from auction.scenarios import ScenarioError
from auction.services.clock import clock_reset
from auction.services.domains import domain_upsert
from auction.services.errors import BBSError
from auction.services.lrps import desired_lrp_desire
from auction.services.tasks import task_desire


def cluster_is_empty() -> bool:
    return not (Cell.objects.exists() or DesiredLRP.objects.exists() or Task.objects.exists())


def scenario_load(name: str) -> scenarios.Scenario:
    """Replace the cluster with scenario ``name``; all or nothing."""
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
        try:
            for domain in data.get("domains", []):
                domain_upsert(domain["name"], domain["ttl"])
            for spec in data.get("desired_lrps", []):
                desired_lrp_desire(spec)
            for spec in data.get("tasks", []):
                task_desire(spec)
        except BBSError as exc:
            raise ScenarioError(f"scenario {name}: {exc.message}") from None
    return scenario


def _flat(exc: ValidationError) -> str:
    return "; ".join(f"{k}: {', '.join(v)}" for k, v in exc.message_dict.items())
