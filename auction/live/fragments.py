"""HTML fragments sent over the websocket, rendered from the page's own templates.

htmx's ws extension swaps each top-level element out of band by its id, so every
fragment template has a root element with a stable id and ``hx-swap-oob``. The same
templates render the page, so a snapshot and a frame can never disagree (L1).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from auction.selectors.auctions import auction_list
from auction.selectors.clock import ClockView, clock_row, clock_view, world_epoch
from auction.selectors.controls import control_choices
from auction.selectors.feed import events_history, feed_rows, newest_event_id
from auction.selectors.grid import tray_groups
from auction.selectors.lrps import lrps_page, next_pass_at
from auction.selectors.metrics import metrics_header
from auction.selectors.otto import board
from auction.services.plans import plan_note

# Between fragments in a frame: lets a consumer cut a frame into websocket messages on
# element boundaries (daphne refuses messages over 1 MiB). A comment, so harmless in HTML.
SEP = "\n<!--live-->\n"


def clock_fragment(clock: ClockView) -> str:
    return render_to_string("partials/clock.html", {"clock": clock, "oob": True})


def cell_fragment(cell) -> str:  # type: ignore[no-untyped-def]
    return render_to_string("grid/cell.html", {"cell": cell, "oob": True})


def zone_head_fragment(zone) -> str:  # type: ignore[no-untyped-def]
    return render_to_string("grid/zone_head.html", {"zone": zone, "oob": True})


def zone_section_fragment(zone) -> str:  # type: ignore[no-untyped-def]
    """A whole zone (header and cells): the region a gap in ``zone.<z>`` re-sends (L4)."""
    return render_to_string("grid/zone.html", {"zone": zone, "oob": True})


def tile_fragment(tile) -> str:  # type: ignore[no-untyped-def]
    return render_to_string("grid/tile.html", {"tile": tile, "oob": True})


def tray_fragment() -> str:
    return render_to_string("grid/tray.html", {"tray": tray_groups(), "oob": True})


LRP_ROWS_PER_FRAGMENT = 100
# A row holds up to 500 instance lines (~150 KB): chunks stay well under a message's 900 KB.
LRP_CHUNK_BYTES = 256 * 1024


def lrps_fragments(page_number: int = 1) -> str:
    """Desired vs actual (dashboard.md D1-D5), one page of it whole: the snapshot."""
    return SEP.join(lrps_frame(page_number, lambda html: False))


def lrps_frame(page_number: int, unchanged: Callable[[str], bool]) -> list[str]:
    """The elements of one page of desired vs actual that ``unchanged`` does not know.

    When the page's set of rows is the same (the table's shell, which names it, is
    unchanged) only the rows that changed go, each swapped by its id. Otherwise the shell
    goes, then every row appended in chunks: each chunk is its own fragment, and the
    consumer packs fragments into messages under daphne's 1 MiB.
    """
    page = lrps_page(page=page_number)
    ctx = {"lrps": page, "conv": page.convergence, "oob": True, "chunked": True}
    out = [html for name in ("lrps/domains.html", "lrps/convergence.html", "lrps/tasks.html")
           if not unchanged(html := render_to_string(name, ctx))]
    shell = render_to_string("lrps/table.html", ctx)
    # One row alone goes in a <template> (a <tbody> outside a table is dropped by the HTML
    # parser), appended to #lrp-updates by its holder; dashboard.js puts it in place of its
    # old self.
    singles = [f'<div id="lrp-update-{row.process_guid}" hx-swap-oob="beforeend:#lrp-updates"><template>'
               f'{render_to_string("lrps/row.html", {"row": row})}</template></div>' for row in page.rows]
    if unchanged(shell):
        return out + [html for html in singles if not unchanged(html)]
    for html in singles:
        unchanged(html)  # now on the page: what later frames compare with
    out.append(shell)
    chunk: list[str] = []
    size = 0
    for row in page.rows:
        html = render_to_string("lrps/row.html", {"row": row})
        if chunk and (len(chunk) == LRP_ROWS_PER_FRAGMENT or size + len(html) > LRP_CHUNK_BYTES):
            out.append(f'<table hx-swap-oob="beforeend:#lrp-rows">{"".join(chunk)}</table>')
            chunk, size = [], 0
        chunk.append(html)
        size += len(html)
    if chunk:
        out.append(f'<table hx-swap-oob="beforeend:#lrp-rows">{"".join(chunk)}</table>')
    return out


def metrics_fragment() -> str:
    """The metrics header (M1) and the clock bar's next-pass countdown."""
    at = next_pass_at()
    return "\n".join((
        render_to_string("partials/metrics.html", {"metrics_header": metrics_header(), "oob": True}),
        render_to_string("partials/controls_next.html", {
            "next_pass_at": at, "next_pass_in": max(0.0, at - clock_row().now()), "oob": True}),
    ))


