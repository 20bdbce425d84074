"""Your own foundation: import a cfdot capture into the live cluster or keep it named.

``foundation_import`` reads the files with the core's reader
(``auction.sim.cfdot_read.read_capture``: every rule of the format lives there), then
either replaces the live cluster with it in one transaction (bulk writes, the world epoch
moved so every open page reloads) or keeps it as a named ``Foundation``, a base for plans
that ``foundation_view`` hands back as a ``ClusterView`` (plans.md 3). A capture the
reader refuses changes nothing: it is refused before the first write.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any

from django.db import OperationalError, transaction
from django.utils import timezone

from auction.models import (
    ActualLRP,
    Cell,
    DesiredLRP,
    Domain,
    Foundation,
    SimClock,
    Task,
    Zone,
    ZoneLossAnswer,
)
from auction.models.foundations import foundation_label
from auction.selectors.bbs import model_ports
from auction.selectors.clock import clock_view
from auction.services.audit import audit_record
from auction.services.bulk import bulk_insert
from auction.services.clock import clock_reset, clock_resume
from auction.services.world import cluster_empty, world_changed
from auction.sim.cfdot import ClusterView, dump_lines
from auction.sim.cfdot_lines import UNIX_NS_FLOOR
from auction.sim.cfdot_read import CaptureError, read_capture, summary
from auction.sim.view_pack import pack_view, unpack_view

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
LOAD_ATTEMPTS = 3

__all__ = ["CaptureError", "FoundationError", "FoundationNotFound", "ImportResult",
           "foundation_delete", "foundation_import", "foundation_list", "foundation_load",
           "foundation_names", "foundation_view"]


class FoundationError(ValueError):
    """A refused request about named foundations (bad or taken name)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class FoundationNotFound(LookupError):
    def __init__(self, name: str) -> None:
        super().__init__(f"no foundation named {name!r}")
        self.message = str(self.args[0])


