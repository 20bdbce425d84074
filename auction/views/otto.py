"""The Otto open-auctions board (dashboard.md section 4): thin, it renders the selector."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from auction.selectors.clock import clock_view
from auction.selectors.otto import board


def otto_board(request: HttpRequest) -> HttpResponse:
    return render(request, "otto/page.html",
                  {"board": board(), "clock": clock_view(), "live_view": "otto", "page": "otto"})
