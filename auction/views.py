"""Pages: thin, they render a selector's read model."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from auction.selectors.clock import clock_view
from auction.selectors.grid import grid_snapshot


def grid(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "grid/page.html",
        {"grid": grid_snapshot(), "clock": clock_view(), "live_view": "grid", "page": "grid"},
    )
