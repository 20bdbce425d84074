"""Quality metrics of auction.md 9, per auction and per simulation run.

Per auction they come straight from the engine's ``quality`` functions. Per run (what
the comparison panes show, dashboard.md S2) they summarise a whole ``World``: the
distribution score of the first auction's fetch (initial) and of the cluster now
(final, with the ideal 0), zone skew of the cluster now, failures by reason, wait,
attempts and communications accumulated over every auction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, methodcaller
from typing import TYPE_CHECKING, Any

from auction.bbs import types as core
from auction.engine import (
    AuctionResult,
    CellState,
    LRPWork,
    ZoneSkew,
    communications,
    distribution_score,
    distribution_scores,
    failure_summary,
    memory_in_use,
    spread,
    wait_times,
    zone_skew,
)
from auction.engine.state import CellColumns, Holders

if TYPE_CHECKING:
    from auction.sim.memory import World


@dataclass(frozen=True, slots=True)
class AuctionStats:
    distribution_initial: float
    distribution_final: float
    worst_skew: int
    worst_app: str | None
    apps_skew_over_one: int
    failed: int
    failed_fraction: float
    failures_by_error: dict[str, int]
    wait: dict[str, float]
    attempts: dict[str, float]
    communications: int
    auctions_per_second: float


#: Up to this many apps in a batch, their zone counts are gathered app by app (one C
#: loop over the cells each, cheaper than a Python walk of every cell's apps).
FEW_GUIDS = 8
#: Up to this many apps in a batch, their counts are read from the store's index by app;
#: a zone failure's batch of thousands of apps is one walk of every cell's counts (a
#: tenth of the time).
HOLDERS_UP_TO = 64


def batch_zone_skew(cells: Sequence[CellState], result: AuctionResult,
                    holders: Holders | None = None, columns: CellColumns | None = None) -> ZoneSkew:
    """``zone_skew`` (auction.md 9) restricted to the apps of this batch: only their skew
    can change in this auction, and a 10,000-instance cluster would otherwise recount
    every app per auction. The run metrics report the whole cluster's skew. ``holders``
    reads an app's cells from the store's index instead of every cell's counts."""
    guids = {item.process_guid for item in result.items if type(item) is LRPWork}
    if columns is not None and columns.cells == cells:  # the caller's, made once
        zone_of, zones = columns.by_id()[1], columns.zones
    else:
        # Built in C: an auction of one restart on 1,000 cells should not walk them in Python.
        zone_of = dict(zip(map(_cell_id, cells), map(_zone, cells), strict=True))
        zones = sorted(set(zone_of.values()))
    if not guids or not zones:
        return ZoneSkew({}, None, 0, 0)
    if holders is not None and len(guids) <= HOLDERS_UP_TO:
        return _skew_of(_counts_by_holders(zone_of, guids, holders), zones, zone_of, result)
    counts: dict[str, Counter[str]] = {}
    helds: list[Mapping[str, int]] = [
        cell.lrp_counts if cell.lrp_counts is not None else Counter(cell.lrps) for cell in cells]
    cell_zones = [cell.zone for cell in cells]
    if len(guids) <= FEW_GUIDS:
        # A few apps (most auctions: a restart or two): each app's counts gathered over
        # every cell in one C loop, and only the cells that hold it walked.
        for guid in sorted(guids):
            gathered = list(map(methodcaller("get", guid, 0), helds))
            for zone, n in compress(zip(cell_zones, gathered, strict=True), gathered):
                per_zone = counts.get(guid)
                if per_zone is None:
                    per_zone = counts[guid] = Counter()
                per_zone[zone] += n
    else:
        for zone, held in zip(cell_zones, helds, strict=True):
            if len(guids) < len(held):
                for guid in guids:
                    n = held.get(guid)
                    if n:
                        per_zone = counts.get(guid)
                        if per_zone is None:
                            per_zone = counts[guid] = Counter()
                        per_zone[zone] += n
                continue
            for guid, n in held.items():
                if n and guid in guids:
                    per_zone = counts.get(guid)
                    if per_zone is None:
                        per_zone = counts[guid] = Counter()
                    per_zone[zone] += n
    return _skew_of(counts, zones, zone_of, result)