def auction_list_fragment() -> str:
    """The auction list (dashboard.md A1), as the list page renders it."""
    return render_to_string("auctions/list_body.html", {"auctions": auction_list(), "oob": True})


def control_choices_fragment() -> str:
    """What the controls' dropdowns offer, now (``selectors.controls``): the page copies
    the options into its selects, keeping each one's choice (dashboard.js)."""
    html = render_to_string("partials/control_choices.html", {"control_choices": control_choices()})
    # Two elements, each sent only when it changed (the coalescer compares element by element).
    head, _, tail = html.partition("</div>")
    return SEP.join((head.strip() + "</div>", tail.strip()))


def epoch_fragment() -> str:
    """The world epoch (``services.world``): a page rendered with another one reloads."""
    return epoch_marker(world_epoch())


def epoch_marker(epoch: int) -> str:
    return f'<div id="world-epoch" data-epoch="{epoch}" hidden hx-swap-oob="true"></div>'



def feed_fragment() -> str:
    """The newest feed rows (M2), into a hidden holder: the page decides whether to show
    them or, while the feed is paused, to count them as "n new". All of them: a snapshot."""
    rows = feed_rows()
    rows_html = mark_safe("".join(map(_feed_row_html, rows))) if rows else None
    return render_to_string("partials/feed_incoming.html", {
        "feed_rows": rows, "rows_html": rows_html, "feed_newest": newest_event_id(), "full": True})


# A row's HTML by everything it shows: a tick re-rendered all ~70 rows through the
# template (a third of the tick) to send the one or two that are new.
_FEED_ROWS_KEPT: dict[tuple[Any, ...], str] = {}
FEED_ROWS_KEPT = 2000


def _feed_row_html(row: Any) -> str:
    key = (row.id, row.at, row.type, row.family, row.key, row.app, row.cell_id, row.text,
           row.similar, row.apps_attr, row.cells_attr)
    html = _FEED_ROWS_KEPT.get(key)
    if html is None:
        if len(_FEED_ROWS_KEPT) >= FEED_ROWS_KEPT:
            _FEED_ROWS_KEPT.clear()
        html = _FEED_ROWS_KEPT[key] = render_to_string("partials/feed_row.html", {"row": row})
    return html


FEED_ROW = re.compile(r'<li class="feed-row[^"]*" data-id="(\d+)"')


def feed_delta(full: str, sent: dict[str, int]) -> str:
    """A frame of the feed: the order of all rows (by id) but only the rows that are new or
    changed since ``sent`` (row id -> hash of its HTML, updated here). The page keeps the
    others; its snapshot, or a resync, was a full one (``feed_fragment``)."""
    head, _, rest = full.partition(">")
    body = rest[: rest.rfind("</div>")]
    starts = [m.start() for m in FEED_ROW.finditer(body)]
    rows = {FEED_ROW.match(body, a).group(1): body[a:b]  # type: ignore[union-attr]
            for a, b in zip(starts, [*starts[1:], len(body)], strict=True)}
    changed = [html for ident, html in rows.items() if sent.get(ident) != hash(html)]
    sent.clear()
    sent.update({ident: hash(html) for ident, html in rows.items()})
    head = head.replace(' data-full="1"', "")
    return f'{head} data-order="{" ".join(rows)}">{"".join(changed)}</div>'


def events_history_fragment(query: str) -> str:
    """One page of the event history (M2) for its canonical filters and page."""
    return render_to_string("events/history.html", {**events_history(query), "oob": True})


def otto_board_fragment() -> str:
    """The whole Otto board (lanes and roster): cards move between lanes, so lanes swap whole."""
    return render_to_string("otto/board.html", {"board": board(), "clock": clock_view(), "oob": True})


def plan_note_fragment(topic: str) -> str:
    """A plan's notice (plans.md 1.5): the page fetches its plan again when it arrives."""
    raw = topic.partition(".")[2]
    return plan_note(int(raw)) if raw.isascii() and raw.isdigit() else ""
