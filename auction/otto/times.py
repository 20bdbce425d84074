"""Sim time as ISO-8601 (otto.md 3): UTC, milliseconds, a ``Z``; the sim epoch is the scenario start."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

# Sim second 0 (a scenario's start) is shown as this instant, as in otto.md 3's example.
SIM_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)

_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?Z$")


class TimeFormatError(ValueError):
    """A timestamp that is not ISO-8601 UTC with a ``Z`` (a naive time is refused)."""


def to_iso(sim_seconds: float) -> str:
    instant = SIM_EPOCH + timedelta(milliseconds=round(sim_seconds * 1000))
    return instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def from_iso(text: object) -> float:
    """``"2025-01-01T00:10:05.000Z"`` -> 605.0; anything without the ``Z`` is an error."""
    if not isinstance(text, str):
        raise TimeFormatError(f"not a timestamp: {text!r}")
    match = _ISO.match(text)
    if match is None:
        raise TimeFormatError(f"not ISO-8601 UTC with Z: {text!r}")
    date, hours, minutes, seconds, fraction = match.groups()
    try:
        instant = datetime.fromisoformat(f"{date}T{hours}:{minutes}:{seconds}").replace(tzinfo=UTC)
    except ValueError as exc:
        raise TimeFormatError(f"not a valid instant: {text!r}") from exc
    offset = (instant - SIM_EPOCH).total_seconds() + (float(fraction) if fraction else 0.0)
    return round(offset, 6)
