"""The event history (dashboard.md M2): every stored event, newest first, in pages."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import urlencode

from auction.selectors.clock import clock_view
from auction.selectors.feed import FAMILIES, events_page


def events(request: HttpRequest) -> HttpResponse:
    filters = {name: request.GET.get(name, "").strip()[:200] for name in ("type", "app", "cell")}
    page = events_page(request.GET.get("page", 1), type_=filters["type"], app=filters["app"],
                       cell=filters["cell"])
    query = urlencode({k: v for k, v in filters.items() if v})
    return render(request, "events/page.html", {
        "events": page, "filters": filters, "families": FAMILIES, "query": query,
        "clock": clock_view(), "live_view": "events", "page": "events",
    })
