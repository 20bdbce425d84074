"""A scenario's ``otto`` section (otto.md 9): mode, duration, knobs, capabilities, timed events.

    "otto": {"mode": "off" | "all" | 0.0-1.0, "duration_s": 5,
             "orchestrators": {"<clientId>": {knob: value}}, "elastic": true,
             "capabilities": {"<task_guid>": {...}}, "disable_elastic_at": 120}
"""

from __future__ import annotations

from typing import Any

from auction.models import OttoAuction, OttoMarket, OttoOrchestrator, OttoTaskCapabilities
from auction.otto import lifecycle
from auction.scenarios import ScenarioError
from auction.services.otto.routing import otto_task_capabilities_set
from auction.services.otto_orchestrators import ELASTIC_ID, otto_roster_sync

_KEYS = {"mode", "duration_s", "orchestrators", "elastic", "capabilities", "disable_elastic_at"}


def otto_scenario_prepare(data: dict[str, Any], seed: int = 0) -> None:
    """Reset the Otto rows and apply the section before the scenario's tasks are desired."""
    OttoAuction.objects.all().delete()
    OttoOrchestrator.objects.all().delete()
    OttoTaskCapabilities.objects.all().delete()
    OttoMarket.objects.all().delete()
    section = data.get("otto")
    if not section:
        return
    unknown = set(section) - _KEYS
    if unknown:
        raise ScenarioError(f"otto.{sorted(unknown)[0]}: unknown field")
    try:
        lifecycle.check_duration(float(section.get("duration_s", lifecycle.DEFAULT_DURATION_S)))
    except (lifecycle.LifecycleError, TypeError, ValueError) as exc:
        raise ScenarioError(f"otto.duration_s: {exc}") from None
    for guid, asked in section.get("capabilities", {}).items():
        try:
            otto_task_capabilities_set(guid, asked)
        except ValueError as exc:
            raise ScenarioError(f"otto.capabilities.{guid}: {exc}") from None
    knobs = dict(section.get("orchestrators", {}))
    if "disable_elastic_at" in section:
        knobs.setdefault(ELASTIC_ID, {})["disable_at"] = float(section["disable_elastic_at"])
    otto_roster_sync(knobs, elastic=bool(section.get("elastic", True)))
    OttoMarket.objects.update_or_create(pk=1, defaults={
        "duration_s": float(section.get("duration_s", lifecycle.DEFAULT_DURATION_S))})


def otto_duration() -> float:
    """The auction duration the loaded scenario asks for (5 sim-s by default)."""
    value = OttoMarket.objects.filter(pk=1).values_list("duration_s", flat=True).first()
    return float(value) if value is not None else lifecycle.DEFAULT_DURATION_S
