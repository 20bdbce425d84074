"""Field validation of desired state, worded exactly as the BBS words it (bbs.md 1.2, 1.3, 5, 7).

Pure functions over plain values, so the model layer, the admin, the JSON API and the
case runners share one implementation and one message order. Each function returns
the failed checks in the BBS's order; ``bbs_message`` joins them the way the BBS does
(``", "``), duplicates included: Diego really does report an empty rootfs twice.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from auction.engine.filters import rootfs_is_url

GUID_RE = re.compile(r"^[a-zA-Z0-9_-]+$")
ANNOTATION_LIMIT_BYTES = 10 * 1024
ROUTES_LIMIT_BYTES = 128 * 1024
UPDATABLE_DESIRED_LRP_FIELDS = ("instances", "routes", "annotation")


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


def _negative(value: Any) -> bool:
    return value is not None and value < 0


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
) -> list[FieldError]:
    """The checks of ``DesiredLRP.Validate`` in Diego's order (bbs.md 1.2, items 1-11)."""
    errors: list[FieldError] = []
    if not domain:
        errors.append(invalid("domain"))
    if not rootfs:
        errors.append(invalid("rootfs"))
    if not rootfs_is_url(rootfs or ""):
        errors.append(invalid("rootfs"))
    if _negative(instances):
        errors.append(invalid("instances"))
    if _negative(memory_mb):
        errors.append(invalid("memory_mb"))
    if _negative(disk_mb):
        errors.append(invalid("disk_mb"))
    if annotation_too_long(annotation):
        errors.append(invalid("annotation"))
    if _negative(max_pids):
        errors.append(invalid("max_pids"))
    if routes_too_large(routes):
        errors.append(invalid("routes"))
    # Diego validates the DesiredLRPKey again after the definition: the domain once more.
    if not domain:
        errors.append(invalid("domain"))
    if not GUID_RE.match(process_guid or ""):
        errors.append(invalid("process_guid"))
    return errors


def simulation_errors(
    *, start_delay_s: float | None = 0.0, crash_probability: float | None = 0.0,
    crash_after_s: float | None = 0.0,
) -> list[FieldError]:
    """The simulator's knobs beside a DesiredLRP [project rule]: times ≥ 0, a probability."""
    errors: list[FieldError] = []
    if _negative(start_delay_s):
        errors.append(invalid("start_delay_s"))
    if crash_probability is not None and not 0 <= crash_probability <= 1:
        errors.append(invalid("crash_probability"))
    if _negative(crash_after_s):
        errors.append(invalid("crash_after_s"))
    return errors


def desired_lrp_update_errors(update: Mapping[str, Any]) -> list[FieldError]:
    """``DesiredLRPUpdate.Validate`` plus the project rule on other members (bbs.md 1.3)."""
    errors: list[FieldError] = []
    if _negative(update.get("instances")):
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
) -> list[FieldError]:
    """``TaskDefinition`` checks in the BBS's order; the rootfs message appears once (bbs.md 7)."""
    errors: list[FieldError] = []
    if not GUID_RE.match(task_guid or ""):
        errors.append(invalid("task_guid"))
    if not domain:
        errors.append(invalid("domain"))
    if not rootfs or not rootfs_is_url(rootfs):
        errors.append(invalid("rootfs"))
    if _negative(memory_mb):
        errors.append(invalid("memory_mb"))
    if _negative(disk_mb):
        errors.append(invalid("disk_mb"))
    if _negative(max_pids):
        errors.append(invalid("max_pids"))
    if annotation_too_long(annotation):
        errors.append(invalid("annotation"))
    return errors


def domain_errors(*, domain: str, ttl: float | None) -> list[FieldError]:
    """Upserting a domain (bbs.md 5); a negative TTL is refused [project rule]."""
    errors: list[FieldError] = []
    if not domain or len(domain) > 255 or not storable_text(domain):
        errors.append(invalid("domain"))
    if _negative(ttl):
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
    if not GUID_RE.match(cell_id or ""):
        errors.append(invalid("cell_id"))
    if _negative(index):
        errors.append(invalid("index"))
    for name, value in (("memory_mb", memory_mb), ("disk_mb", disk_mb), ("containers", containers)):
        if value is not None and value < 1:
            errors.append(invalid(name))
    if _negative(proxy_memory_mb):
        errors.append(invalid("proxy_memory_mb"))
    return errors
