"""Template context every page needs for its live socket."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest


def live(request: HttpRequest) -> dict[str, Any]:
    from auction.selectors.clock import world_epoch

    return {"world": settings.DIEGO_WORLD, "world_epoch": world_epoch}


def shared_chrome(request: HttpRequest) -> dict[str, Any]:
    """The metrics header, feed drawer and controls every page but the kiosk shows
    (dashboard.md M1, M2, C1, C2). Callables, so a page that does not show them (the
    admin) runs no query."""
    from auction.permissions import is_operator
    from auction.selectors.controls import control_choices
    from auction.selectors.feed import FAMILIES, feed_rows, newest_event_id
    from auction.selectors.metrics import metrics_header

    return {
        "metrics_header": metrics_header, "feed_rows": feed_rows, "feed_newest": newest_event_id,
        "feed_families": FAMILIES, "control_choices": control_choices,
        "can_control": lambda: is_operator(request.user),
    }
