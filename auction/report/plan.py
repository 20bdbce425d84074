"""A plan's report card (plans.md 4): the plan and its baseline as two cards.

Built from the two worlds of ``auction.sim.plans.run_plan`` and written by the same
``render_report`` as a comparison: cells to scale, waits, spread over the plan's horizon
(sim-s after the base), unplaced work, the auction.md 9 metrics side by side with the
best marked. The stamp names the base, its instant, the changes, the horizon, the seed
and the auctioneer settings; nothing comes from the wall clock, so the same plan on the
same base gives the same bytes.
"""

from __future__ import annotations

import math

from auction.report.card import Card, Report, cell_rows, project_version
from auction.report.render import render_report
from auction.sim.compare import METRIC_ROWS
from auction.sim.memory import World
from auction.sim.plans import PlanRun
from auction.sim.quality import (
    QualitySample,
    RunMetrics,
    best_values,
    run_metrics,
    unplaced_by_reason,
)


def _card(ident: str, label: str, world: World, metrics: RunMetrics, series: list[QualitySample],
          start: float, params: tuple[tuple[str, str], ...], best: frozenset[str]) -> Card:
    return Card(
        ident=ident, label=label, params=params, metrics=metrics, best=best,
        cells=cell_rows(world), waits=tuple(world.waits),
        series=tuple(QualitySample(s.at - start, s.distribution, s.worst_skew) for s in series),
        unplaced=tuple((reason, tuple(items)) for reason, items in unplaced_by_reason(world)),
    )


def plan_report_card(run: PlanRun, *, base: str = "live", version: str | None = None) -> Report:
    plan_metrics, base_metrics = run_metrics(run.plan), run_metrics(run.baseline)
    best = best_values([plan_metrics, base_metrics])

    def better(m: RunMetrics) -> frozenset[str]:
        """The rows where the plan is strictly better than the baseline (lower): the
        baseline is no choice, so it is never starred, and a tie stars nothing."""
        return frozenset(name for name, _ in METRIC_ROWS if name != "placed"
                         and math.isclose(m.value(name), best[name], rel_tol=1e-12, abs_tol=1e-12)
                         and not math.isclose(base_metrics.value(name), best[name], rel_tol=1e-12,
                                              abs_tol=1e-12))

    changes = "; ".join(c.describe() for c in run.changes) or "none"
    config = run.plan.config
    params = (("changes", changes), ("strategy", config.placement_strategy),
              ("go_compat", str(config.go_compat).lower()))
    base_config = run.baseline.config
    base_params = (("changes", "none"), ("strategy", base_config.placement_strategy),
                   ("go_compat", str(base_config.go_compat).lower()))
    zones = sorted({c.zone for c in run.baseline.cells.values()})
    stamp = (
        ("base", f"{base} at sim {run.base_now:g} s"),
        ("changes", changes),
        ("horizon", f"{run.horizon:g} sim-s after the base"),
        ("seed", str(run.plan.seed)),
        ("cluster", f"{len(run.baseline.cells)} cells in {len(zones)} zones ({', '.join(zones)}), "
                    f"{len(run.baseline.apps)} apps, {len(run.baseline.tasks)} tasks"),
        ("config", f"starting_container_count_maximum={base_config.starting_container_count_maximum}, "
                   f"locality_offset={base_config.locality_offset}, "
                   f"convergence every {run.baseline.convergence_interval_s:g} s"),
        ("diego-web", version if version is not None else project_version()),
    )
    cards = (
        _card("plan", "Plan", run.plan, plan_metrics, run.plan_series, run.base_now, params, better(plan_metrics)),
        _card("baseline", "Baseline (no changes)", run.baseline, base_metrics, run.baseline_series,
              run.base_now, base_params, frozenset()),
    )
    return Report(title=f"Plan report: {changes} on {base}", stamp=stamp, until=run.horizon, cards=cards,
                  best_note="★ marks where the plan does better than the baseline.")


def plan_report(run: PlanRun, *, base: str = "live", version: str | None = None) -> str:
    """The plan's report card as one self-contained HTML file."""
    return render_report(plan_report_card(run, base=base, version=version))
