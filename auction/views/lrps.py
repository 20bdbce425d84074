"""Desired vs actual (dashboard.md D1-D5): one page, rendered from ``selectors.lrps``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from auction.selectors.clock import clock_view
from auction.selectors.lrps import lrps_page


def lrps(request: HttpRequest) -> HttpResponse:
    clock = clock_view()
    page = lrps_page(clock.now, request.GET.get("page", "1")[:9])
    return render(request, "lrps/page.html", {
        "lrps": page, "clock": clock, "live_view": "lrps", "page": "lrps",
        "live_query": f"&page={page.number}" if page.number > 1 else "",
    })
