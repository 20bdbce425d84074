"""Otto orchestrators' writes and reads (otto.md 4-6): roster, bids, start, finish, elastic cells.

Agent-orchestrators are the cells (clientId ``cell-<id>``); the elastic standalone
orchestrator provisions new cells. A bid reserves nothing: on award the winner re-checks
its capacity under the Cell row lock shared with Diego's commit (otto.md 9) and declines
if it is gone.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import F

from auction.engine.filters import match_placement_tags, match_rootfs, match_volume_drivers
from auction.models import BBSEvent, Cell, OttoAuction, OttoOrchestrator, Task, Zone
from auction.otto import capabilities as caps
from auction.otto import cost as costs
from auction.otto import lifecycle
from auction.otto import messages as msg
from auction.selectors.cells import cell_states
from auction.services.counters import counters_add
from auction.services.events import event_record, events_store
from auction.services.intents import intents_after_commit
from auction.services.otto.rows import publish_board, to_state
from auction.sim.changes import CellsChanged

PRESENCE_TTL_S = 15.0
PRESENCE_REFRESH_S = 5.0
ELASTIC_ID = "elastic"
# The elastic catalogue (otto.md 4): name, cores, memory MB, rate per hour.
CATALOGUE = (("small", 2, 4096, 0.30), ("large", 8, 32768, 1.20))
ELASTIC_SPEED = 1.5
ELASTIC_DISK_MB = 65536
DEFAULT_KNOBS = {"bid_latency_s": 0.05, "bid_timing": "immediate", "start_failure_rate": 0.0,
                 "clock_offset_s": 0.0}
ELASTIC_KNOBS = {**DEFAULT_KNOBS, "max_cells": 4, "provision_s": 90.0}


def agent_id(cell_id: str) -> str:
    """``cell-<id>``, kept inside clientId's ``[a-z0-9-]{1,40}``."""
    slug = re.sub(r"[^a-z0-9-]+", "-", cell_id.lower()).strip("-")
    client = slug if slug.startswith("cell-") else f"cell-{slug}"
    return client[:40]


def _cell_caps(cell: Cell) -> dict[str, Any]:
    return {"cores": cell.cores, "memory_mb": cell.memory_mb, "disk_mb": cell.disk_mb,
            "docker_run": "docker" in cell.rootfs_providers, "docker_build": cell.docker_build}


def otto_roster_sync(knobs: dict[str, dict[str, Any]] | None = None, elastic: bool = True) -> list[OttoOrchestrator]:
    """One agent row per non-elastic cell plus the elastic one; ``knobs`` by clientId."""
    knobs = knobs or {}
    rows = []
    with transaction.atomic():
        held = dict(OttoOrchestrator.objects.values_list("client_id", "knobs"))
        for cell in Cell.objects.filter(elastic=False):
            client = agent_id(cell.cell_id)
            row, _ = OttoOrchestrator.objects.update_or_create(client_id=client, defaults={
                "kind": OttoOrchestrator.Kind.AGENT, "cell_id": cell.cell_id, "capabilities": _cell_caps(cell),
                "rate_per_hour": cell.hourly_cost, "speed": cell.speed,
                "knobs": {**DEFAULT_KNOBS, **held.get(client, {}), **knobs.get(client, {})}})
            rows.append(row)
        if elastic:  # ``enabled`` is kept: a disabled elastic stays disabled across restarts
            big = CATALOGUE[-1]
            row, _ = OttoOrchestrator.objects.update_or_create(client_id=ELASTIC_ID, defaults={
                "kind": OttoOrchestrator.Kind.STANDALONE, "cell_id": "",
                "capabilities": {"cores": big[1], "memory_mb": big[2], "disk_mb": ELASTIC_DISK_MB,
                                 "docker_run": True, "docker_build": True},
                "rate_per_hour": CATALOGUE[0][3], "speed": ELASTIC_SPEED,
                "knobs": {**ELASTIC_KNOBS, **held.get(ELASTIC_ID, {}), **knobs.get(ELASTIC_ID, {})}})
            rows.append(row)
    return rows


