"""The event history (dashboard.md M2): the stored events, newest first, in pages; live."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from auction.selectors.clock import clock_view
from auction.selectors.feed import FAMILIES, events_history, events_query
from auction.services.events import EVENT_LOG_LIMIT


def events(request: HttpRequest) -> HttpResponse:
    query = events_query({name: request.GET.get(name, "") for name in ("type", "app", "cell", "page")})
    return render(request, "events/page.html", {
        **events_history(query), "families": FAMILIES, "clock": clock_view(),
        "events_kept": f"{EVENT_LOG_LIMIT:,}", "live_view": "events", "live_query": f"&{query}" if query else "", "page": "events",
    })
