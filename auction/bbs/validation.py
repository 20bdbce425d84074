"""Field validation of desired state, worded exactly as the BBS words it (bbs.md 1.2, 1.3, 5, 7).

Pure functions over plain values, so the model layer, the admin, the JSON API and the
case runners share one implementation and one message order. Each function returns
the failed checks in the BBS's order; ``bbs_message`` joins them the way the BBS does
(``", "``), duplicates included: Diego really does report an empty rootfs twice.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from auction.engine.filters import rootfs_is_url

GUID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
ANNOTATION_LIMIT_BYTES = 10 * 1024
ROUTES_LIMIT_BYTES = 128 * 1024
UPDATABLE_DESIRED_LRP_FIELDS = ("instances", "routes", "annotation")


# -- the one registry of field limits (bbs.md 1.6) -------------------------------------
# Every door (the API, the admin, the dashboard's controls, ``manage.py diego``, scenario
# files) reaches these through the functions below: one rule, one limit, one message.
INT32_MAX = 2**31 - 1
# A simulator, not a data centre: one request creates at most this many rows [project rule].
MAX_INSTANCES = 100_000
# Sim seconds: about 31 years, far beyond any demo, far below a double's overflow in ns.
MAX_SIM_SECONDS = 1e9
NAME_MAX_LENGTH = 255
MAX_PORTS = 64


@dataclass(frozen=True, slots=True)
class Limit:
    """A number field's closed range; ``integer`` refuses fractions (and floats)."""

    minimum: float
    maximum: float
    integer: bool = True

    def admits(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.integer and not isinstance(value, int):
            return False
        return math.isfinite(value) and self.minimum <= value <= self.maximum


LIMITS: dict[str, Limit] = {
    "instances": Limit(0, MAX_INSTANCES),
    "memory_mb": Limit(0, INT32_MAX),
    "disk_mb": Limit(0, INT32_MAX),
    "max_pids": Limit(0, INT32_MAX),
    "start_timeout_ms": Limit(0, INT32_MAX),
    "port": Limit(0, 65535),
    "ttl": Limit(0, MAX_SIM_SECONDS, integer=False),
    "start_delay_s": Limit(0, MAX_SIM_SECONDS, integer=False),
    "crash_after_s": Limit(0, MAX_SIM_SECONDS, integer=False),
    "duration_s": Limit(0, MAX_SIM_SECONDS, integer=False),
    "crash_probability": Limit(0, 1, integer=False),
    "cell_index": Limit(0, INT32_MAX),
    "cell_capacity": Limit(1, INT32_MAX),
    # A kiosk link's life in days (dashboard.md AD9) [project rule].
    "kiosk_days": Limit(1, 3650),
}
# Text fields: at most this many characters, and storable (``storable_text``).
TEXT_LIMITS: dict[str, int] = {
    "process_guid": NAME_MAX_LENGTH, "task_guid": NAME_MAX_LENGTH, "domain": NAME_MAX_LENGTH,
    "cell_id": 64, "rootfs": 1024,
}


def out_of_range(limit: str, value: Any) -> bool:
    """``value`` is given (not None) and outside ``LIMITS[limit]``."""
    return value is not None and not LIMITS[limit].admits(value)


def text_too_long(field: str, value: str | None) -> bool:
    return value is not None and (len(value) > TEXT_LIMITS[field] or not storable_text(value))


def ports_invalid(ports: Any) -> bool:
    """Container ports: a list of at most 64 integers 0…65535 [project rule]."""
    if ports is None:
        return False
    if not isinstance(ports, list | tuple) or len(ports) > MAX_PORTS:
        return True
    return not all(LIMITS["port"].admits(p) for p in ports)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One failed check: the field it belongs to and the BBS's text for it."""

    field: str
    message: str


def storable_text(value: str) -> bool:
    """Text every door may pass on (bbs.md 1.5): no NUL (PostgreSQL can neither store nor
    compare one) and no lone surrogate (not UTF-8, so not storable or printable)."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def invalid(field: str) -> FieldError:
    return FieldError(field, f"Invalid field: {field}")


def bbs_message(errors: Iterable[FieldError]) -> str:
    return ", ".join(e.message for e in errors)


def annotation_too_long(annotation: str | None) -> bool:
    return annotation is not None and len(annotation.encode("utf-8")) > ANNOTATION_LIMIT_BYTES


def routes_size(routes: Mapping[str, Any] | None) -> int:
    """Bytes of each router's value as compact JSON, added up (bbs.md 1.2 step 9)."""
    if not routes:
        return 0
    return sum(
        len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        for value in routes.values()
    )


def routes_too_large(routes: Any) -> bool:
    """Too large, or not an object of router name → value at all."""
    if routes is None:
        return False
    if not isinstance(routes, Mapping):
        return True
    return routes_size(routes) > ROUTES_LIMIT_BYTES


def desired_lrp_errors(
    *,
    process_guid: str,
    domain: str,
    rootfs: str,
    instances: int | None = 0,
    memory_mb: int | None = 0,
    disk_mb: int | None = 0,
    max_pids: int | None = 0,
    annotation: str | None = "",
    routes: Any = None,
    ports: Any = None,
    start_timeout_ms: int | None = 0,
) -> list[FieldError]:
    """The checks of ``DesiredLRP.Validate`` in Diego's order (bbs.md 1.2, items 1-11);
    the ranges are the registry's (bbs.md 1.6): below 0 is Diego's check, above the
    limit the project's, with the same message."""
    errors: list[FieldError] = []
    if not domain or text_too_long("domain", domain):
        errors.append(invalid("domain"))
    if not rootfs:
        errors.append(invalid("rootfs"))
    if not rootfs_is_url(rootfs or "") or text_too_long("rootfs", rootfs):
        errors.append(invalid("rootfs"))
    if out_of_range("instances", instances):
        errors.append(invalid("instances"))
    if out_of_range("memory_mb", memory_mb):
        errors.append(invalid("memory_mb"))
    if out_of_range("disk_mb", disk_mb):
        errors.append(invalid("disk_mb"))
    if annotation_too_long(annotation):
        errors.append(invalid("annotation"))
    if out_of_range("max_pids", max_pids):
        errors.append(invalid("max_pids"))
    if routes_too_large(routes):
        errors.append(invalid("routes"))
    # Diego validates the DesiredLRPKey again after the definition: the domain once more.
    if not domain or text_too_long("domain", domain):
        errors.append(invalid("domain"))
    if not GUID_RE.match(process_guid or "") or text_too_long("process_guid", process_guid):
        errors.append(invalid("process_guid"))
    # [project rule] after Diego's checks: the fields Diego checks elsewhere or not at all.
    if ports_invalid(ports):
        errors.append(invalid("ports"))
    if out_of_range("start_timeout_ms", start_timeout_ms):
        errors.append(invalid("start_timeout_ms"))
    return errors


def simulation_errors(
    *, start_delay_s: float | None = 0.0, crash_probability: float | None = 0.0,
    crash_after_s: float | None = 0.0,
) -> list[FieldError]:
    """The simulator's knobs beside a DesiredLRP [project rule]: times ≥ 0, a probability."""
    errors: list[FieldError] = []
    for name, value in (("start_delay_s", start_delay_s), ("crash_probability", crash_probability),
                        ("crash_after_s", crash_after_s)):
        if out_of_range(name, value):
            errors.append(invalid(name))
    return errors


def desired_lrp_update_errors(update: Mapping[str, Any]) -> list[FieldError]:
    """``DesiredLRPUpdate.Validate`` plus the project rule on other members (bbs.md 1.3)."""
    errors: list[FieldError] = []
    if out_of_range("instances", update.get("instances")):
        errors.append(invalid("instances"))
    if annotation_too_long(update.get("annotation")):
        errors.append(invalid("annotation"))
    if routes_too_large(update.get("routes")):
        errors.append(invalid("routes"))
    for member in update:
        if member not in UPDATABLE_DESIRED_LRP_FIELDS:
            errors.append(invalid(member))
    return errors


def task_errors(
    *,
    task_guid: str,
    domain: str,
    rootfs: str,
    memory_mb: int | None = 0,
    disk_mb: int | None = 0,
    max_pids: int | None = 0,
    annotation: str | None = "",
    duration_s: float | None = 0.0,
) -> list[FieldError]:
    """``TaskDefinition`` checks in the BBS's order; the rootfs message appears once (bbs.md 7)."""
    errors: list[FieldError] = []
    if not GUID_RE.match(task_guid or "") or text_too_long("task_guid", task_guid):
        errors.append(invalid("task_guid"))
    if not domain or text_too_long("domain", domain):
        errors.append(invalid("domain"))
    if not rootfs or not rootfs_is_url(rootfs) or text_too_long("rootfs", rootfs):
        errors.append(invalid("rootfs"))
    if out_of_range("memory_mb", memory_mb):
        errors.append(invalid("memory_mb"))
    if out_of_range("disk_mb", disk_mb):
        errors.append(invalid("disk_mb"))
    if out_of_range("max_pids", max_pids):
        errors.append(invalid("max_pids"))
    if annotation_too_long(annotation):
        errors.append(invalid("annotation"))
    if out_of_range("duration_s", duration_s):
        errors.append(invalid("duration_s"))
    return errors


def domain_errors(*, domain: str, ttl: float | None) -> list[FieldError]:
    """Upserting a domain (bbs.md 5); a negative TTL is refused [project rule]."""
    errors: list[FieldError] = []
    if not domain or text_too_long("domain", domain):
        errors.append(invalid("domain"))
    if out_of_range("ttl", ttl):
        errors.append(invalid("ttl"))
    return errors


def cell_errors(
    *,
    cell_id: str,
    index: int | None,
    memory_mb: int | None,
    disk_mb: int | None,
    containers: int | None,
    proxy_memory_mb: int | None = 0,
) -> list[FieldError]:
    """A cell's capacity: totals are at least 1 in every dimension (auction.md 3)."""
    errors: list[FieldError] = []
    if not GUID_RE.match(cell_id or "") or text_too_long("cell_id", cell_id):
        errors.append(invalid("cell_id"))
    if out_of_range("cell_index", index):
        errors.append(invalid("index"))
    for name, value in (("memory_mb", memory_mb), ("disk_mb", disk_mb), ("containers", containers)):
        if out_of_range("cell_capacity", value):
            errors.append(invalid(name))
    if out_of_range("memory_mb", proxy_memory_mb):
        errors.append(invalid("proxy_memory_mb"))
    return errors
