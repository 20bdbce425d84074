"""Small filters for the Otto board (dashboard.md O2-O3): sim times, chips, countdowns."""

from __future__ import annotations

from typing import Any

from django import template

from auction.sim.clock import format_sim_time

register = template.Library()


@register.filter
def simtime(seconds: float | None) -> str:
    return "" if seconds is None else format_sim_time(float(seconds))


@register.filter
def chip(value: Any) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)


def _now(context: template.Context) -> float:
    clock = context.get("clock")
    return float(clock.now) if clock is not None else 0.0


@register.simple_tag(takes_context=True)
def countdown_pct(context: template.Context, starts: float, ends: float) -> str:
    """The bar's width now; the browser then runs it from the clock frame (L7)."""
    span = max(ends - starts, 1e-9)
    left = min(max(ends - _now(context), 0.0), span)
    return f"{100 * left / span:.1f}"


@register.simple_tag(takes_context=True)
def countdown_left(context: template.Context, until: float | None) -> str:
    if until is None:
        return ""
    return f"{max(until - _now(context), 0.0):.1f} s"