def otto_roster_signature() -> tuple[Any, ...]:
    """Cheap to compare: the agent cells and the roster rows with their knobs."""
    cells = tuple(Cell.objects.filter(elastic=False).order_by("cell_id").values_list("cell_id", flat=True))
    roster = tuple(sorted((c, json.dumps(k, sort_keys=True))
                          for c, k in OttoOrchestrator.objects.values_list("client_id", "knobs")))
    return cells, roster


def otto_elastic_schedule(now: float) -> bool:
    """Apply the scenario's ``disable_at`` to the elastic orchestrator; True when it changed."""
    row = OttoOrchestrator.objects.filter(client_id=ELASTIC_ID, enabled=True).first()
    if row is None or "disable_at" not in row.knobs or now < float(row.knobs["disable_at"]):
        return False
    OttoOrchestrator.objects.filter(pk=row.pk).update(enabled=False)
    event_record("otto_elastic_disabled", now, key=ELASTIC_ID)
    return True


def otto_roster_refresh(client_ids: list[str], wall: float | None = None) -> None:
    wall = time.time() if wall is None else wall
    OttoOrchestrator.objects.filter(client_id__in=client_ids).update(alive_until_wall=wall + PRESENCE_TTL_S)


def _otto_cores_used(cell_ids: list[str]) -> dict[str, int]:
    used: dict[str, int] = {}
    guids = dict(Task.objects.filter(cell_id__in=cell_ids, state=Task.State.RUNNING,
                                     placement_mode=Task.PlacementMode.OTTO).values_list("task_guid", "cell_id"))
    for guid, capabilities in OttoAuction.objects.filter(
            task_guid__in=list(guids), state=OttoAuction.State.STARTED).values_list("task_guid", "capabilities"):
        used[guids[guid]] = used.get(guids[guid], 0) + int(capabilities.get("cores", 1))
    return used


@dataclass(frozen=True, slots=True)
class Fit:
    """Why a cell can or cannot take the task now, and its utilisation after placement."""

    lacks: list[str]
    utilisation: float = 0.0


def cell_fit(cell: Cell, ask: caps.Ask, raw: dict[str, Any]) -> Fit:
    """Capability and raw-placement checks against the cell's free resources now (otto.md 4)."""
    state = cell_states([cell])[0]
    lacks: list[str] = []
    if not match_rootfs(state, str(raw.get("rootfs", ""))):
        lacks.append("rootfs")
    if not match_volume_drivers(state, raw.get("volume_drivers", [])):
        lacks.append("volume_drivers")
    if not match_placement_tags(state, raw.get("placement_tags", [])):
        lacks.append("placement_tags")
    cores_used = _otto_cores_used([cell.cell_id]).get(cell.cell_id, 0)
    offer = caps.Offer(cell.cores - cores_used, state.available.memory_mb, state.available.disk_mb,
                       "docker" in cell.rootfs_providers, cell.docker_build)
    lacks += caps.missing(ask, offer, int(raw.get("disk_mb", 0)))
    if state.available.containers < 1:
        lacks.append("containers")
    used_mem = cell.memory_mb - state.available.memory_mb + ask.memory_mb
    u = costs.utilisation(used_mem, cell.memory_mb, cores_used + ask.cores, cell.cores)
    return Fit(lacks, u)


def _estimated(raw: dict[str, Any]) -> float | None:
    value = raw.get("estimated_seconds")
    return float(value) if isinstance(value, int | float) else None


