"""Template context every page needs for its live socket."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest

from auction.live.presenter import PERMISSION, current_presenter, user_tag
from auction.permissions import is_operator
from auction.selectors.clock import world_epoch
from auction.selectors.controls import control_choices
from auction.selectors.feed import FAMILIES, feed_rows, newest_event_id
from auction.selectors.metrics import metrics_header
from auction.views.kiosk import kiosk_token_valid


def live(request: HttpRequest) -> dict[str, Any]:
    return {"world": settings.DIEGO_WORLD, "world_epoch": world_epoch}


def presenting(request: HttpRequest) -> dict[str, Any]:
    """Who presents, as every page needs it (dashboard.md C5, C6): the presenter's own
    pages publish what they show (on any page, not only ``/present/``), a signed-in
    user with the ``present`` permission may take over from any page, and a page
    opened with a valid kiosk token is drawn as a wall screen (no menus, no controls)
    so a kiosk follows the presenter onto every page. Callables: the admin reads none."""
    # An error page for a request refused before AuthenticationMiddleware ran (a bad
    # Host) has no user: it is drawn as for an anonymous reader.
    user = getattr(request, "user", None) or AnonymousUser()

    def presenter_page() -> bool:
        if not user.is_authenticated:
            return False
        held = current_presenter()
        return held is not None and held.user_id == user.pk

    token = request.GET.get("token", "")
    return {
        "presenter_page": presenter_page,
        "can_present": lambda: bool(user.is_authenticated and user.has_perm(PERMISSION)),
        "kiosk_mode": lambda: bool(token) and kiosk_token_valid(token),
        # An operator's second screen stays where it is, whoever presents (C5).
        "no_follow": request.GET.get("follow") == "0",
        "user_tag": lambda: user_tag(user.pk) if user.is_authenticated else "",
    }


def shared_chrome(request: HttpRequest) -> dict[str, Any]:
    """The metrics header, feed drawer and controls every page but the kiosk shows
    (dashboard.md M1, M2, C1, C2). Callables, so a page that does not show them (the
    admin) runs no query."""
    return {
        "metrics_header": once(metrics_header), "feed_rows": once(feed_rows),
        "feed_newest": once(newest_event_id), "feed_families": FAMILIES,
        "control_choices": once(control_choices),
        "can_control": once(lambda: is_operator(getattr(request, "user", None) or AnonymousUser())),
    }


def once(compute: Callable[[], Any]) -> Callable[[], Any]:
    """A callable a template may use many times that computes once per request: Django
    calls a context callable at every use (the controls and their choices both used
    ``control_choices``: 84 ms twice on a 1,000-cell grid)."""
    kept: list[Any] = []

    def value() -> Any:
        if not kept:
            kept.append(compute())
        return kept[0]

    return value
