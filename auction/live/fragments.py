"""HTML fragments sent over the websocket, rendered from the page's own templates.

htmx's ws extension swaps each top-level element out of band by its id, so every
fragment template has a root element with a stable id and ``hx-swap-oob``.
"""

from __future__ import annotations

from django.template.loader import render_to_string

from auction.selectors.clock import ClockView


def clock_fragment(clock: ClockView) -> str:
    return render_to_string("partials/clock.html", {"clock": clock, "oob": True})