def _counts_by_holders(zone_of: Mapping[str, str], guids: set[str],
                       holders: Holders) -> dict[str, Counter[str]]:
    """The batch's apps counted per zone over the fetched cells from the store's index."""
    counts: dict[str, Counter[str]] = {}
    for guid in guids:
        for cell_id, n in holders(guid).items():
            zone = zone_of.get(cell_id)
            if zone is not None and n:
                per_zone = counts.get(guid)
                if per_zone is None:
                    per_zone = counts[guid] = Counter()
                per_zone[zone] += n
    return counts


_cell_id = attrgetter("cell_id")
_zone = attrgetter("zone")


def _skew_of(counts: dict[str, Counter[str]], zones: list[str], zone_of: Mapping[str, str],
             result: AuctionResult) -> ZoneSkew:
    """The fetched counts plus this auction's placements, as ``ZoneSkew``."""
    placed = result.placements
    # ``order`` names ``items`` one for one (``AuctionResult``): no identifier made per item.
    for ident, item in zip(result.order, result.items, strict=True):
        cell_id = placed.get(ident)
        if cell_id is not None and type(item) is LRPWork:
            per_zone = counts.get(item.process_guid)
            if per_zone is None:  # not ``setdefault``: a Counter made per item otherwise
                per_zone = counts[item.process_guid] = Counter()
            per_zone[zone_of[cell_id]] += 1
    # Each app's zone counts read in C (a Counter answers 0 for a zone it lacks).
    per_app = {g: max(map(c.__getitem__, zones)) - min(map(c.__getitem__, zones))
               for g, c in sorted(counts.items())}
    worst = max(per_app, key=lambda g: per_app[g], default=None)
    return ZoneSkew(per_app, worst, per_app[worst] if worst else 0, sum(1 for v in per_app.values() if v > 1))


def auction_stats(cells: Sequence[CellState], result: AuctionResult, queue_times: Mapping[str, float],
                  attempts: Mapping[str, int], now: float, *, wall_seconds: float,
                  holders: Holders | None = None, columns: CellColumns | None = None) -> AuctionStats:
    """``columns``: the caller's ``CellColumns`` of this fetch, if it keeps them."""
    skew = batch_zone_skew(cells, result, holders, columns)
    failures = failure_summary(result)
    items = len(result.placements) + len(result.failures)
    initial, final = distribution_scores(cells, result, columns)
    return AuctionStats(
        distribution_initial=initial, distribution_final=final,
        worst_skew=skew.worst_skew, worst_app=skew.worst_app, apps_skew_over_one=skew.apps_over_one,
        failed=failures.count, failed_fraction=failures.fraction, failures_by_error=failures.by_error,
        wait=wait_times(queue_times, result, now),
        attempts=spread(attempts[i] for i in result.order if i in attempts),
        communications=communications(result, len(cells)),
        auctions_per_second=items / wall_seconds if wall_seconds > 0 else 0.0,
    )


