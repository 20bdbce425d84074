"""One line of a cfdot capture being read, and the error that refuses it (plans.md 3.1).

``Line`` checks each field the simulator keeps against the shape Diego prints (a string,
an integer, a flag, a list, an object, an enum by name or proto number; missing and null
alike) and fails with ``CaptureError``: ``file:line: field: why``. Which fields each kind
of line has is ``auction.sim.cfdot_lines``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class CaptureError(ValueError):
    """A capture the importer refuses: ``message`` is ``file:line: field: why``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(slots=True)
class Line:
    """One record being read: where it came from, for the error message."""

    source: str
    number: int
    data: dict[str, Any]

    def fail(self, key: str, why: str) -> CaptureError:
        return CaptureError(f"{self.source}:{self.number}: {key}: {why}")

    def get(self, key: str, default: Any = None) -> Any:
        value = self.data.get(key)
        return default if value is None else value  # plans.md 3.1: missing, null alike

    def text(self, key: str, *, required: bool = False, limit: int | None = None,
             where: dict[str, Any] | None = None, label: str | None = None) -> str:
        value = (self.data if where is None else where).get(key)
        name = label or key
        if value is None:
            if required:
                raise self.fail(name, "missing")
            return ""
        if not isinstance(value, str):
            raise self.fail(name, f"expected a string, got {quoted(value)}")
        if required and not value:
            raise self.fail(name, "empty")
        if limit is not None and len(value) > limit:
            raise self.fail(name, f"longer than {limit} characters")
        return value

    def integer(self, key: str, *, minimum: int | None = 0, required: bool = False,
                where: dict[str, Any] | None = None, label: str | None = None) -> int:
        data = self.data if where is None else where
        name = label or key
        value = data.get(key)
        if value is None:
            if required:
                raise self.fail(name, "missing")
            return 0
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(name, f"expected an integer, got {quoted(value)}")
        if minimum is not None and value < minimum:
            raise self.fail(name, f"must be at least {minimum}, got {value}")
        return value

    def flag(self, key: str) -> bool:
        value = self.data.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {quoted(value)}")
        return value

    def strings(self, key: str, where: dict[str, Any] | None = None, label: str | None = None) -> tuple[str, ...]:
        value = (self.data if where is None else where).get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(label or key, f"expected a list of strings, got {quoted(value)}")
        return tuple(value)

    def obj(self, key: str) -> dict[str, Any]:
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"expected an object, got {quoted(value)}")
        return value

    def enum(self, key: str, names: tuple[str, ...], *, required: bool = True) -> str:
        """plans.md 3.1: an enum as its name or its proto number (case as printed)."""
        value = self.data.get(key)
        if value is None:
            if required:
                raise self.fail(key, "missing")
            return names[0]
        if isinstance(value, int) and not isinstance(value, bool):
            if 0 <= value < len(names):
                return names[value]
        elif isinstance(value, str):
            for name in names:
                if value.upper() == name.upper():
                    return name
        raise self.fail(key, f"unknown value {quoted(value)}")


def quoted(value: Any) -> str:
    """A value as an error message quotes it: its JSON, cut short."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
