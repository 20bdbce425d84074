"""Reading, validating and running auction case files (conformance.md 1, auction.md 10).

A bad case raises ``CaseError`` whose one-line message names the offending field, e.g.
``cells[2].total.memory_mb: expected an integer >= 1, got 0``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .batch import identifier
from .commit import commit_all
from .schedule import schedule
from .types import (
    DEFAULT_LOCALITY_OFFSET,
    DEFAULT_ROOTFS,
    DEFAULT_STARTING_CONTAINER_WEIGHT,
    AuctionConfig,
    AuctionResult,
    CellState,
    LRPWork,
    Resources,
    TaskWork,
    WorkItem,
)

T = TypeVar("T")
#: |locality_offset| bound: keeps ``float(locality_offset * n)`` finite and exact enough.
MAX_LOCALITY_OFFSET = 10**12


class CaseError(ValueError):
    """A file that is not a valid auction case."""


@dataclass(slots=True)
class AuctionCase:
    name: str
    config: AuctionConfig
    cells: list[CellState]
    work: list[WorkItem]
    expect: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def _fail(path: str, problem: str) -> CaseError:
    return CaseError(f"{path}: {problem}")


def _show(value: Any) -> str:
    return json.dumps(value)[:60]


def _object(value: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...]
            ) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, f"expected an object, got {_show(value)}")
    for key in value:
        if key not in required and key not in optional:
            raise _fail(f"{path}.{key}" if path else key, "unknown field")
    for key in required:
        if key not in value:
            raise _fail(f"{path}.{key}" if path else key, "missing required field")
    return value


# Diego's integer fields are int32: the registry's bound (bbs.md 1.6). Not imported from
# auction.bbs.validation, which imports the engine; a test checks the two agree.
INT32_MAX = 2**31 - 1


def _int(value: Any, path: str, minimum: int | None = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"expected an integer, got {_show(value)}")
    if minimum is not None and value < minimum:
        raise _fail(path, f"expected an integer >= {minimum}, got {value}")
    if value > INT32_MAX:
        # Diego's fields are int32 (bbs.md 1.6); past that a case is a mistake, refused here
        # rather than carried through every score as a huge integer (conformance.md 3).
        raise _fail(path, f"expected an integer <= {INT32_MAX}, got {value}")
    return value


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(path, f"expected a finite number, got {_show(value)}")
    return float(value)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(path, f"expected true or false, got {_show(value)}")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(path, f"expected a string, got {_show(value)}")
    return value


def _strings(value: Any, path: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _fail(path, f"expected a list of strings, got {_show(value)}")
    return tuple(_str(v, f"{path}[{i}]") for i, v in enumerate(value))


def _list(value: Any, path: str, parse: Callable[[Any, str, int], T]) -> list[T]:
    if not isinstance(value, list):
        raise _fail(path, f"expected a list, got {_show(value)}")
    return [parse(v, f"{path}[{i}]", i) for i, v in enumerate(value)]


def _resources(value: Any, path: str, minimum: int) -> Resources:
    # max_pids is accepted and ignored: it plays no part in placement (auction.md 3).
    doc = _object(value, path, ("memory_mb", "disk_mb", "containers"), ("max_pids",))
    if "max_pids" in doc:
        _int(doc["max_pids"], f"{path}.max_pids")
    return Resources(*(_int(doc[k], f"{path}.{k}", minimum)
                       for k in ("memory_mb", "disk_mb", "containers")))


_CELL_LISTS = ("lrps", "tasks", "preloaded_rootfses", "rootfs_providers", "volume_drivers",
               "placement_tags", "optional_placement_tags")


def _cell(value: Any, path: str, position: int) -> CellState:
    doc = _object(value, path, ("cell_id", "zone", "total"),
                  ("index", "available", "starting_containers", "proxy_memory_mb", *_CELL_LISTS))
    total = _resources(doc["total"], f"{path}.total", 1)  # a 0 total is invalid (auction.md 3)
    lists: dict[str, Any] = {k: _strings(doc[k], f"{path}.{k}") for k in _CELL_LISTS if k in doc}
    return CellState(
        cell_id=_str(doc["cell_id"], f"{path}.cell_id"),
        zone=_str(doc["zone"], f"{path}.zone"),
        index=_int(doc.get("index", position), f"{path}.index"),
        total=total,
        available=(_resources(doc["available"], f"{path}.available", 0)
                   if "available" in doc else total),
        starting_containers=_int(doc.get("starting_containers", 0), f"{path}.starting_containers"),
        proxy_memory_mb=_int(doc.get("proxy_memory_mb", 0), f"{path}.proxy_memory_mb"),
        **lists,
    )


_WORK_OPTIONAL = ("rootfs", "volume_drivers", "placement_tags", "max_pids")


def _work_common(doc: Mapping[str, Any], path: str) -> dict[str, Any]:
    if "max_pids" in doc:
        _int(doc["max_pids"], f"{path}.max_pids")
    return {
        "memory_mb": _int(doc["memory_mb"], f"{path}.memory_mb"),
        "disk_mb": _int(doc["disk_mb"], f"{path}.disk_mb"),
        "rootfs": _str(doc.get("rootfs", DEFAULT_ROOTFS), f"{path}.rootfs"),
        "volume_drivers": _strings(doc.get("volume_drivers", []), f"{path}.volume_drivers"),
        "placement_tags": _strings(doc.get("placement_tags", []), f"{path}.placement_tags"),
    }


def _lrp(value: Any, path: str, _: int) -> LRPWork:
    doc = _object(value, path, ("process_guid", "index", "memory_mb", "disk_mb"), _WORK_OPTIONAL)
    return LRPWork(process_guid=_str(doc["process_guid"], f"{path}.process_guid"),
                   index=_int(doc["index"], f"{path}.index"), **_work_common(doc, path))


def _task(value: Any, path: str, _: int) -> TaskWork:
    doc = _object(value, path, ("task_guid", "memory_mb", "disk_mb"), _WORK_OPTIONAL)
    return TaskWork(task_guid=_str(doc["task_guid"], f"{path}.task_guid"),
                    **_work_common(doc, path))


def _config(value: Any) -> AuctionConfig:
    doc = _object(value, "config", (), ("starting_container_weight", "bin_pack_first_fit_weight",
                                        "starting_container_count_maximum", "locality_offset",
                                        "go_compat"))
    locality = _int(doc.get("locality_offset", DEFAULT_LOCALITY_OFFSET),
                    "config.locality_offset", None)
    if abs(locality) > MAX_LOCALITY_OFFSET:
        raise _fail("config.locality_offset", f"expected |value| <= {MAX_LOCALITY_OFFSET}")
    return AuctionConfig(
        starting_container_weight=_number(
            doc.get("starting_container_weight", DEFAULT_STARTING_CONTAINER_WEIGHT),
            "config.starting_container_weight"),
        bin_pack_first_fit_weight=_number(doc.get("bin_pack_first_fit_weight", 0.0),
                                          "config.bin_pack_first_fit_weight"),
        starting_container_count_maximum=_int(doc.get("starting_container_count_maximum", 0),
                                              "config.starting_container_count_maximum", None),
        locality_offset=locality,
        go_compat=_bool(doc.get("go_compat", False), "config.go_compat"),
    )


def parse_case(doc: Any) -> AuctionCase:
    """Validate a decoded case document (conformance.md 1); raises ``CaseError``."""
    top = _object(doc, "", ("cells",), ("name", "config", "lrps", "tasks", "expect"))
    cells = _list(top["cells"], "cells", _cell)
    seen: dict[str, int] = {}
    for i, cell in enumerate(cells):
        if cell.cell_id in seen:
            raise _fail(f"cells[{i}].cell_id", f"duplicate cell id {cell.cell_id!r}")
        seen[cell.cell_id] = i
    lrps = _list(top.get("lrps", []), "lrps", _lrp)
    tasks = _list(top.get("tasks", []), "tasks", _task)
    task_guids = {t.task_guid for t in tasks}
    for i, lrp in enumerate(lrps):
        if identifier(lrp) in task_guids:
            raise _fail(f"lrps[{i}]", f"identifier {identifier(lrp)!r} equals a task_guid")
    return AuctionCase(
        name=_str(top.get("name", ""), "name"),
        config=_config(top.get("config", {})),
        cells=cells,
        work=[*lrps, *tasks],
        expect=top.get("expect"),
    )


def load_case(path: str | Path) -> AuctionCase:
    """Read and validate a case file; every problem becomes a one-line ``CaseError``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(f"{path.name}: cannot read: {exc}") from None
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise CaseError(f"{path.name}: not valid JSON: {exc}") from None
    try:
        return parse_case(doc)
    except CaseError as exc:
        raise CaseError(f"{path.name}: {exc}") from None


def run_case(case: AuctionCase, *, explain: bool = False) -> AuctionResult:
    """One auction as auction.md 10 runs a case: schedule, then every cell commits.

    All cells answered, none is evacuating, none fails the commit; each performs against
    its ``available`` resources. Cases always use the ``diego`` strategy.
    """
    result = schedule(case.cells, case.work, case.config, explain=explain)
    return commit_all(result, case.cells)


def case_output(case: AuctionCase) -> dict[str, Any]:
    """The stdout object of ``python -m auction.engine`` for one case."""
    return run_case(case).to_case_output()
