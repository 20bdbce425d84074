"""The auction sequence pages (dashboard.md section 2): list, replay, big-auction pages."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from auction.models import AuctionRun
from auction.selectors import auctions as selectors
from auction.selectors.clock import clock_view


def _page(request: HttpRequest, template: str, context: dict, status: int = 200,
          live_view: str = "auction") -> HttpResponse:
    return render(request, template, {"clock": clock_view(), "live_view": live_view,
                                      "page": "auctions", **context}, status=status)


def _missing(request: HttpRequest, run_id: int) -> HttpResponse:
    if _fragment(request):
        return render(request, "auctions/missing_body.html", {"run_id": run_id}, status=404)
    return _page(request, "auctions/missing.html", {"run_id": run_id}, status=404)


def _fragment(request: HttpRequest) -> bool:
    """An htmx step request swaps the replay body; a history restore wants the page."""
    return (request.headers.get("HX-Request") == "true"
            and request.headers.get("HX-History-Restore-Request") != "true")


def auction_list(request: HttpRequest) -> HttpResponse:
    return _page(request, "auctions/list.html", {"auctions": selectors.auction_list()},
                 live_view="auctions")


def auction_replay(request: HttpRequest, run_id: int) -> HttpResponse:
    run = selectors.auction_get(run_id)
    if run is None:
        return _missing(request, run_id)
    return replay_page(request, run, {"replay": reverse("auction-replay", args=(run_id,)),
                                      "cells": reverse("auction-cells", args=(run_id,))})


def replay_page(request: HttpRequest, run: AuctionRun, urls: dict[str, str],
                prediction: dict[str, Any] | None = None) -> HttpResponse:
    """The replay of one recorded auction, the live cluster's or a plan's (plans.md 1.7):
    ``urls`` are where its steps and cell pages are asked for; ``prediction`` names the
    plan whose run recorded it."""
    replay = selectors.replay(run, selectors.clamp_step(run, request.GET.get("step", 0)))
    context = {"replay": replay, "urls": urls, "prediction": prediction}
    if _fragment(request):
        return render(request, "auctions/replay_body.html", context)
    return _page(request, "auctions/replay.html", context)


def auction_cells(request: HttpRequest, run_id: int) -> HttpResponse:
    """A8: one 50-row page of a big auction's candidate table."""
    run = selectors.auction_get(run_id)
    if run is None:
        return _missing(request, run_id)
    return cells_page(request, run, reverse("auction-cells", args=(run_id,)))


def cells_page(request: HttpRequest, run: AuctionRun, url: str) -> HttpResponse:
    step = selectors.clamp_step(run, request.GET.get("step"))
    try:
        page = int(request.GET.get("page", 0))
    except ValueError:
        page = -1
    if not 1 <= step <= len(run.order) or page < 0:
        return HttpResponse("step must name an item of this auction and page be a number ≥ 0",
                            status=400, content_type="text/plain; charset=utf-8")
    rows, more = selectors.cell_page(run, step - 1, page)
    return render(request, "auctions/cell_page.html",
                  {"run": run, "cells_url": url, "step": step, "page": page, "rows": rows, "more": more,
                   "first_row": page * selectors.PAGE_ROWS + 1,
                   "last_row": page * selectors.PAGE_ROWS + len(rows)})
