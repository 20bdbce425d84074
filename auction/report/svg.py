"""Small inline-SVG helpers for the report card (plans.md 4): pure strings, no Django.

Every figure is an ``<svg role="img" aria-labelledby=...>`` whose first child is its
``<title>`` (and a ``<desc>``), so a screen reader announces it. Numbers go through
``num``, so the same value always prints the same text (reports of the same inputs are
byte-identical); every piece of text goes through ``esc``. Colours are CSS classes
(``ax``, ``grid``, ``line-a``...) the report's stylesheet defines, so the print
stylesheet can recolour the figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape


def esc(text: object) -> str:
    """Text and attribute values, quotes included."""
    return escape(str(text), quote=True)


def num(value: float, places: int = 2) -> str:
    """A fixed-precision number without trailing zeros and without ``-0``."""
    if not math.isfinite(value):
        return "0"
    text = f"{value:.{places}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def nice_step(span: float, target: int = 5) -> float:
    """A 1-2-5 step that cuts ``span`` into about ``target`` intervals."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(1, target)
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if raw <= factor * power * (1 + 1e-9):
            return factor * power
    return 10.0 * power


def ticks(low: float, high: float, target: int = 5, min_step: float = 0.0) -> list[float]:
    """Tick values from ``low`` rounded down to at least ``high``, on a 1-2-5 step of at
    least ``min_step`` (1 for a count, so no tick falls between two whole numbers)."""
    if high <= low:
        high = low + 1.0
    step = max(nice_step(high - low, target), min_step)
    start = math.floor(low / step + 1e-9) * step
    out: list[float] = []
    value = start
    while value < high - step * 1e-9:
        out.append(round(value, 12))
        value = start + step * len(out)
    out.append(round(value, 12))
    return out


def svg_open(ident: str, width: float, height: float, title: str, desc: str = "",
             css_class: str = "fig") -> str:
    """The opening of a scalable figure with its accessible title (close with ``</svg>``)."""
    parts = [f'<svg class="{esc(css_class)}" viewBox="0 0 {num(width)} {num(height)}" '
             f'width="{num(width)}" height="{num(height)}" role="img" '
             f'aria-labelledby="{esc(ident)}-t{" " + esc(ident) + "-d" if desc else ""}" '
             f'preserveAspectRatio="xMinYMin meet">',
             f'<title id="{esc(ident)}-t">{esc(title)}</title>']
    if desc:
        parts.append(f'<desc id="{esc(ident)}-d">{esc(desc)}</desc>')
    return "".join(parts)


def text(x: float, y: float, body: str, css_class: str = "lbl", anchor: str = "start",
         rotate: bool = False) -> str:
    transform = f' transform="rotate(-90 {num(x)} {num(y)})"' if rotate else ""
    return (f'<text x="{num(x)}" y="{num(y)}" class="{esc(css_class)}" '
            f'text-anchor="{anchor}"{transform}>{esc(body)}</text>')


def rect(x: float, y: float, w: float, h: float, css_class: str = "", fill: str = "",
         title: str = "") -> str:
    attrs = f'x="{num(x)}" y="{num(y)}" width="{num(max(0.0, w))}" height="{num(max(0.0, h))}"'
    if css_class:
        attrs += f' class="{esc(css_class)}"'
    if fill:
        attrs += f' fill="{esc(fill)}"'
    if title:
        return f"<rect {attrs}><title>{esc(title)}</title></rect>"
    return f"<rect {attrs}/>"


@dataclass(frozen=True, slots=True)
class Frame:
    """A plot area inside a figure: data ranges mapped onto pixels."""

    left: float
    top: float
    width: float
    height: float
    x_ticks: list[float]
    y_ticks: list[float]

    def x(self, value: float) -> float:
        low, high = self.x_ticks[0], self.x_ticks[-1]
        return self.left + (value - low) / (high - low) * self.width

    def y(self, value: float) -> float:
        low, high = self.y_ticks[0], self.y_ticks[-1]
        return self.top + self.height - (value - low) / (high - low) * self.height


def axes(frame: Frame, x_label: str, y_label: str, x_places: int = 2, y_places: int = 3) -> str:
    """Grid lines, both axes with their tick values, and the axis labels (with units)."""
    out: list[str] = []
    bottom = frame.top + frame.height
    for value in frame.y_ticks:
        y = frame.y(value)
        out.append(f'<line class="grid" x1="{num(frame.left)}" y1="{num(y)}" '
                   f'x2="{num(frame.left + frame.width)}" y2="{num(y)}"/>')
        out.append(text(frame.left - 4, y + 3, num(value, y_places), "tick", "end"))
    for value in frame.x_ticks:
        x = frame.x(value)
        out.append(f'<line class="ax" x1="{num(x)}" y1="{num(bottom)}" x2="{num(x)}" y2="{num(bottom + 4)}"/>')
        out.append(text(x, bottom + 14, num(value, x_places), "tick", "middle"))
    out.append(f'<line class="ax" x1="{num(frame.left)}" y1="{num(frame.top)}" '
               f'x2="{num(frame.left)}" y2="{num(bottom)}"/>')
    out.append(f'<line class="ax" x1="{num(frame.left)}" y1="{num(bottom)}" '
               f'x2="{num(frame.left + frame.width)}" y2="{num(bottom)}"/>')
    out.append(text(frame.left + frame.width / 2, bottom + 30, x_label, "axis", "middle"))
    out.append(text(12, frame.top + frame.height / 2, y_label, "axis", "middle", rotate=True))
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Bin:
    low: float
    high: float
    count: int


