"""Convergence case files (conformance.md 2, bbs.md 11): reading, checking, answering.

A case is checked field by field before it runs: an unknown field, a wrong type, a
missing required field or a duplicate (process_guid, index, presence) raises
``CaseError`` naming the field, so the command can answer with one line instead of a
traceback.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from auction.bbs.convergence import ConvergenceResult, converge
from auction.bbs.types import (
    LRP_STATES,
    ORDINARY,
    PRESENCES,
    TASK_STATES,
    ActualLRP,
    ConvergenceConfig,
    DesiredLRP,
    LRPKey,
    Snapshot,
    Task,
    lrp_id,
)
from auction.bbs.validation import INT32_MAX, MAX_INSTANCES, out_of_range

LRP_OUTPUT_KEYS = (
    "start",
    "create",
    "retire",
    "suspect",
    "unclaim",
    "promote",
    "remove_suspect",
    "remove_evacuating",
)


class CaseError(ValueError):
    """A file that is not a valid case; ``field`` is the dotted path of the culprit."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem


Check = Callable[[Any, str], Any]
_REQUIRED = object()  # marks a field without a default


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CaseError(where, f"expected a number, got {json.dumps(value)}")
    return float(value)


def _optional_number(value: Any, where: str) -> float | None:
    return None if value is None else _number(value, where)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CaseError(where, f"expected an integer >= 0, got {json.dumps(value)}")
    if value > INT32_MAX:
        raise CaseError(where, f"expected an integer <= {INT32_MAX}, got {value}")
    return value


def _instances(value: Any, where: str) -> int:
    """The registry's limit (bbs.md 1.6): a case is simulated row by row, so 2^31 instances
    would take the machine's memory before the first pass (conformance.md 3)."""
    if isinstance(value, int) and not isinstance(value, bool) and out_of_range("instances", value) \
            and value > 0:
        raise CaseError(where, f"expected at most {MAX_INSTANCES} instances (the limit of "
                               f"bbs.md 1.6), got {value}")
    return _count(value, where)


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise CaseError(where, f"expected a string, got {json.dumps(value)}")
    return value


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise CaseError(where, f"expected true or false, got {json.dumps(value)}")
    return value


def _one_of(*choices: str) -> Check:
    def check(value: Any, where: str) -> str:
        if value not in choices:
            raise CaseError(where, f"expected one of {', '.join(choices)}, got {json.dumps(value)}")
        return str(value)

    return check


def _anything(value: Any, where: str) -> Any:
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise CaseError(where, f"expected a list, got {type(value).__name__}")
    return value


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise CaseError(where, f"expected an object, got {type(value).__name__}")
    return value


def _fields(value: Any, where: str, schema: dict[str, tuple[Check, Any]]) -> dict[str, Any]:
    """Check an object against ``schema`` (name -> (check, default or _REQUIRED))."""
    obj = _object(value, where or "case")
    prefix = f"{where}." if where else ""
    for name in obj:
        if name not in schema:
            raise CaseError(f"{prefix}{name}", "unknown field")
    checked: dict[str, Any] = {}
    for name, (check, default) in schema.items():
        if name in obj:
            checked[name] = check(obj[name], f"{prefix}{name}")
        elif default is _REQUIRED:
            raise CaseError(f"{prefix}{name}", "missing required field")
        else:
            checked[name] = default
    return checked


_DEFAULTS = ConvergenceConfig()
CASE_SCHEMA: dict[str, tuple[Check, Any]] = {
    "name": (_string, ""),
    "now": (_number, _REQUIRED),
    "cells": (_list, _REQUIRED),
    "config": (_object, {}),
    "domains": (_object, {}),
    "desired": (_list, []),
    "actual": (_list, []),
    "tasks": (_list, []),
    "expect": (_anything, None),
}
CONFIG_SCHEMA: dict[str, tuple[Check, Any]] = {
    "stale_unclaimed_s": (_number, _DEFAULTS.stale_unclaimed_s),
    "expire_pending_task_s": (_number, _DEFAULTS.expire_pending_task_s),
    "expire_completed_task_s": (_number, _DEFAULTS.expire_completed_task_s),
    "kick_task_s": (_number, _DEFAULTS.kick_task_s),
}
DESIRED_SCHEMA: dict[str, tuple[Check, Any]] = {
    "process_guid": (_string, _REQUIRED),
    "domain": (_string, _REQUIRED),
    "instances": (_instances, _REQUIRED),
}
ACTUAL_SCHEMA: dict[str, tuple[Check, Any]] = {
    "process_guid": (_string, _REQUIRED),
    "index": (_count, _REQUIRED),
    "state": (_one_of(*LRP_STATES), _REQUIRED),
    "since": (_number, _REQUIRED),
    "presence": (_one_of(*PRESENCES), ORDINARY),
    "cell_id": (_string, ""),
    "crash_count": (_count, 0),
    "placement_error": (_string, ""),
    "domain": (_string, None),  # None: the desired LRP's domain, or "" (conformance.md 2)
    "instance_guid": (_string, ""),
    "crash_reason": (_string, ""),
    "address": (_string, ""),
}
TASK_SCHEMA: dict[str, tuple[Check, Any]] = {
    "task_guid": (_string, _REQUIRED),
    "state": (_one_of(*TASK_STATES), _REQUIRED),
    "created_at": (_number, _REQUIRED),
    "updated_at": (_optional_number, None),  # None: created_at
    "domain": (_string, ""),
    "cell_id": (_string, ""),
    "first_completed_at": (_optional_number, None),
    "failed": (_boolean, False),
    "failure_reason": (_string, ""),
    "result": (_string, ""),
    "callback_url": (_string, ""),
    "rejection_count": (_count, 0),
    "rejection_reason": (_string, ""),
}