def otto_bid_compute(client_id: str, announcement: dict[str, Any], now: float) -> dict[str, Any] | None:
    """The bid this orchestrator would send now, or None when it may not or cannot bid."""
    row = OttoOrchestrator.objects.filter(client_id=client_id).first()
    if row is None or not row.enabled:
        return None
    raw = announcement["task"]["raw"]
    ask = caps.derive(raw, announcement["task"].get("capabilities", {}))
    if ask.unknown:
        return None  # conservative (otto.md 4)
    if row.kind == OttoOrchestrator.Kind.AGENT:
        cell = Cell.objects.filter(cell_id=row.cell_id).select_related("zone").first()
        if cell is None or cell.state != Cell.State.HEALTHY or not cell.has_presence(now):
            return None
        fit = cell_fit(cell, ask, raw)
        if fit.lacks:
            return None
        b = costs.bid_cost(rate_per_hour=cell.hourly_cost, estimated_s=_estimated(raw), speed=cell.speed,
                           utilisation=fit.utilisation)
        ready = 0.0
    else:
        choice = _elastic_choice(row, ask, raw)
        if choice is None:
            return None
        b, ready = choice
    return msg.bid_message(announcement["auction_id"], announcement["attempt"], client_id, row.kind,
                           b.total, b.as_dict(), ready, now)


def _elastic_choice(row: OttoOrchestrator, ask: caps.Ask, raw: dict[str, Any]) -> tuple[costs.Breakdown, float] | None:
    """Reuse an idle elastic cell first (no provisioning), else the smallest catalogue type."""
    rootfs = str(raw.get("rootfs", ""))
    if not (rootfs.startswith("docker:") or rootfs.startswith("preloaded:")):
        return None
    tags = list(raw.get("placement_tags", []))
    if "elastic" not in tags:
        raw = {**raw, "placement_tags": [*tags, "elastic"]}
    for cell in Cell.objects.filter(elastic=True, state=Cell.State.HEALTHY).select_related("zone"):
        fit = cell_fit(cell, ask, raw)
        if not fit.lacks:
            return costs.bid_cost(rate_per_hour=cell.hourly_cost, estimated_s=_estimated(raw),
                                  speed=cell.speed, utilisation=fit.utilisation), 0.0
    if row.provisioned >= int(row.knobs.get("max_cells", 4)):
        return None
    for _name, cores, memory, rate in CATALOGUE:
        if cores >= ask.cores and memory >= ask.memory_mb:
            u = costs.utilisation(ask.memory_mb, memory, ask.cores, cores)
            provision_s = float(row.knobs.get("provision_s", 90.0))
            return costs.bid_cost(rate_per_hour=rate, estimated_s=_estimated(raw), speed=ELASTIC_SPEED,
                                  utilisation=u, provision_s=provision_s, new_cell=True), provision_s
    return None


def otto_elastic_provision(auction: dict[str, Any]) -> str | None:
    """On an award the elastic orchestrator provisions (or reuses) a cell; returns its id."""
    raw = auction["task"]["raw"]
    ask = caps.derive(raw, auction["task"].get("capabilities", {}))
    tagged = {**raw, "placement_tags": sorted({*raw.get("placement_tags", []), "elastic"})}
    with transaction.atomic():
        for cell in Cell.objects.select_for_update().filter(elastic=True, state=Cell.State.HEALTHY):
            if not cell_fit(cell, ask, tagged).lacks:
                return cell.cell_id
        row = OttoOrchestrator.objects.select_for_update().get(client_id=ELASTIC_ID)
        if row.provisioned >= int(row.knobs.get("max_cells", 4)):
            return None
        spec = next(((n, c, m, r) for n, c, m, r in CATALOGUE if c >= ask.cores and m >= ask.memory_mb), None)
        zone = min(Zone.objects.all(), key=lambda z: (z.cells.count(), z.name), default=None)
        if spec is None or zone is None:
            return None
        n = row.provisioned + 1
        cell = Cell.objects.create(
            cell_id=f"elastic-{n}", zone=zone, index=1000 + n, memory_mb=spec[2], disk_mb=ELASTIC_DISK_MB,
            cores=spec[1], hourly_cost=spec[3], speed=ELASTIC_SPEED, elastic=True, docker_build=True,
            placement_tags=["elastic"])
        OttoOrchestrator.objects.filter(pk=row.pk).update(provisioned=F("provisioned") + 1)
        counters_add({"OttoElasticCells": 1})
    return cell.cell_id


@dataclass(slots=True)
class StartOutcome:
    message: dict[str, Any] | None  # otto.started or otto.decline
    started: bool


