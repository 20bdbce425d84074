"""Conditions on a record's fields, declared once as data (issue 26).

A rule that picks records (which rows a rep timer applies to, which queued items a
scale-down makes void) is written as a tuple of ``Where``: the memory store asks
``holds`` of its objects, the database store turns the same tuple into one query filter
(``auction/services/where.py``). The field names are the ones the core's records and the
models share.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

#: The operators a condition may use, each one that SQL has as plainly.
IN: Final = "in"
EQ: Final = "=="
GE: Final = ">="
OPERATORS: Final = (IN, EQ, GE)


@dataclass(frozen=True, slots=True)
class Where:
    """``field op value``: IN a frozenset of values, EQ one value, GE a bound."""

    field: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise ValueError(f"unknown operator {self.op!r}")
        # The declared constant itself, so ``holds`` compares by identity (per row write).
        object.__setattr__(self, "op", OPERATORS[OPERATORS.index(self.op)])
        if self.op == IN and not isinstance(self.value, frozenset):
            raise TypeError(f"{self.field} in: a frozenset, not {type(self.value).__name__}")

    def holds(self, record: Any) -> bool:
        value = getattr(record, self.field)
        if self.op is IN:
            return value in self.value
        if self.op is EQ:
            return bool(value == self.value)
        return value is not None and bool(value >= self.value)


def holds_all(conditions: Iterable[Where], record: Any) -> bool:
    return all(w.holds(record) for w in conditions)
