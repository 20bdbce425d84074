"""HTML fragments sent over the websocket, rendered from the page's own templates.

htmx's ws extension swaps each top-level element out of band by its id, so every
fragment template has a root element with a stable id and ``hx-swap-oob``.
"""

from __future__ import annotations

from django.template.loader import render_to_string

from auction.selectors.clock import ClockView


def clock_fragment(clock: ClockView) -> str:
    return render_to_string("partials/clock.html", {"clock": clock, "oob": True})


def grid_fragments(cell_ids: list[str]) -> str:
    """The changed cells, their zones' headers and the tray, for an out-of-band swap."""
    from auction.selectors.grid import grid_snapshot

    grid = grid_snapshot()
    wanted = set(cell_ids)
    parts = []
    for zone in grid.zones:
        cells = [c for c in zone.cells if c.cell_id in wanted]
        if not cells:
            continue
        parts.append(render_to_string("grid/zone.html", {"zone": zone, "oob": True}))
        parts += [render_to_string("grid/cell.html", {"cell": c, "oob": True}) for c in cells]
    parts.append(render_to_string("grid/tray.html", {"grid": grid, "oob": True}))
    return "\n".join(parts)
