"""The placement grid (dashboard.md 1): full, dense or zone tiles, with filters in the URL."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from auction.models import ActualLRP, Cell
from auction.selectors.clock import clock_view
from auction.selectors.grid import grid_mode, grid_snapshot, tray_groups, zone_tiles

# Filters (G7) and the URL state they keep (U1); applied in the browser, so a frame
# never needs to know who filters what.
FILTERS = ("app", "domain", "state", "zone", "cell", "kind", "q")


def grid_context(request: HttpRequest, *, live_view: str = "grid") -> dict:
    cell_count = Cell.objects.count()
    mode = grid_mode(request.GET.get("mode"), cell_count)
    zone = request.GET.get("zone", "")[:64]
    context: dict = {
        "mode": mode, "zone": zone, "cell_count": cell_count,
        # G8: a mode the size chose (not the URL) says so, with the way to the full view.
        "auto_mode": mode != "full" and request.GET.get("mode") not in ("full", "dense", "zones"),
        "filters": {name: request.GET.get(name, "")[:200] for name in FILTERS},
        "states": [*ActualLRP.State.values, "EVACUATING", "SUSPECT", "PENDING"],
        "clock": clock_view(), "live_view": live_view,
        "live_query": _live_query(request.GET.get("mode", ""), zone),
        "tray": tray_groups(),
    }
    if mode == "zones" and not zone:
        context["tiles"] = zone_tiles()
        context["grid"] = None
    else:
        context["grid"] = grid_snapshot(zone=zone or None, tray=False)
        if zone and not context["grid"].zones:
            context["grid"] = grid_snapshot(tray=False)
    return context


def _live_query(mode: str, zone: str) -> str:
    """The socket joins the groups of what this page shows (L2)."""
    query = urlencode({k: v for k, v in (("mode", mode[:16]), ("zone", zone)) if v})
    return "&" + query if query else ""


def grid(request: HttpRequest) -> HttpResponse:
    context = grid_context(request)
    context["page"] = "grid"
    return render(request, "grid/page.html", context)
