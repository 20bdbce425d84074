"""The lines of a cfdot capture, each checked (plans.md 3.1).

Every line's kind is told by its keys (``kind_of``); every field the simulator keeps is
checked against the shapes Diego prints (``auction.sim.cfdot_fields``), and a line that
breaks one is refused with ``CaptureError``: ``file:line: field: why``. Secrets are never
read. What the lines say
becomes a cluster in ``auction.sim.cfdot_read``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from auction.bbs import types as core
from auction.bbs.validation import storable_text
from auction.sim.cfdot_fields import CaptureError, Line, quoted

#: Below this a "timestamp" cannot be UNIX nanoseconds (before 1973): it is the
#: simulator's own clock printed by ``diego dump``, kept as it is (origin 0).
UNIX_NS_FLOOR = 10**17
DEFAULT_ZONE = "default"
#: The longest ids and names the live cluster stores (its columns).
ID_LIMIT = 64
NAME_LIMIT = 255
#: What the simulator gives an instance or task the capture cannot time.
START_DELAY_S = 3.0
TASK_RUN_S = 60.0

ACTUAL_STATES = ("UNCLAIMED", "CLAIMED", "RUNNING", "CRASHED")
PRESENCES = ("ORDINARY", "EVACUATING", "SUSPECT")  # proto values 0, 1, 2
TASK_STATES = ("Invalid", "Pending", "Running", "Completed", "Resolving")  # proto values 0..4
TASK_STATE_CORE = {"Pending": core.PENDING, "Running": core.TASK_RUNNING,
                    "Completed": core.COMPLETED, "Resolving": core.RESOLVING}


@dataclass(slots=True)
class Capture:
    """What the lines said, by kind, before it becomes a cluster."""

    cells: dict[str, Line] = field(default_factory=dict)
    states: dict[str, Line] = field(default_factory=dict)
    infos: dict[str, Line] = field(default_factory=dict)
    desired: dict[str, Line] = field(default_factory=dict)
    actuals: dict[tuple[str, int, str], Line] = field(default_factory=dict)
    # Each actual row as it will be, ``since`` still in UNIX ns (the origin comes last).
    rows: dict[tuple[str, int, str], core.ActualLRP] = field(default_factory=dict)
    tasks: dict[str, Line] = field(default_factory=dict)
    domains: list[str] | None = None
    timestamps: list[int] = field(default_factory=list)


def kind_of(data: Any) -> str | None:
    """A line's cfdot command, by its keys (plans.md 3.1); None when it is none of them."""
    if isinstance(data, str):
        return "domains"
    if not isinstance(data, dict):
        return None
    if "event" in data and "at" in data:
        return "event"  # the simulator's own event lines of ``diego dump``
    if "AvailableResources" in data or "TotalResources" in data or "RootFSProviders" in data:
        return "cell-states"
    if "task_guid" in data:
        return "tasks"
    if "instance" in data or "evacuating" in data:
        return "actual-lrp-groups"
    if "process_guid" in data:
        if "instances" in data:
            return "desired-lrps" if ("action" in data or "env" in data or "start_timeout_ms" in data
                                      or "modification_tag" in data) else "scheduling-infos"
        return "actual-lrps"
    if "cell_id" in data and ("rep_address" in data or "capacity" in data
                              or "rootfs_provider_list" in data):
        return "cells"
    return None


def take(capture: Capture, line: Line, data: Any) -> None:
    kind = kind_of(data)
    if kind is None:
        keys = ", ".join(sorted(data)[:4]) if isinstance(data, dict) else type(data).__name__
        raise CaptureError(f"{line.source}:{line.number}: not a line of any cfdot command "
                           f"(keys: {keys})")
    if kind == "event":
        return
    if kind == "domains":
        if not data:
            raise line.fail("domain", "empty")
        if len(data) > NAME_LIMIT:
            raise line.fail("domain", f"longer than {NAME_LIMIT} characters")
        capture.domains = capture.domains if capture.domains is not None else []
        if data not in capture.domains:
            capture.domains.append(data)
        return
    if kind == "actual-lrp-groups":
        # deprecated actual-lrp-groups: the group's rows, each an ordinary actual-LRP row.
        for member in ("instance", "evacuating"):
            row = data.get(member)
            if row is not None:
                if not isinstance(row, dict):
                    raise line.fail(member, f"expected an object, got {quoted(row)}")
                _actual(capture, Line(line.source, line.number, row))
        return
    {"cells": _cell, "cell-states": _state, "desired-lrps": _desired,
     "scheduling-infos": _info, "actual-lrps": _actual, "tasks": _task}[kind](capture, line)