def histogram_bins(values: Sequence[float], target: int = 10) -> list[Bin]:
    """Equal-width bins on a 1-2-5 step from 0 (waits are never negative); a value on
    an edge falls in the bin above it, the last bin includes its upper edge. All values
    0 (nothing waited) give one bin [0, 1)."""
    if not values:
        return []
    high = max(max(values), 0.0)
    step = nice_step(high, target) if high > 0 else 1.0
    count = max(1, min(math.ceil(high / step - 1e-9), 4 * target))
    bins = [0] * count
    for value in values:
        index = min(count - 1, max(0, math.floor(value / step + 1e-9)))
        bins[index] += 1
    return [Bin(round(i * step, 12), round((i + 1) * step, 12), n) for i, n in enumerate(bins)]


def histogram(ident: str, values: Sequence[float], title: str, x_label: str, y_label: str,
              width: float = 320, height: float = 180) -> str:
    """Counts of ``values`` per bin as bars, with axes, tick values and labelled units."""
    bins = histogram_bins(values)
    desc = (f"{len(values)} values; " + ", ".join(
        f"{num(b.low)} to {num(b.high)}: {b.count}" for b in bins)) if bins else "no values"
    out = [svg_open(ident, width, height, title, desc)]
    if not bins:
        out.append(text(width / 2, height / 2, "nothing placed, no wait times", "lbl", "middle"))
        return "".join(out) + "</svg>"
    top = max(b.count for b in bins)
    frame = Frame(48, 10, width - 60, height - 52, [bins[0].low] + [b.high for b in bins],
                  ticks(0, top, 4, 1.0))
    shown = frame.x_ticks
    if len(shown) > 8:  # label every other edge, the last one kept, so labels stay apart
        shown = shown[::2] if len(shown) % 2 else shown[:-1:2] + shown[-1:]
    out.append(axes(Frame(frame.left, frame.top, frame.width, frame.height, shown, frame.y_ticks),
                    x_label, y_label, y_places=0))
    for b in bins:
        x0, x1 = frame.x(b.low), frame.x(b.high)
        y = frame.y(b.count)
        out.append(rect(x0 + 1, y, x1 - x0 - 2, frame.top + frame.height - y, "bar",
                        title=f"{num(b.low)}-{num(b.high)} s: {b.count}"))
    return "".join(out) + "</svg>"


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    points: list[tuple[float, float]]
    css_class: str = "line-a"


def line_plot(ident: str, series: Sequence[Series], title: str, x_label: str, y_label: str,
              width: float = 320, height: float = 160, y_places: int = 3,
              x_max: float | None = None) -> str:
    """One or more series as lines with a dot per point, axes with units, and a legend."""
    points = [p for s in series for p in s.points]
    desc = "; ".join(f"{s.name}: " + ", ".join(f"{num(x)} s {num(y, y_places)}" for x, y in s.points[:12])
                     + (" ..." if len(s.points) > 12 else "") for s in series)
    out = [svg_open(ident, width, height, title, desc or "no samples")]
    if not points:
        out.append(text(width / 2, height / 2, "no samples", "lbl", "middle"))
        return "".join(out) + "</svg>"
    x_high = max(x_max if x_max is not None else 0.0, max(x for x, _ in points))
    y_high = max(y for _, y in points)
    frame = Frame(48, 22 if len(series) > 1 else 10, width - 60, height - (64 if len(series) > 1 else 52),
                  ticks(0, x_high, 6), ticks(0, y_high if y_high > 0 else 1, 4, 1.0 if y_places == 0 else 0.0))
    out.append(axes(frame, x_label, y_label, x_places=0, y_places=y_places))
    for number, s in enumerate(series):
        if not s.points:
            continue
        path = " ".join(f"{'M' if i == 0 else 'L'}{num(frame.x(x))},{num(frame.y(y))}"
                        for i, (x, y) in enumerate(s.points))
        out.append(f'<path class="{esc(s.css_class)}" d="{path}"/>')
        if len(s.points) <= 80:
            out.extend(f'<circle class="{esc(s.css_class)} dot" cx="{num(frame.x(x))}" '
                       f'cy="{num(frame.y(y))}" r="1.8"/>' for x, y in s.points)
        if len(series) > 1:
            lx = frame.left + number * 110
            out.append(f'<line class="{esc(s.css_class)}" x1="{num(lx)}" y1="8" x2="{num(lx + 16)}" y2="8"/>')
            out.append(text(lx + 20, 12, s.name, "lbl"))
    return "".join(out) + "</svg>"
