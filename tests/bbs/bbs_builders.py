"""Small builders for the BBS core tests: cases as dicts, run through the real parser.

Named ``bbs_builders`` (not ``helpers``) because the test folders have no
``__init__.py`` and module names must stay unique across ``tests/``.
"""

from __future__ import annotations

from typing import Any

from auction.bbs.cases import case_output, parse_case
from auction.bbs.changes import RowCreate, RowDelete, RowOp, RowUpdate
from auction.bbs.convergence import ConvergenceResult, converge
from auction.bbs.types import ActualLRP, RowKey

NOW = 1000.0
FRESH = {"cf-apps": NOW + 60}
STALE = {"cf-apps": NOW - 10}


def lrp(guid: str = "web", index: int = 0, state: str = "RUNNING", **fields: Any) -> dict[str, Any]:
    """An actual row of a case; RUNNING/CLAIMED rows default to cell-1, since 400."""
    row: dict[str, Any] = {"process_guid": guid, "index": index, "state": state, "since": 400}
    if state in ("RUNNING", "CLAIMED"):
        row["cell_id"] = "cell-1"
    row.update(fields)
    return row


def desired(guid: str = "web", instances: int = 1, domain: str = "cf-apps") -> dict[str, Any]:
    return {"process_guid": guid, "domain": domain, "instances": instances}


def case(**fields: Any) -> dict[str, Any]:
    """A case with now = 1000, C = {cell-1}, cf-apps fresh; override any field."""
    doc: dict[str, Any] = {"now": NOW, "cells": ["cell-1"], "domains": dict(FRESH)}
    doc.update(fields)
    return doc


def result(**fields: Any) -> ConvergenceResult:
    return converge(parse_case(case(**fields)))


def run(**fields: Any) -> dict[str, Any]:
    """The case output (``python -m auction.bbs``) of ``case(**fields)``."""
    return case_output(result(**fields))


def apply_ops(rows: dict[RowKey, ActualLRP], ops: list[RowOp]) -> dict[RowKey, ActualLRP]:
    """Apply row ops as a database shell would, under a unique key, checking each
    precondition a real table would enforce."""
    table = dict(rows)
    for op in ops:
        if isinstance(op, RowDelete):
            assert table.get(op.key) == op.before, f"delete of a changed or absent row {op.key}"
            del table[op.key]
        elif isinstance(op, RowUpdate):
            assert table.get(op.key) == op.before, f"update of a changed or absent row {op.key}"
            del table[op.key]
            assert op.after.key not in table, f"update onto a taken key {op.after.key}"
            table[op.after.key] = op.after
        elif isinstance(op, RowCreate):
            assert op.row.key not in table, f"create onto a taken key {op.row.key}"
            table[op.row.key] = op.row
    return table
