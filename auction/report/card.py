"""What a report card shows (plans.md 4), as plain data built from simulated worlds.

``Card`` is one strategy's (or, later, one plan's) run: its cells with the instances on
them, its wait times, its spread over time, its failures and unplaced work and its
auction.md 9 metrics. ``Report`` is the cards plus the stamp (scenario, seed, config,
version). ``cards_from_comparison`` builds them from a strategy comparison; a plan can
build its own ``Card`` list from its worlds and call ``render_report`` the same way.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from auction.bbs import types as core
from auction.sim.compare import METRIC_ROWS, Comparison, Pane, PaneSpec
from auction.sim.memory import World
from auction.sim.quality import QualitySample, RunMetrics, unplaced_by_reason

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


@dataclass(frozen=True, slots=True)
class Block:
    """One container on a cell: an instance (``app`` is its process guid) or a task."""

    ident: str
    app: str
    memory_mb: int
    state: str
    presence: str = core.ORDINARY


@dataclass(frozen=True, slots=True)
class CellRow:
    cell_id: str
    zone: str
    memory_mb: int
    state: str
    blocks: tuple[Block, ...]

    @property
    def instances(self) -> int:
        return sum(1 for b in self.blocks if b.state != "TASK")

    @property
    def reserved_mb(self) -> int:
        return sum(b.memory_mb for b in self.blocks)


@dataclass(frozen=True, slots=True)
class Card:
    ident: str
    label: str
    params: tuple[tuple[str, str], ...]
    error: str = ""
    metrics: RunMetrics | None = None
    best: frozenset[str] = frozenset()
    cells: tuple[CellRow, ...] = ()
    waits: tuple[float, ...] = ()
    series: tuple[QualitySample, ...] = ()
    unplaced: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    title: str
    stamp: tuple[tuple[str, str], ...]
    until: float
    cards: tuple[Card, ...]
    metric_rows: tuple[tuple[str, str], ...] = field(default=METRIC_ROWS)
    # What a ★ means in the metrics table: among strategies, the best; in a plan's report,
    # where the plan does better than the baseline (which is no choice to star).
    best_note: str = "★ marks the best value across strategies (ties all marked)."


def project_version() -> str:
    """The version in pyproject.toml (the report's stamp; never the wall clock)."""
    try:
        with PYPROJECT.open("rb") as handle:
            return str(tomllib.load(handle)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def cell_rows(world: World) -> tuple[CellRow, ...]:
    """Every cell in zone order with the containers it holds, as the dense grid shows
    them (dashboard.md G8): instances that hold a container, then running tasks."""
    blocks: dict[str, list[Block]] = {}
    for row in sorted(world.rows.values(), key=lambda r: (r.process_guid, r.index, r.presence)):
        if row.state == core.UNCLAIMED or row.cell_id not in world.cells:
            continue
        app = world.apps.get(row.process_guid)
        blocks.setdefault(row.cell_id, []).append(Block(
            core.lrp_id(row.key), row.process_guid, app.memory_mb if app else 0, row.state, row.presence))
    for guid, sim_task in sorted(world.tasks.items()):
        task = sim_task.task
        if task.state == core.TASK_RUNNING and task.cell_id in world.cells:
            blocks.setdefault(task.cell_id, []).append(Block(guid, "", sim_task.memory_mb, "TASK"))
    out: list[CellRow] = []
    for cell in sorted(world.cells.values(), key=lambda c: (c.zone, c.index, c.cell_id)):
        state = cell.state if cell.has_presence(world.now) or cell.state != "healthy" else "missing"
        out.append(CellRow(cell.cell_id, cell.zone, cell.memory_mb, state,
                           tuple(blocks.get(cell.cell_id, ()))))
    return tuple(out)


def spec_params(spec: PaneSpec) -> tuple[tuple[str, str], ...]:
    """The strategy's parameters as the report stamps them on its card."""
    params: list[tuple[str, str]] = [("strategy", spec.strategy), ("go_compat", str(spec.go_compat).lower())]
    if spec.strategy == "diego":
        params += [("starting_container_weight", repr(spec.starting_container_weight)),
                   ("bin_pack_first_fit_weight", repr(spec.bin_pack_first_fit_weight))]
    elif spec.strategy == "objective":
        o = spec.objective
        params += [("objective f", o.expression), ("alpha", repr(o.alpha)), ("beta", repr(o.beta)),
                   ("gamma", repr(o.gamma)), ("delta", repr(o.delta))]
    return tuple(params)


def card_from_pane(comparison: Comparison, pane: Pane) -> Card:
    params = spec_params(pane.spec)
    if pane.world is None or pane.metrics is None:
        return Card(pane.spec.kind, pane.spec.label, params, error=pane.error or "did not run")
    world = pane.world
    best = frozenset(name for name, _ in METRIC_ROWS
                     if name != "placed" and comparison.is_best(pane, name))
    return Card(
        ident=pane.spec.kind, label=pane.spec.label, params=params, metrics=pane.metrics, best=best,
        cells=cell_rows(world), waits=tuple(world.waits), series=tuple(pane.series),
        unplaced=tuple((reason, tuple(items)) for reason, items in unplaced_by_reason(world)),
    )


def report_from_comparison(comparison: Comparison, *, version: str | None = None) -> Report:
    scenario = comparison.scenario
    base = next((p.world for p in comparison.panes if p.world is not None), None)
    stamp: list[tuple[str, str]] = [
        ("scenario", f"{scenario.name}: {scenario.title}" if scenario.title else scenario.name),
        ("seed", str(comparison.seed)),
        ("sim time", f"0 to {comparison.until:g} s"),
        ("strategies", ", ".join(p.spec.label for p in comparison.panes)),
    ]
    if base is not None:
        zones = sorted({c.zone for c in base.cells.values()})
        stamp.append(("cluster", f"{len(base.cells)} cells in {len(zones)} zones ({', '.join(zones)}), "
                                  f"{len(base.apps)} apps, {len(base.tasks)} tasks"))
        config = base.config
        stamp.append(("config", f"starting_container_count_maximum={config.starting_container_count_maximum}, "
                                f"locality_offset={config.locality_offset}, "
                                f"convergence every {base.convergence_interval_s:g} s"))
    stamp.append(("diego-web", version if version is not None else project_version()))
    return Report(
        title=f"Report card: {scenario.name}, seed {comparison.seed}",
        stamp=tuple(stamp), until=comparison.until,
        cards=tuple(card_from_pane(comparison, p) for p in comparison.panes),
    )
