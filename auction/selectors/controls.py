"""What the operator controls offer (dashboard.md C1, C2, C4): cells, zones, instances, apps, scenarios."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Sum

from auction import scenarios
from auction.bbs.validation import out_of_range
from auction.models import ActualLRP, Cell, DesiredLRP, Zone
from auction.selectors.auction_settings import auction_settings
from auction.selectors.clock import ClockView, clock_view
from auction.selectors.lrps import next_pass_at
from auction.selectors.timeline import NextEvent, next_scheduled_event
from auction.sim.chaos import ACTIONS, Param
from auction.sim.clock import MAX_SPEED
from auction.sim.lrps import scale_doubts

# dashboard.md C1: 0.25x to 16x, or "max" (the clock's ceiling).
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, MAX_SPEED)


@dataclass(slots=True)
class ChaosGroup:
    """Registry actions that take the same parameters: one form, one button each."""

    params: tuple[Param, ...]
    actions: list[tuple[str, str]]  # (name, label)


def chaos_groups() -> list[ChaosGroup]:
    """The dashboard's chaos forms, from the registry (``auction.sim.chaos``)."""
    groups: dict[tuple[Param, ...], ChaosGroup] = {}
    for action in ACTIONS.values():
        if action.dashboard:
            group = groups.setdefault(action.params, ChaosGroup(action.params, []))
            group.actions.append((action.name, action.label))
    return list(groups.values())


@dataclass(slots=True)
class ControlChoices:
    clock: ClockView
    next_event: NextEvent | None
    next_pass_at: float
    speeds: list[tuple[str, str]]
    cells: list[tuple[str, str, str]]  # cell id, zone, state
    zones: list[str]
    crashable: list[str]  # "<guid>.<index>" CLAIMED or RUNNING
    apps: list[tuple[str, int]]
    scenarios: list[str]
    go_compat: bool  # the auctioneer runs in Go order (auction.md 2.1)
    chaos: list[ChaosGroup] = field(default_factory=list)

    @property
    def crashable_compact(self) -> str:
        """The crashable instances as ``guid:0-3,5 guid2:0``: a live frame carries this (a
        few bytes an app), the page expands it into the instance field's suggestions."""
        by_app: dict[str, list[int]] = {}
        for ident in self.crashable:
            guid, _, index = ident.rpartition(".")
            by_app.setdefault(guid, []).append(int(index))
        parts = []
        for guid, indices in by_app.items():
            runs: list[str] = []
            start = prev = indices[0]
            for i in [*indices[1:], None]:
                if i is not None and i == prev + 1:
                    prev = i
                    continue
                runs.append(f"{start}" if start == prev else f"{start}-{prev}")
                if i is not None:
                    start = prev = i
            parts.append(f"{guid}:{','.join(runs)}")
        return " ".join(parts)

    @property
    def next_pass_in(self) -> float:
        return max(0.0, self.next_pass_at - self.clock.now)

    @property
    def speed_value(self) -> str:
        return "max" if self.clock.speed >= SPEEDS[-1] else f"{self.clock.speed:g}"


def control_choices() -> ControlChoices:
    view = clock_view()
    speeds = [("max" if s == SPEEDS[-1] else f"{s:g}", "max" if s == SPEEDS[-1] else f"{s:g}×") for s in SPEEDS]
    return ControlChoices(
        clock=view,
        next_event=next_scheduled_event(view.now),
        next_pass_at=next_pass_at(),
        speeds=speeds,
        cells=list(Cell.objects.order_by("zone__name", "index", "cell_id").values_list("cell_id", "zone__name", "state")),
        zones=list(Zone.objects.order_by("name").values_list("name", flat=True)),
        crashable=[f"{g}.{i}" for g, i in ActualLRP.objects.filter(
            presence=ActualLRP.Presence.ORDINARY,
            state__in=[ActualLRP.State.CLAIMED, ActualLRP.State.RUNNING]).order_by("desired_id", "index")
            .values_list("desired_id", "index")[:500]],
        apps=list(DesiredLRP.objects.order_by("process_guid").values_list("process_guid", "instances")),
        scenarios=scenarios.available(),
        go_compat=auction_settings().go_compat,
        chaos=chaos_groups(),
    )


def scale_question(process_guid: str, instances: str) -> str:
    """The dashboard's "scale anyway?" for this request, or "" (``sim.lrps.scale_doubts``)."""
    app = DesiredLRP.objects.filter(process_guid=process_guid).values("instances", "memory_mb").first()
    if (app is None or not (instances.isascii() and instances.isdigit())
            or out_of_range("instances", int(instances))):
        return ""  # nothing to ask: the service answers with the BBS's own error
    total = Cell.objects.exclude(state="failed").aggregate(m=Sum("memory_mb"))["m"] or 0
    return scale_doubts(app["instances"], int(instances), app["memory_mb"], total)

