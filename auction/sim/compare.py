"""Strategy comparison (dashboard.md S1/S2): cloned worlds, one seed, one workload.

One base world is built from the scenario; each pane is a deep copy of it with its own
placement strategy, so every pane sees the same cells, apps, seed, chaos timeline and
clock, and only the choice among feasible cells differs (auction.md 8). Each pane runs
to the same sim instant and reports the run metrics of auction.md 9.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from auction import scenarios
from auction.engine import STRATEGIES, AuctionConfig, ObjectiveConfig, validate_objective
from auction.scenarios import Scenario, ScenarioError
from auction.sim.memory import World
from auction.sim.quality import QualitySample, RunMetrics, best_values, quality_sample, run_metrics
from auction.sim.scenario import world_from_scenario

MIN_PANES, MAX_PANES = 2, 4
MAX_UNTIL_S = 3600.0
#: What a pane can run: a strategy, or ``diego-go``, the diego strategy in Go-compatibility
#: mode (auction.md 2.1), so Diego as specified and Diego as the Go binary runs it can
#: stand side by side.
GO_ORDER_PANE = "diego-go"
PANE_KINDS: tuple[str, ...] = (*STRATEGIES, GO_ORDER_PANE)


class CompareError(ValueError):
    """A comparison request that cannot run (the message says why)."""


@dataclass(frozen=True, slots=True)
class PaneSpec:
    strategy: str
    starting_container_weight: float = 0.25
    bin_pack_first_fit_weight: float = 0.0
    objective: ObjectiveConfig = field(default_factory=ObjectiveConfig)
    go_compat: bool = False

    @property
    def kind(self) -> str:
        """The pane's name in a URL or a command line (``PANE_KINDS``)."""
        return GO_ORDER_PANE if self.go_compat and self.strategy == "diego" else self.strategy

    @property
    def label(self) -> str:
        return "diego (Go order)" if self.kind == GO_ORDER_PANE else self.strategy


def pane_spec(kind: str, *, starting_container_weight: float = 0.25,
              bin_pack_first_fit_weight: float = 0.0,
              objective: ObjectiveConfig | None = None) -> PaneSpec:
    """The spec of one pane kind; the diego weights apply to both diego panes."""
    objective = objective or ObjectiveConfig()
    if kind in ("diego", GO_ORDER_PANE):
        return PaneSpec("diego", starting_container_weight, bin_pack_first_fit_weight, objective,
                        go_compat=kind == GO_ORDER_PANE)
    return PaneSpec(kind, objective=objective)


@dataclass(slots=True)
class Pane:
    spec: PaneSpec
    world: World | None = None
    metrics: RunMetrics | None = None
    error: str = ""
    #: The cluster's spread at evenly spaced instants, when ``compare(samples=...)`` asks.
    series: list[QualitySample] = field(default_factory=list)


@dataclass(slots=True)
class Comparison:
    scenario: Scenario
    seed: int
    until: float
    panes: list[Pane]
    best: dict[str, float]

    def is_best(self, pane: Pane, name: str) -> bool:
        return (pane.metrics is not None and len([p for p in self.panes if p.metrics]) > 1
                and math.isclose(pane.metrics.value(name), self.best[name], rel_tol=1e-12, abs_tol=1e-12))


def parse_strategies(values: Sequence[str]) -> list[str]:
    """``["diego,dea", "random"]`` → ``["diego", "dea", "random"]``: 2-4 known, distinct."""
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    unknown = [n for n in names if n not in PANE_KINDS]
    if unknown:
        raise CompareError(f"unknown strategy {unknown[0]!r}; known: {', '.join(PANE_KINDS)}")
    names = list(dict.fromkeys(names))
    if not MIN_PANES <= len(names) <= MAX_PANES:
        raise CompareError(f"choose {MIN_PANES} to {MAX_PANES} strategies, got {len(names)}")
    return names