def unstorable(data: Any, path: str = "") -> str | None:
    """The first member (dotted path) whose text no database can keep: a NUL or a lone
    surrogate, which JSON's ``\\u`` escapes can carry (the same rule as every door's,
    bbs.md 1.5); None when there is none."""
    if isinstance(data, str):
        return None if storable_text(data) else (path or "value")
    if isinstance(data, dict):
        for key, value in data.items():
            where = f"{path}.{key}" if path else str(key)
            if not storable_text(str(key)):
                return where
            found = unstorable(value, where)
            if found:
                return found
    elif isinstance(data, list):
        for value in data:
            found = unstorable(value, path)
            if found:
                return found
    return None


def _unique(table: dict[Any, Line], key: Any, line: Line, field_name: str, what: str) -> None:
    if key in table:
        earlier = table[key]
        raise line.fail(field_name, f"{what} already given at {earlier.source}:{earlier.number}")
    table[key] = line


def _cell(capture: Capture, line: Line) -> None:
    cell_id = line.text("cell_id", required=True, limit=ID_LIMIT)
    line.text("zone", limit=ID_LIMIT)
    capacity = line.obj("capacity")
    for key in ("memory_mb", "disk_mb", "containers"):
        line.integer(key, where=capacity, label=f"capacity.{key}")
    providers = line.get("rootfs_provider_list", [])
    if not isinstance(providers, list) or not all(isinstance(p, dict) and isinstance(p.get("name"), str)
                                                  for p in providers):
        raise line.fail("rootfs_provider_list", f"expected a list of {{name, properties}}, got "
                        f"{quoted(providers)}")
    for p in providers:
        line.strings("properties", where=p, label="rootfs_provider_list.properties")
    line.strings("placement_tags")
    line.strings("optional_placement_tags")
    _unique(capture.cells, cell_id, line, "cell_id", f"cell {cell_id!r}")


#: A rep's ``/state`` saved by hand: ``CELL_ID.state.json`` (gzip too) names its cell.
_STATE_FILE = re.compile(r"^(?P<cell>[^/\\]+?)\.state(?:\.json)?(?:\.gz)?$")


def _state(capture: Capture, line: Line) -> None:
    if line.get("cell_id") is None:
        # A rep before 2017 printed no cell_id (the cfdot reference, section 2): its file's
        # name is the only place left to say which cell it is.
        named = _STATE_FILE.match(line.source)
        if named is None:
            raise line.fail("cell_id", "missing (a rep's /state from before 2017 names no cell: "
                            "save it as CELL_ID.state.json)")
        line.data["cell_id"] = named["cell"]
    cell_id = line.text("cell_id", required=True, limit=ID_LIMIT)
    line.integer("cell_index")
    for block in ("TotalResources", "AvailableResources"):
        resources = line.obj(block)
        for key in ("MemoryMB", "DiskMB", "Containers"):
            line.integer(key, where=resources, label=f"{block}.{key}", minimum=None)
    providers = line.obj("RootFSProviders")
    for scheme, provider in providers.items():
        if provider is not None and not isinstance(provider, dict):
            raise line.fail(f"RootFSProviders.{scheme}", f"expected an object, got {quoted(provider)}")
    line.text("Zone", limit=ID_LIMIT)
    line.flag("Evacuating")
    line.strings("VolumeDrivers")
    line.strings("PlacementTags")
    line.strings("OptionalPlacementTags")
    line.integer("ProxyMemoryAllocationMB")
    _unique(capture.states, cell_id, line, "cell_id", f"cell state of {cell_id!r}")


