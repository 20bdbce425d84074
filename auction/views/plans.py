"""The /plans/ page (plans.md 1.5, 1.6, 2): compose a plan, read it against its baseline,
download its report card, apply it and watch the live cluster beside the prediction;
ask how many more of a shape fit. Thin: every decision is ``services.plans``'."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from auction.models import Plan
from auction.permissions import is_operator
from auction.selectors import auctions as auction_selectors
from auction.selectors.clock import clock_view, sim_now
from auction.services import plans as service
from auction.services.errors import BBSError, ResourceNotFound
from auction.services.store import DbStore
from auction.sim.plan_changes import (
    CHANGE_NAMES,
    DEFAULT_HORIZON_S,
    PlanError,
    change_text,
    parse_change,
)
from auction.views import auctions as auction_views

#: The change kinds the composer offers, with the fields each asks for (the chaos
#: controls' kinds: cell, zone, app, count; plain text and numbers otherwise).
COMPOSER = (
    ("fail_zone", "✗ Fail AZ", (("zone", "zone"),)),
    ("restore_zone", "✓ Restore AZ", (("zone", "zone"),)),
    ("fail_cell", "✗ Fail cell", (("cell_id", "cell"),)),
    ("restore_cell", "✓ Restore cell", (("cell_id", "cell"),)),
    ("drain_cell", "⇢ Drain cell", (("cell_id", "cell"),)),
    ("remove_cell", "Remove cell", (("cell_id", "cell"),)),
    ("scale", "Scale", (("process_guid", "app"), ("instances", "count"))),
    ("remove", "Remove app", (("process_guid", "app"),)),
    ("desire", "Desire app", (("process_guid", "text"), ("instances", "count"), ("memory_mb", "count"),
                              ("disk_mb", "count"))),
    ("add_cells", "Add cells", (("zone", "text"), ("count", "count"), ("memory_mb", "count"),
                                ("disk_mb", "count"), ("containers", "count"))),
    ("auction_config", "Auctioneer settings", (("placement_strategy", "text"),
                                               ("starting_container_weight", "text"),
                                               ("bin_pack_first_fit_weight", "text"))),
)
assert {name for name, _, _ in COMPOSER} == set(CHANGE_NAMES)


def _page(request: HttpRequest, context: dict[str, Any], status: int = 200) -> HttpResponse:
    return render(request, "plans/page.html", {
        "page": "plans", "live_view": "plans", "clock": clock_view(), "composer": COMPOSER, "can_plan": is_operator(request.user),
        "recent": Plan.objects.order_by("-id")[:10], "default_horizon": int(DEFAULT_HORIZON_S), **context},
        status=status)


def plans_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _create(request)
    return _page(request, {"changes_text": request.GET.get("changes", ""),
                           "horizon": request.GET.get("horizon", int(DEFAULT_HORIZON_S))})


def _create(request: HttpRequest) -> HttpResponse:
    text = request.POST.get("changes", "")
    horizon_text = request.POST.get("horizon", "").strip()
    context = {"changes_text": text, "horizon": horizon_text}
    if not is_operator(request.user):
        return _page(request, {**context, "error": "sign in as an operator to run plans"}, 403)
    try:
        changes = [parse_change(line) for line in text.splitlines() if line.strip()]
        horizon = float(horizon_text) if horizon_text else DEFAULT_HORIZON_S
    except PlanError as exc:
        return _page(request, {**context, "error": exc.message}, 400)
    except ValueError:
        return _page(request, {**context, "error": "Invalid field: horizon_s"}, 400)
    try:
        plan = service.plan_create({"base": request.POST.get("base") or "live", "changes": changes,
                                    "horizon_s": horizon}, user=request.user, source="dashboard")
    except BBSError as exc:
        return _page(request, {**context, "error": exc.message}, 400)
    return redirect("plan", plan_id=plan.pk)


def _plan(plan_id: int) -> Plan:
    try:
        return service.plan_get(plan_id)
    except ResourceNotFound as exc:
        raise Http404(exc.message) from None


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per app: running per zone in the plan and the baseline, changed apps first."""
    base = result["baseline"]["placed"]
    plan = result["placed"]
    zones = sorted({z for p in (plan, base) for by in p.values() for z in by})
    rows = []
    for guid in sorted(set(plan) | set(base)):
        cells = [(plan.get(guid, {}).get(z, 0), base.get(guid, {}).get(z, 0)) for z in zones]
        rows.append({"guid": guid, "cells": cells, "changed": any(a != b for a, b in cells),
                     "skew": result["zone_skew"].get(guid, 0)})
    rows.sort(key=lambda r: (not r["changed"], r["guid"]))
    return [{"zones": zones, **r} for r in rows]


#: The plan page lists this many of the plan's auctions (the result keeps every line).
AUCTION_ROWS = 50


def _auction_rows(plan: Plan, result: dict[str, Any]) -> list[dict[str, Any]]:
    """The plan's auctions in order, each with its replay link when its record is kept."""
    kept = auction_selectors.plan_auction_details(plan.pk)
    return [{**line, "number": n, "detail": kept.get(n),
             "replay": reverse("plan-auction", args=(plan.pk, n)) if n in kept else None}
            for n, line in enumerate(result.get("auctions", [])[:AUCTION_ROWS], 1)]


