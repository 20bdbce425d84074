"""One way to write times and scores on every page (issue 16: five ways was four too many).

- ``instant``: a sim instant, as the clock bar writes it (``0:09:49.1``);
- ``duration``: a length of sim time (``12.5 s``, ``9 min 49 s``, ``2 h 03 min``);
- ``score``: an auction score or a margin between two, fixed-point, never ``1e+03``.

``{% load diego_format %}`` then ``{{ run.started_at|instant }}``.
"""

from __future__ import annotations

import math

from django import template

from auction.sim.clock import format_sim_time

register = template.Library()


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@register.filter
def instant(value: object) -> str:
    seconds = _number(value)
    return "—" if seconds is None else format_sim_time(seconds)


def format_duration(seconds: float) -> str:
    if seconds < 0:
        return "-" + format_duration(-seconds)
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    whole = round(seconds)
    if whole < 3600:
        minutes, secs = divmod(whole, 60)
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, rest = divmod(whole, 3600)
    return f"{hours} h {rest // 60:02d} min"


@register.filter
def duration(value: object) -> str:
    seconds = _number(value)
    return "—" if seconds is None else format_duration(seconds)


def format_score(value: float) -> str:
    """Up to six decimals below 1000 (the engine's terms are small; trailing zeros go),
    grouped whole numbers above."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


@register.filter
def score(value: object) -> str:
    number = _number(value)
    return "—" if number is None else format_score(number)


@register.filter
def few_names(names: object, shown: int = 5) -> str:
    """"a, b, c and 77 more": a tooltip names a few, never eighty (dashboard.md U4)."""
    items = [str(n) for n in names] if isinstance(names, (list, tuple)) else []
    if len(items) <= shown:
        return ", ".join(items)
    return f"{', '.join(items[:shown])} and {len(items) - shown} more"
