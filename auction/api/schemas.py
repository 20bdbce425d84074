"""Request shapes: one table per body, used to check types and to write the OpenAPI document.

Types are checked before the BBS's own validation (``auction.bbs.validation``), which
then words the range checks exactly as Diego does. A member of the wrong JSON type
answers ``Invalid field: <member>``, as the BBS answers a body it cannot unmarshal
into its record. Bounds the BBS does not have keep the database safe [project rule]:
32-bit integers (PostgreSQL's ``integer``), column lengths, no NUL characters or lone
surrogates (PostgreSQL refuses both), finite numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from auction.bbs.validation import (
    INT32_MAX,
    LIMITS,
    MAX_PORTS,
    TEXT_LIMITS,
    FieldError,
    invalid,
    storable_text,
)

# The limits are the registry's (bbs.md 1.6), shared with every other door.
MAX_INSTANCES = LIMITS["instances"].maximum


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    kind: str  # string, integer, number, boolean, strings, integers, object, json
    description: str = ""
    max_length: int | None = None
    maximum: int | float | None = None
    enum: tuple[str, ...] | None = None
    required: bool = False
    nullable: bool = False

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "string": {"type": "string"},
            "integer": {"type": "integer"},
            "number": {"type": "number"},
            "boolean": {"type": "boolean"},
            "strings": {"type": "array", "items": {"type": "string"}},
            "integers": {"type": "array", "maxItems": MAX_PORTS,
                         "items": {"type": "integer", "minimum": LIMITS["port"].minimum,
                                   "maximum": LIMITS["port"].maximum}},
            "object": {"type": "object"},
            "json": {},
        }[self.kind].copy()
        if self.max_length is not None:
            schema["maxLength"] = self.max_length
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        if self.description:
            schema["description"] = self.description
        return schema


def _text_ok(value: str) -> bool:
    return storable_text(value)


def _json_ok(value: Any, depth: int = 0) -> bool:
    """Any JSON PostgreSQL's jsonb can store; nesting bounded so no writer recurses deeply."""
    if depth > 64:
        return False
    if isinstance(value, str):
        return _text_ok(value)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_json_ok(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(_text_ok(k) and _json_ok(v, depth + 1) for k, v in value.items())
    return value is None or isinstance(value, bool | int)


def _int_ok(value: Any, maximum: int | float | None) -> bool:
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    top = INT32_MAX if maximum is None else maximum
    return -INT32_MAX - 1 <= value <= top


def member_ok(member: Member, value: Any) -> bool:
    kind = member.kind
    if value is None:
        return member.nullable
    if kind == "string":
        return (isinstance(value, str) and _text_ok(value)
                and (member.max_length is None or len(value) <= member.max_length)
                and (member.enum is None or value in member.enum))
    if kind == "integer":
        return _int_ok(value, member.maximum)
    if kind == "number":
        return (isinstance(value, int | float) and not isinstance(value, bool)
                and math.isfinite(value) and abs(value) <= 1e12
                and (member.maximum is None or value <= member.maximum))
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "strings":
        return (isinstance(value, list) and len(value) <= 256
                and all(isinstance(v, str) and _text_ok(v) and len(v) <= 255 for v in value))
    if kind == "integers":
        return (isinstance(value, list) and len(value) <= MAX_PORTS
                and all(LIMITS["port"].admits(v) for v in value))
    if kind == "object":
        return isinstance(value, dict) and _json_ok(value)
    if kind == "json":
        return _json_ok(value)
    raise AssertionError(f"unknown member kind {kind}")


def type_errors(body: Mapping[str, Any], members: tuple[Member, ...]) -> list[FieldError]:
    """Members of the wrong type or out of the storable range, in the table's order."""
    by_name = {m.name: m for m in members}
    return [invalid(m.name) for name, m in by_name.items()
            if name in body and not member_ok(m, body[name])]


DESIRED_LRP = (
    Member("process_guid", "string", "The key; ^[a-zA-Z0-9_-]+$.", max_length=TEXT_LIMITS["process_guid"], required=True),
    Member("domain", "string", "The domain whose freshness governs its extras.", max_length=TEXT_LIMITS["domain"],
           required=True),
    Member("rootfs", "string", "A URL with a scheme, e.g. preloaded:cflinuxfs4 or "
           "docker:///org/img#tag.", max_length=TEXT_LIMITS["rootfs"], required=True),
    Member("instances", "integer", "Wanted instances (0 is valid).", maximum=MAX_INSTANCES),
    Member("memory_mb", "integer", "Memory per instance, MB (0 = unlimited).", maximum=LIMITS["memory_mb"].maximum),
    Member("disk_mb", "integer", "Disk per instance, MB (0 = unlimited).", maximum=LIMITS["disk_mb"].maximum),
    Member("max_pids", "integer", "0 = unlimited.", maximum=LIMITS["max_pids"].maximum),
    Member("placement_tags", "strings", "Tags a cell must carry."),
    Member("volume_drivers", "strings", "Volume drivers a cell must offer."),
    Member("routes", "object", "Router name → opaque JSON; 131,072 bytes at most."),
    Member("annotation", "string", "Arbitrary metadata; 10,240 bytes at most."),
    Member("ports", "integers", "Container ports."),
    Member("start_timeout_ms", "integer", maximum=LIMITS["start_timeout_ms"].maximum),
    Member("start_delay_s", "number", "Simulation: sim seconds from CLAIMED to RUNNING.", maximum=LIMITS["start_delay_s"].maximum),
    Member("crash_probability", "number", "Simulation: chance (0-1) that a start crashes.", maximum=LIMITS["crash_probability"].maximum),
    Member("crash_after_s", "number", "Simulation: sim seconds from RUNNING to that crash.", maximum=LIMITS["crash_after_s"].maximum),
)

DESIRED_LRP_UPDATE = (
    Member("instances", "integer", maximum=MAX_INSTANCES),
    Member("routes", "object"),
    Member("annotation", "string"),
)

TASK = (
    Member("task_guid", "string", "The key; ^[a-zA-Z0-9_-]+$.", max_length=TEXT_LIMITS["task_guid"], required=True),
    Member("domain", "string", max_length=TEXT_LIMITS["domain"], required=True),
    Member("rootfs", "string", max_length=TEXT_LIMITS["rootfs"], required=True),
    Member("memory_mb", "integer", maximum=LIMITS["memory_mb"].maximum),
    Member("disk_mb", "integer", maximum=LIMITS["disk_mb"].maximum),
    Member("max_pids", "integer", maximum=LIMITS["max_pids"].maximum),
    Member("placement_tags", "strings"),
    Member("volume_drivers", "strings"),
    Member("annotation", "string"),
    Member("completion_callback_url", "string", "Called when the task completes.", max_length=200),
    Member("duration_s", "number", "Simulation: sim seconds the task runs once started.", maximum=LIMITS["duration_s"].maximum),
    Member("placement_mode", "string", "Which auction places it (otto.md 9).",
           enum=("diego", "otto")),
)

DOMAIN_UPSERT = (
    Member("ttl", "number", "Seconds until the domain goes stale; 0 = never.",
           maximum=LIMITS["ttl"].maximum, required=True),
)


def schema_of(members: tuple[Member, ...], *, closed: bool = True) -> dict[str, Any]:
    """The JSON Schema of a body: ``closed`` bodies refuse members not listed (400)."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {m.name: m.json_schema() for m in members},
        "additionalProperties": not closed,
    }
    required = [m.name for m in members if m.required]
    if required:
        schema["required"] = required
    return schema