def _context(request: HttpRequest, plan: Plan) -> dict[str, Any]:
    result = plan.result
    context: dict[str, Any] = {"plan": plan, "can_plan": is_operator(request.user), "copy_query": urlencode(
        {"changes": "\n".join(change_text(c) for c in plan.changes), "horizon": f"{plan.horizon_s:g}"})}
    if result is not None:
        rows = _rows(result)
        context.update(result=result, rows=rows[:200], more_rows=max(len(rows) - 200, 0),
                       auction_rows=_auction_rows(plan, result),
                       auctions_total=result.get("auctions_total", len(result.get("auctions", []))),
                       zones=rows[0]["zones"] if rows else [],
                       zone_table=[(z, v, result["baseline"]["zones"].get(z, {}))
                                   for z, v in result["zones"].items()],
                       can_apply=(plan.base == "live" and plan.applied_at is None
                                  and all(not c.get("at") for c in plan.changes)))
        if plan.applied_at is not None:
            live = service.live_placed()
            # How far the live cluster has been handled (the beat moves it with the clock).
            elapsed = max(sim_now(), DbStore().now) - (plan.applied_sim or 0.0)
            context["beside"] = [{"guid": r["guid"], "cells": [
                (result["placed"].get(r["guid"], {}).get(z, 0), live.get(r["guid"], {}).get(z, 0))
                for z in r["zones"]]} for r in rows[:200]]
            context["elapsed"] = elapsed
            context["matches"] = all(result["placed"].get(g, {}) == live.get(g, {}) for g in result["placed"])
    return context


def plan_page(request: HttpRequest, plan_id: int) -> HttpResponse:
    try:
        plan = service.plan_get(plan_id)
    except ResourceNotFound as exc:
        # The plans page, saying so: an expired plan's bookmark still leads somewhere.
        return _page(request, {"error": exc.message, "horizon": int(DEFAULT_HORIZON_S)}, 404)
    context = _context(request, plan)
    template = "plans/result.html" if request.headers.get("HX-Request") == "true" else "plans/plan.html"
    return render(request, template, {"page": "plans", "live_view": "plans", "live_query": f"&plan={plan.pk}",
                                      "clock": clock_view(), **context})


def _plan_auction(plan_id: int, number: int) -> tuple[Plan, Any]:
    plan = _plan(plan_id)
    run = auction_selectors.plan_auction_get(plan.pk, number)
    if run is None:
        raise Http404(f"plan {plan_id} kept no auction {number}")
    return plan, run


def plan_auction(request: HttpRequest, plan_id: int, number: int) -> HttpResponse:
    """One auction the plan ran, in the live auctions' own replay (plans.md 1.7)."""
    plan, run = _plan_auction(plan_id, number)
    total = (plan.result or {}).get("auctions_total", len((plan.result or {}).get("auctions") or ()))
    return auction_views.replay_page(
        request, run, {"replay": reverse("plan-auction", args=(plan.pk, number)),
                       "cells": reverse("plan-auction-cells", args=(plan.pk, number))},
        prediction={"plan_id": plan.pk, "number": number, "total": total, "base": plan.base,
                    "full": ((plan.result or {}).get("replays") or {}).get("full_limit"),
                    "plan_url": reverse("plan", args=(plan.pk,))})


def plan_auction_cells(request: HttpRequest, plan_id: int, number: int) -> HttpResponse:
    plan, run = _plan_auction(plan_id, number)
    return auction_views.cells_page(request, run, reverse("plan-auction-cells", args=(plan.pk, number)))


def plan_report(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = _plan(plan_id)
    if not plan.report:
        return HttpResponse(
            "no report card kept for this plan (a base of more than 50,000 instances, or the plan did not "
            "finish): write one with manage.py plan --report FILE.html", status=404, content_type="text/plain")
    response = HttpResponse(plan.report, content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="plan-{plan.pk}.html"'
    return response


def _operator_post(request: HttpRequest) -> HttpResponse | None:
    if not is_operator(request.user):
        return HttpResponse("you need the control permission", status=403, content_type="text/plain")
    return None


@require_POST
def plan_apply(request: HttpRequest, plan_id: int) -> HttpResponse:
    refused = _operator_post(request)
    if refused is not None:
        return refused
    plan = _plan(plan_id)
    try:
        service.plan_apply(plan.pk, user=request.user, source="dashboard")
    except BBSError as exc:
        return render(request, "plans/plan.html", {"page": "plans", "live_view": "plans",
                                                   "live_query": f"&plan={plan.pk}", "clock": clock_view(),
                                                   **_context(request, plan), "error": exc.message}, status=400)
    return redirect("plan", plan_id=plan.pk)


@require_POST
def plan_cancel(request: HttpRequest, plan_id: int) -> HttpResponse:
    refused = _operator_post(request)
    if refused is not None:
        return refused
    try:
        service.plan_cancel(_plan(plan_id).pk, user=request.user, source="dashboard")
    except BBSError:
        pass  # it finished meanwhile: the page shows what it is
    return redirect("plan", plan_id=plan_id)


def capacity_fragment(request: HttpRequest) -> HttpResponse:
    """The capacity form's answer, or the side panel's line for an unplaced item."""
    raw = {k: v for k, v in request.GET.items() if v != "" and k != "view"}
    panel = request.GET.get("view") == "panel"
    try:
        answer = service.capacity_answer(raw)
    except BBSError as exc:
        return render(request, "plans/capacity.html", {"error": exc.message}, status=400)
    return render(request, "plans/capacity.html", {"answer": answer, "shape": raw, "panel": panel})


def zone_loss_chips(request: HttpRequest) -> HttpResponse:
    """The grid header's N-1 chips (plans.md 2.2), loaded after the grid: the kept answer,
    or (a big cluster that changed) the last one while the new one is worked out."""
    answer = service.zone_loss_chips()
    if answer is None:
        return render(request, "plans/zone_loss.html", {"pending": True})
    return render(request, "plans/zone_loss.html", {"zones": sorted(answer["zones"].items())})