@dataclass(frozen=True, slots=True)
class RunMetrics:
    """One comparison pane's numbers (auction.md 9 over a run; dashboard.md S2)."""

    strategy: str
    placed: int
    unplaced: int
    distribution_initial: float
    distribution_final: float
    worst_skew: int
    worst_app: str | None
    apps_skew_over_one: int
    failures: int
    failures_by_error: dict[str, int]
    wait: dict[str, float]
    attempts: dict[str, float]
    communications: int
    auctions: int
    instances_per_cell: dict[str, int]

    # Lower is better for every compared metric; "placed" is the one higher-is-better.
    COMPARED = ("distribution_final", "worst_skew", "apps_skew_over_one", "failures",
                "wait_mean", "attempts_mean", "communications")

    def value(self, name: str) -> float:
        if name == "wait_mean":
            return self.wait["mean"]
        if name == "attempts_mean":
            return self.attempts["mean"]
        return float(getattr(self, name))

    def as_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy, "placed": self.placed, "unplaced": self.unplaced,
            "distribution_initial": self.distribution_initial,
            "distribution_final": self.distribution_final,
            "worst_skew": self.worst_skew, "worst_app": self.worst_app,
            "apps_skew_over_one": self.apps_skew_over_one, "failures": self.failures,
            "failures_by_error": dict(self.failures_by_error), "wait": dict(self.wait),
            "attempts": dict(self.attempts), "communications": self.communications,
            "auctions": self.auctions,
        }


def run_metrics(world: World) -> RunMetrics:
    """The run so far, measured over every cell the cluster has (failed ones included:
    their emptiness is part of the spread the strategy left)."""
    states = world.cell_states(sorted(world.cells.values(), key=lambda c: (c.zone, c.index, c.cell_id)))
    skew = zone_skew(states)
    placed = sum(1 for r in world.rows.values() if r.presence == "ORDINARY" and r.state in ("CLAIMED", "RUNNING"))
    unplaced = sum(1 for r in world.rows.values() if r.presence == "ORDINARY" and r.state == "UNCLAIMED")
    initial = world.initial_distribution if world.initial_distribution is not None else 0.0
    return RunMetrics(
        strategy=world.config.placement_strategy,
        placed=placed, unplaced=unplaced,
        distribution_initial=initial,
        distribution_final=distribution_score(memory_in_use(states)),
        worst_skew=skew.worst_skew, worst_app=skew.worst_app, apps_skew_over_one=skew.apps_over_one,
        failures=sum(world.failures_by_error.values()),
        failures_by_error=dict(sorted(world.failures_by_error.items())),
        wait=spread(world.waits), attempts=spread(world.attempts),
        communications=world.communications, auctions=len(world.auctions),
        instances_per_cell={s.cell_id: len(s.lrps) for s in states},
    )


@dataclass(frozen=True, slots=True)
class QualitySample:
    """The whole cluster's spread at one sim instant (plans.md 4: the report card's line
    plot): the distribution score and the worst zone skew as ``run_metrics`` measures them."""

    at: float
    distribution: float
    worst_skew: int


def quality_sample(world: World) -> QualitySample:
    states = world.cell_states(sorted(world.cells.values(), key=lambda c: (c.zone, c.index, c.cell_id)))
    return QualitySample(world.now, distribution_score(memory_in_use(states)), zone_skew(states).worst_skew)


def unplaced_by_reason(world: World) -> list[tuple[str, list[str]]]:
    """Unplaced work by reason (dashboard.md G6), reasons sorted: the exact placement
    error, "awaiting auction", or "back-off" (CRASHED, waiting for its restart); each
    with the instance ids or task guids in it, in guid order."""
    groups: dict[str, list[str]] = {}
    for row in sorted(world.rows.values(), key=lambda r: (r.process_guid, r.index)):
        if row.presence != core.ORDINARY:
            continue
        if row.state == core.UNCLAIMED:
            groups.setdefault(row.placement_error or "awaiting auction", []).append(core.lrp_id(row.key))
        elif row.state == core.CRASHED:
            groups.setdefault("back-off", []).append(core.lrp_id(row.key))
    for guid, sim_task in sorted(world.tasks.items()):
        if sim_task.task.state == core.PENDING:
            groups.setdefault(sim_task.task.rejection_reason or "awaiting auction", []).append(guid)
    return sorted(groups.items())


def best_values(metrics: Sequence[RunMetrics]) -> dict[str, float]:
    """The best (lowest) value of each compared metric across panes, for the icon."""
    return {name: min(m.value(name) for m in metrics) for name in RunMetrics.COMPARED} if metrics else {}