def _lrp_common(line: Line) -> str:
    guid = line.text("process_guid", required=True, limit=NAME_LIMIT)
    line.text("domain", limit=NAME_LIMIT)
    line.integer("instances")
    line.integer("memory_mb")
    line.integer("disk_mb")
    line.text("rootfs", limit=1024)
    line.strings("placement_tags")
    return guid


def _info(capture: Capture, line: Line) -> None:
    guid = _lrp_common(line)
    line.text("epoch", limit=ID_LIMIT)
    line.integer("index")  # plans.md 3.1: the modification tag's index, not an instance's
    placement = line.obj("volume_placement")
    line.strings("driver_names", where=placement, label="volume_placement.driver_names")
    _unique(capture.infos, guid, line, "process_guid", f"scheduling info of {guid!r}")


def _desired(capture: Capture, line: Line) -> None:
    guid = _lrp_common(line)
    tag = line.obj("modification_tag")
    if tag:
        line.text("epoch", where=tag, label="modification_tag.epoch", limit=ID_LIMIT)
        line.integer("index", where=tag, label="modification_tag.index")
    ports = line.get("ports", [])
    if not isinstance(ports, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in ports):
        raise line.fail("ports", f"expected a list of port numbers, got {quoted(ports)}")
    volume_drivers(line)
    _unique(capture.desired, guid, line, "process_guid", f"desired LRP {guid!r}")


def volume_drivers(line: Line) -> tuple[str, ...]:
    mounts = line.get("volume_mounts", [])
    if not isinstance(mounts, list) or not all(isinstance(m, dict) for m in mounts):
        raise line.fail("volume_mounts", f"expected a list of objects, got {quoted(mounts)}")
    drivers: list[str] = []
    for mount in mounts:
        driver = mount.get("driver")
        if driver is not None and not isinstance(driver, str):
            raise line.fail("volume_mounts.driver", f"expected a string, got {quoted(driver)}")
        if driver and driver not in drivers:
            drivers.append(driver)
    return tuple(drivers)


def _timestamp(capture: Capture, line: Line, key: str) -> int:
    value = line.integer(key)
    if value:
        capture.timestamps.append(value)
    return value


def _actual(capture: Capture, line: Line) -> None:
    """An actual LRP row: the common, well-formed line is checked in one pass (a capture
    holds 250,000 of them); anything unusual goes through the field-by-field checks,
    which name what is wrong."""
    d = line.data
    g = d.get
    guid: Any = g("process_guid")
    index: Any = g("index")
    state: Any = g("state")
    presence: Any = g("presence")
    since, tag, ports = g("since"), g("modification_tag"), g("ports")
    texts = (g("domain"), g("cell_id"), g("instance_guid"), g("address"))
    crash_count, crash_reason, error = g("crash_count"), g("crash_reason"), g("placement_error")
    if not _plain_actual(guid, index, state, presence, since, tag, ports, texts, crash_count,
                         crash_reason, error):
        _actual_checked(line)
        presence = line.enum("presence", PRESENCES, required=False)
        state = line.enum("state", ACTUAL_STATES)
    presence = presence or core.ORDINARY
    key = (guid, index, presence)
    # plans.md 3.1: one row per (process_guid, index, presence); no double counting.
    _unique(capture.actuals, key, line, "presence", f"row {guid}/{index}/{presence}")
    if since:
        capture.timestamps.append(since)
    occupies = state in _HOLDING
    tag = tag or {}
    capture.rows[key] = core.ActualLRP(
        process_guid=guid, index=index, state=state, presence=presence,
        # plans.md 3.1: UNCLAIMED and CRASHED rows occupy no cell.
        cell_id=(texts[1] or "") if occupies else "",
        instance_guid=(texts[2] or "") if occupies else "",
        domain=texts[0] or "", since=since or 0, crash_count=crash_count or 0,
        crash_reason=crash_reason or "", placement_error=error or "", address=texts[3] or "",
        ports=tuple((p.get("container_port") or 0, p.get("host_port") or 0) for p in ports or ()),
        modification_tag_epoch=tag.get("epoch") or "", modification_tag_index=tag.get("index") or 0)