@dataclass(slots=True, frozen=True)
class ImportResult:
    name: str | None  # None: loaded into the live cluster
    summary: dict[str, int]
    assumptions: tuple[str, ...]
    # The lines the reader skipped as not JSON, "file:line: ..." (plans.md 3.1).
    warnings: tuple[str, ...] = ()
    # A kept foundation's version ("v2 sha256:..."); replaced: it took an older one's place.
    version: str = ""
    replaced: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The answer every door gives (API, page)."""
        answer: dict[str, Any] = {"name": self.name, "summary": self.summary,
                                  "assumptions": list(self.assumptions), "warnings": list(self.warnings)}
        if self.name is not None:
            answer.update(version=self.version, replaced=self.replaced)
        return answer


Files = Iterable[tuple[str, bytes | IO[bytes] | IO[str]]]


def foundation_import(files: Files, *, as_name: str | None = None, replace: bool = False,
                      user: Any = None, source: str = "cli",
                      limit_bytes: int | None = None) -> ImportResult:
    """Read a capture; load it into the live cluster, or keep it as ``as_name`` (taking an
    older one's place with ``replace``). ``limit_bytes``: what the files may hold in all,
    decompressed (a door's upload limit; the core's own bound otherwise).

    Raises ``CaptureError`` (``file:line: field: why``) or ``FoundationError``; either way
    nothing has changed."""
    if as_name is not None:
        _check_name(as_name)
    elif replace:
        raise FoundationError("only a named foundation is replaced: give its name")
    view = (read_capture(files) if limit_bytes is None
            else read_capture(files, limit_bytes=limit_bytes))
    if as_name is not None:
        kept, replaced = foundation_keep(as_name, view, replace=replace, user=user, source=source)
        return ImportResult(as_name, summary(view), tuple(view.assumptions), tuple(view.warnings),
                            kept.label(), replaced)
    foundation_load(view, user=user, source=source)
    return ImportResult(None, summary(view), tuple(view.assumptions), tuple(view.warnings))


def _check_name(name: str) -> None:
    if not NAME.match(name):
        raise FoundationError(f"foundation name {name!r}: 1-64 letters, digits, '.', '_' or '-', "
                              "starting with a letter or digit")


def capture_bytes(view: ClusterView) -> bytes:
    """The view as cfdot lines, gzip-compressed (no timestamp: the same view, the same bytes)."""
    text = "".join(line + "\n" for line in dump_lines(view, events=False))
    return gzip.compress(text.encode(), mtime=0)


def foundation_keep(name: str, view: ClusterView, *, replace: bool = False, user: Any = None,
                    source: str = "cli") -> tuple[Foundation, bool]:
    """Keep ``view`` as the foundation ``name`` (a new one, or with ``replace`` the next
    version of one); (the row, whether it replaced one). Touches nothing live: no event,
    no live-layer message, no Redis (plans.md 3.3); the audit log has it."""
    _check_name(name)
    capture = capture_bytes(view)
    fields = {"capture": capture, "snapshot": pack_view(view), "summary": summary(view),
              "assumptions": list(view.assumptions), "sha256": hashlib.sha256(capture).hexdigest(),
              "size_bytes": len(capture), "captured_at": _captured_at(view)}
    with transaction.atomic():
        old = Foundation.objects.select_for_update().filter(name=name).first()
        if old is not None and not replace:
            raise FoundationError(f"a foundation named {name!r} exists already; choose another name "
                                  "or replace it")
        if old is None:
            kept = Foundation.objects.create(name=name, **fields)
            audit_record("foundation_keep", name, clock_view().now, source=source, user=user,
                         diff={"summary": [None, fields["summary"]], "version": [None, kept.label()]},
                         feed=False)
            return kept, False
        before = {"summary": old.summary, "version": old.label()}
        for key, value in fields.items():
            setattr(old, key, value)
        old.version += 1
        old.replaced_at = timezone.now()
        old.save()
        # An N-1 answer kept for the old capture answers for another foundation now.
        ZoneLossAnswer.objects.filter(base=name).delete()
        audit_record("foundation_replace", name, clock_view().now, source=source, user=user,
                     diff={"summary": [before["summary"], old.summary],
                           "version": [before["version"], old.label()]}, feed=False)
        return old, True


def foundation_delete(name: str, *, user: Any = None, source: str = "cli") -> str:
    """Delete the named foundation (its label, "v2 sha256:..."); ``FoundationNotFound``.
    Plans made from it keep their results; a new plan cannot name it."""
    with transaction.atomic():
        row = Foundation.objects.filter(name=name).values("pk", "version", "sha256", "summary").first()
        if row is None:
            raise FoundationNotFound(name)
        Foundation.objects.filter(pk=row["pk"]).delete()
        ZoneLossAnswer.objects.filter(base=name).delete()
        label = foundation_label(row["version"], row["sha256"])
        audit_record("foundation_delete", name, clock_view().now, source=source, user=user,
                     diff={"summary": [row["summary"], None], "version": [label, None]}, feed=False)
        return label


def _captured_at(view: ClusterView) -> datetime | None:
    """The capture's newest time as a date; None for a simulator's own dump (no UNIX time)."""
    if view.origin_ns < UNIX_NS_FLOOR:
        return None
    return datetime.fromtimestamp(view.origin_ns // 10**9, tz=UTC)


def foundation_names() -> list[str]:
    return list(Foundation.objects.order_by("name").values_list("name", flat=True))


def foundation_list() -> list[dict[str, Any]]:
    """Every named foundation with its counts, assumptions, version, size and capture time
    (not its capture); ``age_s``: seconds since the capture was taken (None: unknown)."""
    now = timezone.now()
    out = []
    for f in Foundation.objects.order_by("name").values(
            "name", "created_at", "summary", "assumptions", "version", "sha256", "size_bytes",
            "captured_at", "replaced_at"):
        captured = f["captured_at"]
        out.append({
            "name": f["name"], "created_at": f["created_at"].isoformat(), "summary": f["summary"],
            "assumptions": f["assumptions"], "version": foundation_label(f["version"], f["sha256"]),
            "size_bytes": f["size_bytes"],
            "captured_at": captured.isoformat() if captured else None,
            "age_s": round((now - captured).total_seconds()) if captured else None,
            "replaced_at": f["replaced_at"].isoformat() if f["replaced_at"] else None})
    return out


def size_text(size: int) -> str:
    """A kept capture's size as the list shows it."""
    return f"{size / 2**20:.1f} MB" if size >= 2**20 else f"{max(size, 1) / 1024:.0f} KB"


def age_text(seconds: int | None) -> str:
    """A capture's age as a person says it ("3 d"); "unknown" without a capture time."""
    if seconds is None:
        return "unknown"
    for unit, span in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= span:
            return f"{seconds // span} {unit}"
    return f"{max(seconds, 0)} s"


def foundation_view(name: str) -> ClusterView:
    """The named foundation as a cluster (a plan's base), its ``version`` set;
    ``FoundationNotFound`` if none."""
    row = Foundation.objects.filter(name=name).values_list(
        "capture", "assumptions", "snapshot", "version", "sha256").first()
    if row is None:
        raise FoundationNotFound(name)
    label = foundation_label(row[3], row[4])
    if row[2]:
        try:
            view = unpack_view(bytes(row[2]))
            view.version = label
            return view
        except ValueError:
            pass  # packed by another version: the capture says the same, only slower
    view = read_capture([(f"{name}.jsonl.gz", bytes(row[0]))])
    view.assumptions = tuple(row[1] or ())  # what the original capture lacked
    view.version = label
    return view


def foundation_load_named(name: str, *, user: Any = None, source: str = "cli") -> ImportResult:
    """Load a named foundation into the live cluster."""
    view = foundation_view(name)
    foundation_load(view, user=user, source=source, name=name)
    return ImportResult(None, summary(view), tuple(view.assumptions), version=view.version)


def foundation_load(view: ClusterView, *, user: Any = None, source: str = "cli", name: str = "") -> None:
    """Replace the live cluster with ``view``, all or nothing (as a scenario load does;
    a deadlock with the running simulation on PostgreSQL is simply tried again)."""
    for attempt in range(1, LOAD_ATTEMPTS + 1):
        try:
            _load(view, user=user, source=source, name=name)
            return
        except OperationalError as exc:
            if attempt == LOAD_ATTEMPTS or "deadlock" not in str(exc).lower():
                raise


def _load(view: ClusterView, *, user: Any, source: str, name: str) -> None:
    was_paused = clock_view().paused
    now = view.now
    with transaction.atomic():
        cluster_empty()
        clock_reset(now, paused=True)
        SimClock.objects.filter(pk=1).update(seed=0, origin_ns=view.origin_ns)
        zones = {}
        for zone in sorted({c.zone for c in view.cells}):
            zones[zone] = Zone.objects.create(name=zone).pk
        bulk_insert(Cell, CELL_FIELDS, (
            (c.cell_id, zones[c.zone], c.index, c.memory_mb, c.disk_mb, c.containers,
             list(c.preloaded_rootfses), list(c.rootfs_providers), list(c.volume_drivers),
             list(c.placement_tags), list(c.optional_placement_tags), c.proxy_memory_mb, c.state,
             c.presence_lost_at, c.evacuating_since, c.evacuation_synced_at)
            for c in view.cells))
        bulk_insert(DesiredLRP, DESIRED_FIELDS, (
            (a.process_guid, a.domain, a.rootfs, a.instances, a.memory_mb, a.disk_mb,
             list(a.placement_tags), list(a.volume_drivers), list(a.ports), a.start_delay_s,
             a.crash_probability, a.crash_after_s, a.epoch, a.tag)
            for a in view.apps))
        bulk_insert(ActualLRP, ACTUAL_FIELDS, (
            (r.process_guid, r.index, r.presence, r.state, r.domain, r.instance_guid, r.cell_id,
             r.address, model_ports(r.ports), r.placement_error, r.since, r.crash_count,
             r.crash_reason, r.modification_tag_epoch, r.modification_tag_index, r.ready_at,
             r.crash_at)
            for r in view.rows))
        bulk_insert(Task, TASK_FIELDS, (
            (t.task_guid, t.task.domain, t.task.state, t.task.cell_id, t.task.created_at,
             t.task.updated_at, t.task.first_completed_at, t.task.failed, t.task.failure_reason,
             t.task.result, t.task.rejection_count, t.task.rejection_reason, t.task.callback_url,
             t.rootfs, t.memory_mb, t.disk_mb, list(t.placement_tags), list(t.volume_drivers),
             t.duration_s, t.placement_mode, t.task.finishes_at)
            for t in view.tasks))
        bulk_insert(Domain, ("name", "expires_at", "ttl_s"),
                    ((domain, expiry, 0.0) for domain, expiry in view.domains.items()))
        # The import is the new checkpoint: the previous scenario's timeline stops here
        # (``DbStore._timeline``).
        audit_record("foundation_import", name or "capture", now, source=source, user=user,
                     diff={"summary": [None, summary(view)],
                           "assumptions": [None, list(view.assumptions)],
                           **({"version": [None, view.version]} if view.version else {})})
        world_changed()  # every open page draws the new cluster
        if not was_paused:
            clock_resume()


CELL_FIELDS = ("cell_id", "zone", "index", "memory_mb", "disk_mb", "containers",
               "preloaded_rootfses", "rootfs_providers", "volume_drivers", "placement_tags",
               "optional_placement_tags", "proxy_memory_mb", "state", "presence_lost_at",
               "evacuating_since", "evacuation_synced_at")
DESIRED_FIELDS = ("process_guid", "domain", "rootfs", "instances", "memory_mb", "disk_mb",
                  "placement_tags", "volume_drivers", "ports", "start_delay_s",
                  "crash_probability", "crash_after_s", "modification_tag_epoch",
                  "modification_tag_index")
ACTUAL_FIELDS = ("desired", "index", "presence", "state", "domain", "instance_guid", "cell_id",
                 "address", "ports", "placement_error", "since", "crash_count", "crash_reason",
                 "modification_tag_epoch", "modification_tag_index", "ready_at", "crash_at")
TASK_FIELDS = ("task_guid", "domain", "state", "cell_id", "created_at", "updated_at",
               "first_completed_at", "failed", "failure_reason", "result", "rejection_count",
               "rejection_reason", "completion_callback_url", "rootfs", "memory_mb", "disk_mb",
               "placement_tags", "volume_drivers", "duration_s", "placement_mode", "finishes_at")
