"""The report card as one self-contained HTML file (plans.md 4).

Inline CSS and SVG only: no script, no font, no image, no link to anything, so the file
opens offline, prints to A4 (``@media print``) and reads on a phone (the cards stack
below 900 px). The same ``Report`` always renders to the same bytes: nothing here reads
the clock, numbers go through ``svg.num`` and every list is in a fixed order.
"""

from __future__ import annotations

from auction.report.card import Card, CellRow, Report
from auction.report.svg import Series, esc, histogram, line_plot, num, rect, svg_open, text
from auction.selectors.palette import BAR_BACKGROUND, PALETTE, app_colour
from auction.sim.compare import metric_text

UNPLACED_SHOWN = 20
TASK_COLOUR = "#9aa4b2"  # the dense grid's task block (auction/views/compare.py)

# The live grid's colours (static/css/app.css :root, the app palette of
# auction/selectors/palette.py); the print rules swap the dark grounds for light ones.
CSS = f":root {{ --bar: {BAR_BACKGROUND}; }}" + """
:root { --bg: #0f141b; --panel: #171e27; --line: #2a3441; --text: #e6edf3; --muted: #a3b1c2;
  --accent: #77aadd; --ok: #44aa99; --warn: #ddaa33; --bad: #ee6677;
  --zone-a: #1b2530; --zone-b: #222e3b; }
* { box-sizing: border-box; }
body { margin: 0; padding: 1rem 1.2rem 2rem; background: var(--bg); color: var(--text);
  font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
h1 { font-size: 1.35rem; margin: 0 0 .4rem; }
h2 { font-size: 1.1rem; margin: 0 0 .4rem; }
h3 { font-size: .95rem; margin: .8rem 0 .3rem; color: var(--muted); font-weight: 600; }
.stamp { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .8rem; margin: 0 0 1rem;
  font-size: .85rem; }
.stamp dt { color: var(--muted); }
.stamp dd { margin: 0; overflow-wrap: anywhere; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .85em; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
  padding: .7rem .9rem; margin-bottom: 1rem; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .85rem; }
th, td { text-align: left; padding: .2rem .5rem .2rem 0; vertical-align: top;
  border-bottom: 1px solid var(--line); }
th { font-weight: 400; color: var(--muted); }
thead th { color: var(--text); font-weight: 600; }
td { font-variant-numeric: tabular-nums; }
td.best { color: var(--ok); font-weight: 600; }
.cards { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 540px), 1fr)); }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
  padding: .7rem .9rem; min-width: 0; break-inside: avoid-page; }
.params { font-size: .8rem; color: var(--muted); margin: 0; display: flex; flex-wrap: wrap; gap: .1rem .9rem; }
.params dt { display: inline; }
.params dd { display: inline; margin: 0 0 0 .3rem; color: var(--text); overflow-wrap: anywhere; }
.figs { display: grid; gap: .6rem; grid-template-columns: repeat(auto-fit, minmax(min(100%, 320px), 1fr)); }
svg.fig { display: block; width: 100%; height: auto; max-width: 100%; }
svg.legend { width: auto; }
.cells-wrap { overflow-x: auto; }
svg.cells { min-width: 520px; }
.figs svg.fig { max-width: 400px; }
.fig .ax { stroke: var(--muted); stroke-width: 1; }
.fig .grid { stroke: var(--line); stroke-width: .6; }
.fig .tick, .fig .lbl { fill: var(--muted); font-size: 10px; }
.cells .lbl { font-size: 9px; }
.fig .axis { fill: var(--text); font-size: 11px; }
.fig .zname { fill: var(--text); font-size: 10px; font-weight: 600; }
.fig .bar { fill: var(--accent); }
.fig .zone-0 { fill: var(--zone-a); }
.fig .zone-1 { fill: var(--zone-b); }
.fig .cellbar { fill: var(--bar); stroke: var(--line); stroke-width: .6; }
.fig .cellbar.st-failed, .fig .cellbar.st-missing { stroke: var(--bad); stroke-dasharray: 3 2; stroke-width: 1; }
.fig .cellbar.st-draining { stroke: var(--warn); stroke-width: 1; }
.fig .blk { stroke: var(--bar); stroke-width: .6; }
.fig .blk.st-claimed { fill-opacity: .55; }
.fig .blk.pr-evacuating, .fig .blk.pr-suspect { fill-opacity: .4; }
.fig path.line-a, .fig path.line-b { fill: none; stroke-width: 1.6; }
.fig .line-a { stroke: var(--accent); fill: var(--accent); }
.fig .line-b { stroke: var(--warn); fill: var(--warn); }
.fig line.line-a, .fig line.line-b { stroke-width: 2; }
.reasons { margin: .2rem 0; padding-left: 1.1rem; font-size: .85rem; }
.reason { font-family: ui-monospace, monospace; color: var(--warn); overflow-wrap: anywhere; }
.ids { color: var(--muted); font-size: .8rem; overflow-wrap: anywhere; }
.ok { color: var(--ok); margin: .2rem 0; font-size: .85rem; }
.error { color: var(--bad); font-family: ui-monospace, monospace; }
.note { color: var(--muted); font-size: .8rem; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
@media (max-width: 600px) { body { padding: .6rem; font-size: 14px; } .stamp { grid-template-columns: 1fr; }
  .stamp dd { margin-bottom: .3rem; } }
@page { size: A4; margin: 12mm; }
@media print {
  :root { --bg: #ffffff; --panel: #ffffff; --line: #c4ccd6; --text: #111111; --muted: #4a5563;
    --accent: #2f6ea8; --ok: #1f7a6c; --warn: #8a6200; --bad: #b3263a; --bar: #e9edf2;
    --zone-a: #f2f4f7; --zone-b: #e6eaf0; }
  body { padding: 0; font-size: 10pt; }
  .cards { display: block; }
  .card, .panel { border-color: #c4ccd6; margin-bottom: 6mm; }
  .card { break-before: page; }
  .figs { grid-template-columns: 1fr 1fr; }
}
"""