def _plain_actual(guid: Any, index: Any, state: Any, presence: Any, since: Any, tag: Any, ports: Any,
                  texts: tuple[Any, ...], crash_count: Any, crash_reason: Any, error: Any) -> bool:
    """Whether an actual LRP line is well formed, in one pass (no message: see ``_actual_checked``)."""
    if type(guid) is not str or not 0 < len(guid) <= NAME_LIMIT:
        return False
    if type(index) is not int or index < 0 or state not in _ACTUAL_STATE_SET:
        return False
    if presence is not None and presence not in _PRESENCE_SET:
        return False
    if since is not None and (type(since) is not int or since < 0):
        return False
    if texts[0] is not None and (type(texts[0]) is not str or len(texts[0]) > NAME_LIMIT):
        return False
    for text in texts[1:]:
        if text is not None and (type(text) is not str or len(text) > ID_LIMIT):
            return False
    if crash_count is not None and (type(crash_count) is not int or crash_count < 0):
        return False
    if (crash_reason is not None and type(crash_reason) is not str) or (error is not None and type(error) is not str):
        return False
    if tag is not None:
        if type(tag) is not dict:
            return False
        epoch, tag_index = tag.get("epoch"), tag.get("index")
        if epoch is not None and (type(epoch) is not str or len(epoch) > ID_LIMIT):
            return False
        if tag_index is not None and (type(tag_index) is not int or tag_index < 0):
            return False
    if ports is not None:
        if type(ports) is not list:
            return False
        for p in ports:
            if type(p) is not dict:
                return False
            for key in ("container_port", "host_port"):
                value = p.get(key)
                if value is not None and (type(value) is not int or value < 0):
                    return False
    return True


_ACTUAL_STATE_SET = frozenset(ACTUAL_STATES)
_PRESENCE_SET = frozenset(PRESENCES)
_HOLDING = frozenset({core.CLAIMED, core.RUNNING})


def _actual_checked(line: Line) -> None:
    """Every check of an actual LRP line, one field at a time (raises on the first)."""
    line.text("process_guid", required=True, limit=NAME_LIMIT)
    line.text("domain", limit=NAME_LIMIT)
    line.integer("index")
    line.enum("presence", PRESENCES, required=False)  # before 2018 (plans.md 3.1): ordinary
    line.enum("state", ACTUAL_STATES)
    line.text("cell_id", limit=ID_LIMIT)
    line.text("instance_guid", limit=ID_LIMIT)
    line.text("address", limit=ID_LIMIT)
    line.text("placement_error")
    line.text("crash_reason")
    line.integer("crash_count")
    line.integer("since")
    ports = line.get("ports", [])
    if not isinstance(ports, list) or not all(isinstance(p, dict) for p in ports):
        raise line.fail("ports", f"expected a list of port mappings, got {quoted(ports)}")
    for p in ports:
        line.integer("container_port", where=p, label="ports.container_port")
        line.integer("host_port", where=p, label="ports.host_port")
    tag = line.obj("modification_tag")
    line.text("epoch", where=tag, label="modification_tag.epoch", limit=ID_LIMIT)
    line.integer("index", where=tag, label="modification_tag.index")


def _task(capture: Capture, line: Line) -> None:
    guid = line.text("task_guid", required=True, limit=NAME_LIMIT)
    line.text("domain", limit=NAME_LIMIT)
    line.text("cell_id", limit=ID_LIMIT)
    line.text("rootfs", limit=1024)
    for key in ("result", "failure_reason", "rejection_reason"):
        line.text(key)
    line.text("completion_callback_url", limit=200)
    state = line.enum("state", TASK_STATES)
    if state == "Invalid":
        raise line.fail("state", 'unknown value "Invalid"')
    for key in ("created_at", "updated_at", "first_completed_at"):
        _timestamp(capture, line, key)
    line.integer("memory_mb")
    line.integer("disk_mb")
    line.integer("rejection_count")
    line.flag("failed")
    volume_drivers(line)
    _unique(capture.tasks, guid, line, "task_guid", f"task {guid!r}")