def parse_case(data: Any) -> Snapshot:
    """Check a decoded case document and build the snapshot it describes."""
    case = _fields(data, "", CASE_SCHEMA)
    config = ConvergenceConfig(**_fields(case["config"], "config", CONFIG_SCHEMA))
    domains = {
        name: _optional_number(expiry, f"domains.{name}")
        for name, expiry in case["domains"].items()
    }
    cells = frozenset(_string(c, f"cells[{i}]") for i, c in enumerate(case["cells"]))

    desired: dict[str, DesiredLRP] = {}
    for i, item in enumerate(case["desired"]):
        d = DesiredLRP(**_fields(item, f"desired[{i}]", DESIRED_SCHEMA))
        if d.process_guid in desired:
            raise CaseError(f"desired[{i}].process_guid", f"duplicate {d.process_guid!r}")
        desired[d.process_guid] = d

    actual: list[ActualLRP] = []
    keys: set[tuple[str, int, str]] = set()
    for i, item in enumerate(case["actual"]):
        values = _fields(item, f"actual[{i}]", ACTUAL_SCHEMA)
        if values["domain"] is None:
            owner = desired.get(values["process_guid"])
            values["domain"] = owner.domain if owner is not None else ""
        row = ActualLRP(**values)
        if row.key in keys:
            raise CaseError(
                f"actual[{i}]",
                "duplicate (process_guid, index, presence) "
                f"({row.process_guid}, {row.index}, {row.presence})",
            )
        keys.add(row.key)
        actual.append(row)

    tasks: list[Task] = []
    guids: set[str] = set()
    for i, item in enumerate(case["tasks"]):
        values = _fields(item, f"tasks[{i}]", TASK_SCHEMA)
        if values["updated_at"] is None:
            values["updated_at"] = values["created_at"]
        task = Task(**values)
        if task.task_guid in guids:
            raise CaseError(f"tasks[{i}].task_guid", f"duplicate {task.task_guid!r}")
        guids.add(task.task_guid)
        tasks.append(task)

    return Snapshot(
        now=case["now"],
        cells=cells,
        domains=domains,
        desired=list(desired.values()),
        actual=actual,
        tasks=tasks,
        config=config,
    )


def load_case(path: Path) -> Snapshot:
    """Read and check one case file; a JSON syntax error is a ``CaseError`` too."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise CaseError("", f"not UTF-8 text ({error.reason})") from None
    except json.JSONDecodeError as error:
        raise CaseError("", f"not valid JSON: {error.msg} at line {error.lineno}") from None
    return parse_case(data)


def _ids(keys: list[LRPKey]) -> list[str]:
    """bbs.md 11: identifiers, each once, in plain string order ("w.10" < "w.2")."""
    return sorted({lrp_id(key) for key in keys})


def case_output(result: ConvergenceResult) -> dict[str, Any]:
    """The answer of ``python -m auction.bbs`` for one case (conformance.md 2)."""
    lrp = result.lrp
    tasks = result.tasks
    return {
        "lrp": {name: _ids(getattr(lrp, name)) for name in LRP_OUTPUT_KEYS},
        "tasks": {
            "start": sorted(set(tasks.start)),
            "fail": dict(sorted(tasks.fail.items())),
            "complete": sorted(set(tasks.complete)),
            "delete": sorted(set(tasks.delete)),
        },
        "metrics": dict(result.metrics),
    }


def run_case(snapshot: Snapshot) -> dict[str, Any]:
    return case_output(converge(snapshot))