def pane_config(base: AuctionConfig, spec: PaneSpec) -> AuctionConfig:
    """The pane's auctioneer settings; raises ``ValueError`` ("invalid objective: ...",
    "invalid weight: ...") for settings the strategy refuses."""
    for name in ("starting_container_weight", "bin_pack_first_fit_weight"):
        value = getattr(spec, name)
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"invalid weight: {name} must be finite and >= 0")
    if spec.strategy == "objective":
        validate_objective(spec.objective)
    return replace(base, placement_strategy=spec.strategy,
                   starting_container_weight=spec.starting_container_weight,
                   bin_pack_first_fit_weight=spec.bin_pack_first_fit_weight,
                   objective=spec.objective, go_compat=spec.go_compat)


def sample_instants(until: float, samples: int) -> list[float]:
    """``samples`` evenly spaced instants after 0 up to ``until``, and 0 itself."""
    if samples <= 0:
        return []
    if until <= 0:
        return [0.0]
    return [until if i == samples else until * i / samples for i in range(samples + 1)]


def compare(scenario: Scenario | str, specs: Sequence[PaneSpec], *, seed: int | None = None,
            until: float = 60.0, samples: int = 0) -> Comparison:
    """Run every pane to ``until``. With ``samples`` > 0 each pane stops at
    ``sample_instants`` on the way to record its spread (the driver is event-driven, so
    stopping changes nothing the run does: tests/report check the metrics are equal)."""
    if not MIN_PANES <= len(specs) <= MAX_PANES:
        raise CompareError(f"choose {MIN_PANES} to {MAX_PANES} strategies, got {len(specs)}")
    if not math.isfinite(until) or not 0 <= until <= MAX_UNTIL_S:
        raise CompareError(f"sim time must be between 0 and {MAX_UNTIL_S:g} s")
    try:
        base = world_from_scenario(scenario, seed=seed)
    except ScenarioError as exc:
        raise CompareError(str(exc)) from None
    loaded = scenario if isinstance(scenario, Scenario) else None
    panes: list[Pane] = []
    for spec in specs:
        try:
            config = pane_config(base.config, spec)
        except ValueError as exc:
            panes.append(Pane(spec, error=str(exc)))
            continue
        world = base.clone(config=config)
        series: list[QualitySample] = []
        for at in sample_instants(until, samples):
            world.run_until(at)
            series.append(quality_sample(world))
        world.run_until(until)
        panes.append(Pane(spec, world, run_metrics(world), series=series))

    loaded = loaded or scenarios.load(str(scenario))
    best = best_values([p.metrics for p in panes if p.metrics is not None])
    return Comparison(loaded, base.seed, until, panes, best)


METRIC_ROWS: tuple[tuple[str, str], ...] = (
    ("placed", "instances placed"),
    ("distribution_final", "distribution score (initial → final, ideal 0)"),
    ("worst_skew", "zone skew (worst app)"),
    ("apps_skew_over_one", "apps with zone skew > 1"),
    ("failures", "failed placements"),
    ("wait_mean", "wait (min / mean / max, sim s)"),
    ("attempts_mean", "attempts (mean / max)"),
    ("communications", "communications"),
)


def metric_text(m: RunMetrics, name: str) -> str:
    """The cell text of one metric (the same in the page and the command's table)."""
    if name == "placed":
        return f"{m.placed} placed, {m.unplaced} unplaced"
    if name == "distribution_final":
        return f"{m.distribution_initial:.3f} → {m.distribution_final:.3f}"
    if name == "worst_skew":
        return f"{m.worst_skew} ({m.worst_app})" if m.worst_app else "0"
    if name == "failures":
        reasons = "; ".join(f"{n}x {e or '(rejected at commit)'}" for e, n in m.failures_by_error.items())
        return f"{m.failures}" + (f": {reasons}" if reasons else "")
    if name == "wait_mean":
        return f"{m.wait['min']:.1f} / {m.wait['mean']:.1f} / {m.wait['max']:.1f}"
    if name == "attempts_mean":
        return f"{m.attempts['mean']:.2f} / {m.attempts['max']:.0f}"
    return str(int(m.value(name)))