CELL_LABEL_W = 112
CELL_BAR_W = 468
ROW_H = 11
ROW_GAP = 3
ZONE_HEAD = 16
ZONE_GAP = 6


def cells_svg(card: Card) -> str:
    """One row per cell, grouped in tinted zone bands; a bar as long as the cell's memory
    (all cells at one MB-per-pixel scale) holding a block per container, as wide as the
    memory it reserves and coloured by app as on the live grid."""
    cells = card.cells
    zones: dict[str, list[CellRow]] = {}
    for cell in cells:
        zones.setdefault(cell.zone, []).append(cell)
    height = sum(ZONE_HEAD + len(rows) * (ROW_H + ROW_GAP) + ZONE_GAP for rows in zones.values()) or 30
    width = CELL_LABEL_W + CELL_BAR_W + 8
    instances = sum(c.instances for c in cells)
    title = f"Cells of {card.label}: {len(cells)} cells in {len(zones)} zones, {instances} instances"
    desc = ("Each row is a cell; each block an instance (or a task, grey) at the width of its memory. "
            + "; ".join(f"{c.cell_id} in {c.zone}: {c.instances} instances, {c.reserved_mb} of "
                        f"{c.memory_mb} MB, {c.state}" for c in cells))
    out = [svg_open(f"cells-{card.ident}", width, height, title, desc, "fig cells")]
    if not cells:
        out.append(text(4, 18, "no cells", "lbl"))
    largest = max((c.memory_mb for c in cells), default=1) or 1
    scale = CELL_BAR_W / largest
    y = 0.0
    for number, (zone, rows) in enumerate(zones.items()):
        band = ZONE_HEAD + len(rows) * (ROW_H + ROW_GAP)
        out.append(rect(0, y, width, band, f"zone zone-{number % 2}"))
        out.append(text(4, y + 11, f"zone {zone} ({len(rows)} cells, "
                                   f"{sum(c.instances for c in rows)} instances)", "zname"))
        y += ZONE_HEAD
        for cell in rows:
            out.append(f"<g><title>{esc(cell.cell_id)} ({esc(cell.zone)}): {cell.instances} instances, "
                       f"{cell.reserved_mb} of {cell.memory_mb} MB reserved, {esc(cell.state)}</title>")
            out.append(text(4, y + ROW_H - 2, cell.cell_id, "lbl"))
            out.append(rect(CELL_LABEL_W, y, cell.memory_mb * scale, ROW_H, f"cellbar st-{cell.state}"))
            x = float(CELL_LABEL_W)
            for block in cell.blocks:
                w = block.memory_mb * scale
                colour = app_colour(block.app) if block.state != "TASK" else TASK_COLOUR
                out.append(rect(x, y + 1, w, ROW_H - 2,
                                f"blk st-{block.state.lower()} pr-{block.presence.lower()}", colour))
                x += w
            out.append("</g>")
            y += ROW_H + ROW_GAP
        y += ZONE_GAP
    return "".join(out) + "</svg>"


def metrics_table(report: Report) -> str:
    """auction.md 9 side by side: a column per card, the best value of a row marked."""
    cards = report.cards
    # A column with no figures says why above its dashes (an objective whose weights do
    # not add up to 1, a strategy that refused its settings).
    head = "".join(f'<th scope="col">{esc(c.label)}</th>' if c.metrics is not None else
                   f'<th scope="col">{esc(c.label)}<br><span class="error">{esc(c.error or "did not run")}</span></th>'
                   for c in cards)
    rows = []
    for name, label in report.metric_rows:
        cells = []
        for card in cards:
            if card.metrics is None:
                cells.append("<td>-</td>")
            elif name in card.best:
                cells.append(f'<td class="best" data-best="true">{esc(metric_text(card.metrics, name))}'
                             ' <span aria-hidden="true">★</span><span class="sr"> (best)</span></td>')
            else:
                cells.append(f"<td>{esc(metric_text(card.metrics, name))}</td>")
        rows.append(f'<tr data-metric="{esc(name)}"><th scope="row">{esc(label)}</th>{"".join(cells)}</tr>')
    return ('<section class="panel" id="metrics" aria-labelledby="metrics-h">'
            '<h2 id="metrics-h">Quality metrics (auction.md 9)</h2>'
            f'<p class="note">Lower is better for every marked row; {esc(report.best_note)}</p>'
            '<div class="table-wrap"><table>'
            f'<thead><tr><th scope="col">metric</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></section>')


