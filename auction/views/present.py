"""The presenter's page (dashboard.md C5, C6): take or release the world's presenter lock,
and mint a kiosk link for a wall screen (shown with its QR code, drawn here as SVG)."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import segno
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe

from auction.live.presenter import (
    PERMISSION,
    PresenterError,
    PresenterHeld,
    current_presenter,
    followable_view,
    presenter_release,
    presenter_take,
)
from auction.views.grid import grid_context
from auction.views.kiosk import kiosk_token


def back_to(raw: str) -> str:
    """Where "Take over" from another page returns: that page when it is one of the
    app's followable pages (its query kept), else ``/present/``. The path is checked as a
    follower's view is (``followable_view``), so this is no open redirect."""
    parts = urlsplit(raw)
    if not raw or not url_has_allowed_host_and_scheme(raw, allowed_hosts=None):
        return "/present/"
    if parts.scheme or parts.netloc or followable_view(parts.path) != parts.path:
        return "/present/"
    return parts.path + (f"?{parts.query}" if parts.query else "")


def kiosk_link(request: HttpRequest) -> str:
    """A fresh signed read-only kiosk URL on this host that follows the presenter."""
    return request.build_absolute_uri("/kiosk/?" + urlencode({"follow": "1", "token": kiosk_token()}))


def qr_svg(text: str) -> str:
    """The QR code of ``text`` as inline SVG (segno: pure Python, no image libraries),
    dark on white with its quiet zone, so a phone reads it off a dark page."""
    svg = segno.make(text, error="m").svg_inline(scale=4, dark="#000", light="#fff",
                                                 title="QR code of the kiosk link")
    return mark_safe(svg)  # segno draws the SVG of a URL built here: nothing of a user in it


@login_required
def present(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm(PERMISSION):
        return render(request, "present/forbidden.html", status=403)
    error = held_by = link = qr = ""
    next_url = back_to(request.POST.get("next") or request.GET.get("next", ""))
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "release":
                presenter_release(request.user)
                return redirect("present")
            if action == "take":
                presenter_take(request.user, confirm=request.POST.get("confirm") == "1")
                return redirect(next_url)
            if action == "kiosk":
                link = kiosk_link(request)
                qr = qr_svg(link)
            else:
                error = "unknown action"
        except PresenterHeld as exc:
            held_by = exc.holder
        except PresenterError as exc:
            error = str(exc)
    presenter = current_presenter()
    mine = presenter is not None and presenter.user_id == request.user.pk
    if request.GET.get("takeover") == "1" and presenter is not None and not mine:
        held_by = presenter.name  # "Take over" from another page: ask first (C5)
    context = grid_context(request)
    context.update(page="present", presenter=presenter, error=error, held_by=held_by,
                   presenting=mine, presenter_page=mine, next_url=next_url,
                   kiosk_link=link, kiosk_qr=qr)
    return render(request, "present/page.html", context)
