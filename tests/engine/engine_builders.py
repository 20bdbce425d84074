"""Tiny builders shared by the engine's unit tests."""

from __future__ import annotations

from typing import Any

from auction.engine import CellState, Resources

R = Resources(1000, 1000, 10)


def cell(cid: str = "c", zone: str = "z1", index: int = 0, **kw: Any) -> CellState:
    """A 1000 MB / 1000 MB / 10-container cell, fully available unless told otherwise."""
    return CellState(cid, zone, index, kw.pop("total", R), kw.pop("available", R), **kw)