def problems(card: Card) -> str:
    """Failed placements by exact error (auction.md 9) and the work left unplaced at the
    end, by reason (dashboard.md G6)."""
    out = ["<h3>Failures and unplaced work</h3>"]
    metrics = card.metrics
    if metrics is not None and metrics.failures_by_error:
        out.append(f'<p class="note">{metrics.failures} failed placements over the run:</p><ul class="reasons">')
        out.extend(f'<li><span class="reason">{esc(error or "(rejected at commit)")}</span> × {count}</li>'
                   for error, count in metrics.failures_by_error.items())
        out.append("</ul>")
    else:
        out.append('<p class="ok">no failed placements</p>')
    if card.unplaced:
        total = sum(len(items) for _, items in card.unplaced)
        out.append(f'<p class="note">{total} unplaced at the end:</p><ul class="reasons">')
        for reason, items in card.unplaced:
            shown = ", ".join(items[:UNPLACED_SHOWN])
            more = f" and {len(items) - UNPLACED_SHOWN} more" if len(items) > UNPLACED_SHOWN else ""
            out.append(f'<li><span class="reason">{esc(reason)}</span> × {len(items)}'
                       f'<br><span class="ids">{esc(shown)}{esc(more)}</span></li>')
        out.append("</ul>")
    else:
        out.append('<p class="ok">all work placed</p>')
    return "".join(out)


def card_html(card: Card, until: float) -> str:
    params = "".join(f"<div><dt>{esc(k)}</dt><dd class=\"mono\">{esc(v)}</dd></div>" for k, v in card.params)
    out = [f'<article class="card" id="card-{esc(card.ident)}" data-strategy="{esc(card.ident)}" '
           f'aria-labelledby="card-{esc(card.ident)}-h">',
           f'<h2 id="card-{esc(card.ident)}-h">{esc(card.label)}</h2><dl class="params">{params}</dl>']
    if card.metrics is None:
        out.append(f'<p class="error" role="alert">{esc(card.error)}</p></article>')
        return "".join(out)
    m = card.metrics
    out.append(f'<p class="note">{m.placed} placed, {m.unplaced} unplaced, {m.auctions} auctions; '
               f'distribution score {num(m.distribution_initial, 3)} → {num(m.distribution_final, 3)}</p>')
    out.append('<h3>Cells</h3><div class="cells-wrap">')
    out.append(cells_svg(card))
    out.append("</div>")
    ident = card.ident
    out.append('<div class="figs"><div><h3>Wait time</h3>')
    out.append(histogram(f"wait-{ident}", card.waits, f"Wait time histogram, {card.label}",
                         "wait (sim s)", "placed items"))
    out.append("</div><div><h3>Spread over time</h3>")
    out.append(line_plot(f"dist-{ident}", [Series("distribution score",
                                                  [(s.at, s.distribution) for s in card.series])],
                         f"Distribution score over time, {card.label}", "sim time (s)",
                         "distribution score", x_max=until))
    out.append(line_plot(f"skew-{ident}", [Series("worst zone skew",
                                                  [(s.at, float(s.worst_skew)) for s in card.series], "line-b")],
                         f"Worst zone skew over time, {card.label}", "sim time (s)",
                         "skew (instances)", y_places=0, x_max=until))
    out.append("</div></div>")
    out.append(problems(card))
    out.append("</article>")
    return "".join(out)


def legend_svg() -> str:
    """The app palette (hashed from the guid, dashboard.md G3) and the task block."""
    width = 24 * len(PALETTE) + 80
    out = [svg_open("legend", width, 18, "Block colours: 12 app hues, hashed from the process guid; "
                    "grey for a task", css_class="fig legend")]
    for i, colour in enumerate(PALETTE):
        out.append(rect(i * 24, 3, 20, 11, "blk", colour))
    out.append(rect(len(PALETTE) * 24 + 4, 3, 20, 11, "blk", TASK_COLOUR))
    out.append(text(len(PALETTE) * 24 + 28, 12, "task", "lbl"))
    return "".join(out) + "</svg>"


def render_report(report: Report) -> str:
    """The whole file: stamp, metrics side by side, then one card per strategy or plan."""
    stamp = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in report.stamp)
    cards = "".join(card_html(c, report.until) for c in report.cards)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(report.title)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{esc(report.title)}</h1><dl class="stamp">{stamp}</dl></header>'
        f"<main>{metrics_table(report)}"
        f'<section class="panel" aria-label="How to read the cards"><p class="note">Cells: one row per '
        'cell, grouped by zone; a block per instance, as wide as its memory, in its app\'s colour '
        '(faded: still starting). Spread: the distribution score (std-dev ÷ mean of memory in use, '
        'ideal 0) and the worst app\'s zone skew (max − min instances per zone), sampled evenly '
        'over the run.</p>'
        f"{legend_svg()}</section>"
        f'<div class="cards">{cards}</div></main></body></html>\n'
    )
