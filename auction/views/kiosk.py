"""The kiosk (dashboard.md C6): a wall screen, read-only, by signed token (KOV screen tokens).

``/kiosk/?view=grid&zone=&mode=&follow=1&token=``. The token is signed with the
project's secret and grants reading one world's live view; the socket it opens accepts
no commands from it. The page never reloads itself (KOV #88): frames keep it current.
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from auction.views.grid import grid_context

SALT = "diego-web.kiosk"
TOKEN_MAX_AGE_S = 90 * 24 * 3600


def kiosk_token(world: str | None = None) -> str:
    return signing.dumps({"world": world or settings.DIEGO_WORLD, "scope": "read"}, salt=SALT)


def kiosk_token_valid(token: str) -> bool:
    try:
        data = signing.loads(token, salt=SALT, max_age=TOKEN_MAX_AGE_S)
    except signing.BadSignature:
        return False
    return data.get("world") == settings.DIEGO_WORLD and data.get("scope") == "read"


def kiosk(request: HttpRequest) -> HttpResponse:
    if not kiosk_token_valid(request.GET.get("token", "")):
        return render(request, "kiosk/denied.html", status=403)
    context = grid_context(request, live_view="kiosk")
    context.update(page="kiosk", follow=request.GET.get("follow", "1") != "0")
    return render(request, "kiosk/page.html", context)
