"""The strategy comparison page (dashboard.md S1/S2): 2-4 panes, cloned in-memory worlds.

Everything the page shows follows from its URL (strategies, scenario, seed, sim time,
weights, objective), so a reload or a shared link replays the same comparison: the
worlds are seeded and rebuilt per request, never kept on the server.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict, defaultdict
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from auction import scenarios
from auction.bbs import types as core
from auction.engine import ObjectiveConfig
from auction.report import comparison_report
from auction.selectors.clock import clock_view
from auction.selectors.palette import app_colour, app_pattern
from auction.sim.clock import format_sim_time
from auction.sim.compare import (
    METRIC_ROWS,
    PANE_KINDS,
    CompareError,
    Comparison,
    Pane,
    PaneSpec,
    compare,
    metric_text,
    pane_spec,
    parse_strategies,
)
from auction.sim.memory import World
from auction.sim.quality import unplaced_by_reason

DEFAULT_STRATEGIES = ("diego", "dea", "objective", "random")
DEFAULT_SCENARIO = "cold-start"
TRAY_CHIPS = 20
STEPS = (10, 30, 60, 300)


def _number(request: HttpRequest, name: str, default: float) -> float:
    raw = request.GET.get(name, "").strip()
    if raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise CompareError(f"{name}: expected a number, got {raw[:40]!r}") from None
    if not math.isfinite(value):
        raise CompareError(f"{name}: expected a finite number")
    return value


def _specs(request: HttpRequest, names: list[str]) -> list[PaneSpec]:
    defaults = ObjectiveConfig()
    objective = ObjectiveConfig(
        expression=request.GET.get("objective.f", defaults.expression)[:1000],
        alpha=_number(request, "objective.alpha", defaults.alpha),
        beta=_number(request, "objective.beta", defaults.beta),
        gamma=_number(request, "objective.gamma", defaults.gamma),
        delta=_number(request, "objective.delta", defaults.delta),
    )
    scw = _number(request, "diego.scw", 0.25)
    bpw = _number(request, "diego.bpw", 0.0)
    return [pane_spec(name, starting_container_weight=scw, bin_pack_first_fit_weight=bpw,
                      objective=objective) for name in names]


def _names(request: HttpRequest) -> list[str]:
    return parse_strategies(request.GET.getlist("strategies") or [",".join(DEFAULT_STRATEGIES)])


def _inputs(request: HttpRequest) -> tuple[str, list[PaneSpec], int | None, float]:
    """Scenario, panes, seed and sim time from the URL (``CompareError`` says what is wrong)."""
    params = request.GET
    names = _names(request)
    name = params.get("scenario", DEFAULT_SCENARIO)
    if name not in scenarios.available():
        raise CompareError(f"unknown scenario {name!r}; known: {', '.join(scenarios.available())}")
    seed_raw = params.get("seed", "").strip()
    digits = seed_raw.lstrip("-")
    if seed_raw and not (digits.isascii() and digits.isdigit()):  # "²".isdigit() too
        raise CompareError(f"seed: expected an integer, got {seed_raw[:40]!r}")
    seed = int(seed_raw) if seed_raw else None
    until = _number(request, "t", 60.0)
    return name, _specs(request, names), seed, until


def compare_report(request: HttpRequest) -> HttpResponse:
    """The comparison the same URL shows on ``/compare/``, as the report card (plans.md 4):
    a self-contained HTML attachment, byte-identical for the same inputs."""
    try:
        name, specs, seed, until = _inputs(request)
        html = comparison_report(name, specs, seed=seed, until=until)
    except CompareError as exc:
        return HttpResponse(f"{exc}\n", status=400, content_type="text/plain; charset=utf-8")
    digest = hashlib.sha256(html.encode("utf-8")).hexdigest()[:12]
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    kinds = "-".join(s.kind for s in specs)
    response["Content-Disposition"] = f'attachment; filename="report-{name}-{kinds}-{digest}.html"'
    return response


# The comparisons asked for lately, by their inputs. A presenter's move to /compare/ has
# the presenter, every follower and the kiosk ask for the same one at once (C5); the
# answer is deterministic for its inputs (built-in scenarios, fixed seed), so the first
# computes and the rest wait for it and share it. Comparisons are CPU-bound under one GIL:
# running them one at a time costs nobody anything.
_COMPARED: OrderedDict[tuple[Any, ...], Comparison] = OrderedDict()
_COMPARING = threading.Lock()
COMPARED_KEPT = 8


def _compared(name: str, specs: list[PaneSpec], seed: int | None, until: float) -> Comparison:
    key = (name, tuple(specs), seed, until)
    with _COMPARING:
        result = _COMPARED.get(key)
        if result is None:
            result = compare(name, specs, seed=seed, until=until)
            _COMPARED[key] = result
            while len(_COMPARED) > COMPARED_KEPT:
                _COMPARED.popitem(last=False)
        else:
            _COMPARED.move_to_end(key)
    return result


def compare_page(request: HttpRequest) -> HttpResponse:
    params = request.GET
    context: dict[str, Any] = {
        "page": "compare", "live_view": "compare", "clock": clock_view(), "all_strategies": PANE_KINDS,
        "scenarios": scenarios.available(), "objective_default": ObjectiveConfig(), "steps": STEPS,
    }
    status = 200
    try:
        context["chosen"] = _names(request)
        name, specs, seed, until = _inputs(request)
        result = _compared(name, specs, seed, until)
        context.update(_read_model(result, params))
    except CompareError as exc:
        context["error"] = str(exc)
        # The form shows what was ticked (five, say), so one can be unticked; defaults
        # only when nothing known was.
        ticked = [n for v in params.getlist("strategies") for n in v.split(",") if n.strip() in PANE_KINDS]
        context.setdefault("chosen", [n.strip() for n in ticked] or list(DEFAULT_STRATEGIES))
        status = 400
    context["form"] = {k: params.get(k, "") for k in (
        "scenario", "seed", "t", "diego.scw", "diego.bpw", "objective.f", "objective.alpha",
        "objective.beta", "objective.gamma", "objective.delta")}
    return render(request, "compare/page.html", context, status=status)


def _read_model(result: Comparison, params: Any) -> dict[str, Any]:
    base = params.copy()
    base.setlist("strategies", [",".join(p.spec.kind for p in result.panes)])

    def at(t: float) -> str:
        query = base.copy()
        query["t"] = f"{max(0.0, t):g}"
        return "?" + query.urlencode()

    report = base.copy()
    report["t"] = f"{result.until:g}"
    return {
        "cmp": result,
        "report_link": "?" + report.urlencode(),
        "now_text": format_sim_time(result.until),
        "step_links": [(f"+{s} s", at(result.until + s)) for s in STEPS],
        "reset_link": at(0),
        "panes": [_pane(result, p) for p in result.panes],
        # Two diego panes share one set of weights: the plain one shows the inputs.
        "plain_diego": any(p.spec.kind == "diego" for p in result.panes),
        "metric_rows": METRIC_ROWS,
        "watch": result.scenario.data.get("watch", ""),
    }


def _pane(result: Comparison, pane: Pane) -> dict[str, Any]:
    out: dict[str, Any] = {"strategy": pane.spec.strategy, "kind": pane.spec.kind,
                           "label": pane.spec.label, "spec": pane.spec, "error": pane.error}
    if pane.world is None or pane.metrics is None:
        return out
    out["metrics"] = [
        {"name": name, "label": label, "text": metric_text(pane.metrics, name),
         "best": name != "placed" and result.is_best(pane, name)}
        for name, label in METRIC_ROWS
    ]
    out["placed"] = pane.metrics.placed
    out["distribution"] = f"{pane.metrics.distribution_final:.6f}"
    out["zones"] = _grid(pane.world)
    out["tray"], out["unplaced"] = _tray(pane.world)
    return out


def _grid(world: World) -> list[dict[str, Any]]:
    """Dense rows (dashboard.md G8): one 8 px bar per cell, blocks at their share of memory."""
    apps = world.apps
    blocks: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in sorted(world.rows.values(), key=lambda r: (r.process_guid, r.index, r.presence)):
        if row.state == core.UNCLAIMED or row.cell_id not in world.cells:
            continue
        app = apps.get(row.process_guid)
        memory = app.memory_mb if app else 0
        blocks[row.cell_id].append({
            "ident": core.lrp_id(row.key), "state": row.state, "presence": row.presence,
            "pct": 100.0 * memory / world.cells[row.cell_id].memory_mb,
            "colour": app_colour(row.process_guid), "pattern": app_pattern(row.process_guid),
        })
    for sim_task in world.tasks.values():
        task = sim_task.task
        if task.state == core.TASK_RUNNING and task.cell_id in world.cells:
            blocks[task.cell_id].append({
                "ident": task.task_guid, "state": "TASK", "presence": "ORDINARY",
                "pct": 100.0 * sim_task.memory_mb / world.cells[task.cell_id].memory_mb,
                "colour": "#9aa4b2", "pattern": 0,
            })
    zones: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for cell in sorted(world.cells.values(), key=lambda c: (c.zone, c.index, c.cell_id)):
        cell_blocks = blocks.get(cell.cell_id, [])
        state = cell.state if cell.has_presence(world.now) or cell.state != "healthy" else "missing"
        zones[cell.zone].append({
            "cell_id": cell.cell_id, "state": state, "blocks": cell_blocks,
            "instances": sum(1 for b in cell_blocks if b["state"] != "TASK"),
            "reserved_pct": min(100.0, sum(b["pct"] for b in cell_blocks)),
        })
    return [{"name": z, "cells": cells} for z, cells in sorted(zones.items())]


def _tray(world: World) -> tuple[list[dict[str, Any]], int]:
    """Unplaced work by reason (dashboard.md G6), as ``unplaced_by_reason`` groups it."""
    tray = [{"reason": reason, "count": len(items), "chips": items[:TRAY_CHIPS],
             "more": max(0, len(items) - TRAY_CHIPS)} for reason, items in unplaced_by_reason(world)]
    return tray, sum(g["count"] for g in tray)