def otto_start(client_id: str, auction_id: str, attempt: int, now: float, cell_id: str | None = None) -> StartOutcome:
    """The winner starts: re-check capacity under the Cell row lock, Task PENDING -> RUNNING (otto.md 6)."""
    with transaction.atomic():
        auction = OttoAuction.objects.select_for_update().filter(auction_id=auction_id).first()
        if auction is None or not lifecycle.start_allowed(to_state(auction), client_id, attempt):
            return StartOutcome(None, False)  # revoked meanwhile: start is at-most-once
        if cell_id is None:
            cell_id = OttoOrchestrator.objects.filter(client_id=client_id).values_list("cell_id", flat=True).first()
        cell = Cell.objects.select_for_update().filter(cell_id=cell_id or "").first()
        raw = dict(auction.raw)
        if cell is not None and cell.elastic:
            raw["placement_tags"] = sorted({*raw.get("placement_tags", []), "elastic"})
        ask = caps.derive(raw, auction.capabilities)
        lacks = ["cell"] if cell is None or cell.state != Cell.State.HEALTHY else cell_fit(cell, ask, raw).lacks
        if lacks:
            return StartOutcome(msg.decline_message(auction_id, attempt, client_id,
                                                    f"capacity gone: {', '.join(lacks)}"), False)
        task = Task.objects.select_for_update().filter(task_guid=auction.task_guid, state=Task.State.PENDING).first()
        if task is None:
            return StartOutcome(msg.decline_message(auction_id, attempt, client_id, "task no longer pending"), False)
        Task.objects.filter(pk=task.pk).update(state=Task.State.RUNNING, cell_id=cell.cell_id, updated_at=now,
                                               finishes_at=now + task.duration_s)
        OttoAuction.objects.filter(pk=auction.pk).update(
            state=OttoAuction.State.STARTED, started_at=now, started_cell=cell.cell_id, note="started",
            history=[*auction.history, [round(now, 3), f"started on {cell.cell_id}"]][-20:],
            updated_wall=time.time())
        counters_add({"OttoTimeToStart": int(round(now - auction.submitted_at)),
                      "OttoCostTotal": int(round((auction.cost or 0) * 1_000_000)),
                      f"TasksStarted.{cell.cell_id}": 1})
        events_store([BBSEvent(at=now, type="task_changed", key=task.task_guid, cell_id=cell.cell_id,
                               data={"after": {"state": "RUNNING"}})])
        event_record("otto_started", now, key=auction_id, cell_id=cell.cell_id, bidder=client_id)
        publish_board([auction_id])
        intents_after_commit([CellsChanged((cell.cell_id,))])
    return StartOutcome(msg.started_message(auction_id, attempt, client_id, cell.cell_id, now), True)


def otto_finished_due(client_ids: list[str]) -> list[dict[str, Any]]:
    """Started auctions of these orchestrators whose task completed: record and report them."""
    out: list[dict[str, Any]] = []
    started = OttoAuction.objects.filter(state=OttoAuction.State.STARTED, winner__in=client_ids)
    # A cheap read first: the write transaction only when something finished.
    if not Task.objects.filter(task_guid__in=started.values("task_guid"),
                               state__in=[Task.State.COMPLETED, Task.State.RESOLVING]).exists():
        return out
    with transaction.atomic():
        rows = list(started.select_for_update())
        done = {t.task_guid: t for t in Task.objects.filter(
            task_guid__in=[r.task_guid for r in rows], state__in=[Task.State.COMPLETED, Task.State.RESOLVING])}
        for row in rows:
            task = done.get(row.task_guid)
            if task is None:
                continue
            at = task.first_completed_at if task.first_completed_at is not None else task.updated_at
            OttoAuction.objects.filter(pk=row.pk).update(state=OttoAuction.State.FINISHED, finished_at=at,
                                                         note="finished", updated_wall=time.time())
            event_record("otto_finished", at, key=row.auction_id, failed=task.failed)
            out.append(msg.finished_message(row.auction_id, row.attempt, row.task_guid, row.winner, at,
                                            task.failed, task.failure_reason))
        publish_board([m["auction_id"] for m in out])
    return out
