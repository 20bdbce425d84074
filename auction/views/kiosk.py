"""The kiosk (dashboard.md C6, AD9): a wall screen, read-only, by signed token (KOV screen tokens).

``/kiosk/?view=grid&zone=&mode=&follow=1&token=``. The token is signed with the
project's secret, names a link row that expires and can be revoked
(``auction/services/kiosk.py``), and grants reading one world's live view; the socket it
opens accepts no commands from it. The page never reloads itself (KOV #88): frames keep
it current.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from auction.models.tokens import KIOSK_TOKEN_DAYS
from auction.services.kiosk import kiosk_token_current, kiosk_token_valid
from auction.views.grid import grid_context

__all__ = ["TOKEN_MAX_AGE_S", "kiosk", "kiosk_token", "kiosk_token_valid"]

# A new link's life (dashboard.md AD9); kept under its old name for older callers.
TOKEN_MAX_AGE_S = KIOSK_TOKEN_DAYS * 24 * 3600


def kiosk_token(world: str | None = None) -> str:
    """The token of this world's current kiosk link (one is issued when none is live):
    pages that show the link on every visit reuse it (dashboard.md AD9)."""
    if world is not None and world != settings.DIEGO_WORLD:
        raise ValueError("a kiosk link is issued for this world only")
    return kiosk_token_current()


def kiosk(request: HttpRequest) -> HttpResponse:
    if not kiosk_token_valid(request.GET.get("token", "")):
        return render(request, "kiosk/denied.html", status=403)
    context = grid_context(request, live_view="kiosk")
    context.update(page="kiosk", follow=request.GET.get("follow", "1") != "0")
    return render(request, "kiosk/page.html", context)
