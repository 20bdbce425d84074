"""Plans and capacity questions over the live cluster or a named foundation (plans.md 1, 2).

A plan reads its base (``plans_base``), clones it into memory (``auction.sim.base``) and
runs the core (``auction.sim.plans``) there: it never writes the live cluster. Only
``plan_apply`` does, and only through the services every other door uses (chaos actions,
desire, remove, cells, auctioneer settings), each audited, inside one transaction with
an audit entry of its own.

A plan on a small base runs inside the request; a bigger one (more than ``INLINE_ROWS``
instances, or any named foundation) runs in the Celery worker, or in a thread of this
process when no broker answers, writing its progress on the ``Plan`` row and stopping
between two steps when cancelled. Runs take turns (``_RUNS``): one at a time per process.
A plan keeps its first auctions' replay records, bounded (``PlanReplays``).

A base's zone-loss answer is kept in the database with its world's fingerprint; on a
big base the web process only asks the worker for a new one (``zone_loss_request``):
neither the grid's chips nor the API work it out inside a request.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from auction.bbs.validation import storable_text
from auction.live import publish
from auction.models import (
    ActualLRP,
    Cell,
    DesiredLRP,
    Foundation,
    Plan,
    PlanAuction,
    SimClock,
    Zone,
    ZoneLossAnswer,
)
from auction.report.plan import plan_report
from auction.selectors.auction_settings import auction_settings_config
from auction.selectors.auctions import explanation_summary, plan_auction_details
from auction.selectors.cells import cell_loads, sim_cell
from auction.selectors.clock import clock_row, sim_now
from auction.services.auction_settings import auction_settings_update
from auction.services.audit import audit_record
from auction.services.cells import cell_remove, cell_save, chaos_run
from auction.services.errors import InvalidRequest, ResourceNotFound
from auction.services.foundations import foundation_view
from auction.services.lrps import desired_lrp_desire, desired_lrp_remove
from auction.services.store import DbStore
from auction.services.workers import PLAN_RUN, ZONE_LOSS_RUN, worker_send
from auction.sim.base import world_from_view
from auction.sim.capacity import CapacityError, capacity, work_shape
from auction.sim.cfdot import ClusterView
from auction.sim.memory import World
from auction.sim.model import SimCell
from auction.sim.plan_changes import (
    CHAOS_CHANGES,
    Change,
    PlanError,
    added_cells,
    check_references,
    plan_changes,
    plan_horizon,
)
from auction.sim.plans import (
    PlanCancelled,
    PlanRun,
    plan_result,
    run_plan_worlds,
    zone_loss,
    zone_loss_fingerprint,
    zone_loss_horizon,
)

log = logging.getLogger(__name__)

#: Bases with at most this many ActualLRP rows run inside the request (well under a second).
INLINE_ROWS = 5_000
#: The report card is kept on the row for bases up to this many rows (beyond, the file
#: runs to megabytes: ``manage.py plan --report`` writes it).
REPORT_ROWS = 50_000
#: A plan a process lost (restarted mid-run) is marked failed after this long without progress.
STALE_S = 600.0
#: A plan keeps the replay records of its first auctions (plans.md 1.7): the first
#: ``PLAN_FULL_REPLAYS`` with every verdict, the next ones to ``PLAN_REPLAYS`` with the
#: summary an older live auction keeps, all within ``PLAN_REPLAY_BYTES`` of JSON (a huge
#: foundation's cell list alone is megabytes per auction).
PLAN_REPLAYS = 50
PLAN_FULL_REPLAYS = 5
PLAN_REPLAY_BYTES = 8_000_000
_RUNS = threading.Lock()
#: A zone-loss claim older than this was lost with its worker; the next ask makes a new one.
ZONE_LOSS_STALE_S = 300.0
#: When an API client asking for a zone-loss answer being worked out is told to ask again.
ZONE_LOSS_RETRY_S = 5
BODY_MEMBERS = ("base", "changes", "horizon_s")


# -- the base ---------------------------------------------------------------------------

def plans_base(name: str) -> ClusterView:
    """The base's snapshot: the live cluster now, or a named foundation (plans.md 3)."""
    if name == "live":
        return DbStore().cluster_view()
    try:
        view: ClusterView = foundation_view(name)
    except (LookupError, ValueError) as exc:
        raise InvalidRequest(f"no foundation named {name}") from exc
    return view


def base_worlds(name: str, count: int, *, record_log: bool = False,
                view: ClusterView | None = None) -> list[World]:
    """``count`` clones of one read of the base (``view``, when the caller read it): each
    built from the snapshot, which is many times faster than copying a built world (rows
    are values the rules replace, never change in place, so the clones may share them)."""
    view = plans_base(name) if view is None else view
    seed, config = clock_row().seed, auction_settings_config()
    return [world_from_view(view, config, seed=seed, record_log=record_log) for _ in range(count)]


def _base_name(raw: Any) -> str:
    if raw is None:
        return "live"
    if not isinstance(raw, str) or not raw.strip() or len(raw) > 128 or not storable_text(raw):
        raise InvalidRequest("Invalid field: base")
    return raw.strip()


def _live_references(changes: list[Change]) -> None:
    """Unknown cells, zones and apps refused in the request, from three cheap reads."""
    try:
        check_references(Cell.objects.values_list("cell_id", flat=True),
                         Zone.objects.filter(cells__isnull=False).values_list("name", flat=True),
                         DesiredLRP.objects.values_list("process_guid", flat=True), changes)
    except PlanError as exc:
        raise InvalidRequest(exc.message) from None


# -- creating and running -----------------------------------------------------------------

def plan_create(body: Mapping[str, Any], *, user: Any = None, source: str = "api") -> Plan:
    """Check the request, record the plan and run it (inside the request when small)."""
    plan, _ = plan_start(body, user=user, source=source)
    return plan


def plan_start(body: Mapping[str, Any], *, user: Any = None, source: str = "api", inline: bool | None = None,
               progress: Callable[[float], None] | None = None,
               report: bool = False) -> tuple[Plan, PlanRun | None]:
    """``plan_create`` with the choice made by the caller: ``inline`` runs here whatever
    the base's size (the command line: its own process), and answers the run's worlds."""
    unknown = sorted(set(body) - set(BODY_MEMBERS))
    if unknown:
        raise InvalidRequest(f"Invalid field: {unknown[0]}")
    base = _base_name(body.get("base"))
    try:
        horizon = plan_horizon(body.get("horizon_s"))
        changes = plan_changes(body.get("changes", []), horizon)
    except PlanError as exc:
        raise InvalidRequest(exc.message) from None
    if base == "live":
        _live_references(changes)
    else:
        plans_base(base)  # an unknown foundation is a 400 now, not a failed plan later
    if inline is None:
        inline = base == "live" and ActualLRP.objects.count() <= INLINE_ROWS
    plan = Plan.objects.create(base=base, changes=[c.as_dict() for c in changes], horizon_s=horizon,
                               created_by=user if getattr(user, "pk", None) else None)
    run = None
    if inline:
        run = _run(plan, changes, progress, report)
        plan.refresh_from_db()
        if plan.status == Plan.Status.FAILED:
            message = plan.error
            plan.delete()
            raise InvalidRequest(message)
    else:
        transaction.on_commit(lambda: plan_dispatch(plan.pk))
    # Who asked what of the simulator is on the record, as every other write is.
    audit_record("plan_create", f"plan-{plan.pk}", sim_now(), source=source, user=user,
                 diff={"base": [None, base], "horizon_s": [None, horizon],
                       "changes": [None, [c.describe() for c in changes]]})
    plans_expire(source=source, sparing=plan.pk)
    return plan, run


def plan_dispatch(plan_id: int) -> None:
    """Hand a big plan to the Celery worker; to a thread here when no broker answers."""
    try:
        worker_send(PLAN_RUN, plan_id)
    except Exception:  # noqa: BLE001 - no broker: the plan still runs, off the request
        log.info("no broker; plan %s runs in a thread of this process", plan_id)
        threading.Thread(target=_in_thread, args=(plan_id,), daemon=True, name=f"plan-{plan_id}").start()


def _in_thread(plan_id: int) -> None:
    try:
        plan_run_by_id(plan_id)
    finally:
        connection.close()  # the thread's own connection


def plan_run_by_id(plan_id: int) -> None:
    """The background body (the worker's task, or a thread's): one plan."""
    plan = Plan.objects.filter(pk=plan_id, status=Plan.Status.RUNNING).first()
    if plan is not None:
        _run(plan, plan_changes(plan.changes, plan.horizon_s))


def _run(plan: Plan, changes: list[Change], report: Callable[[float], None] | None = None,
         report_wanted: bool = False) -> PlanRun | None:
    try:
        return _run_turn(plan, changes, report, report_wanted)
    finally:
        _notify(plan.pk)


def _run_turn(plan: Plan, changes: list[Change], report: Callable[[float], None] | None,
              report_wanted: bool) -> PlanRun | None:
    with _RUNS:
        last = [0.0]

        def progress(fraction: float) -> None:
            now = time.monotonic()
            if fraction >= 1 or now - last[0] > 0.5:  # a row write at most twice a second
                last[0] = now
                Plan.objects.filter(pk=plan.pk).update(progress=fraction)
                _notify(plan.pk)
                if report is not None:
                    report(fraction)

        def cancelled() -> bool:
            return not Plan.objects.filter(pk=plan.pk, cancel_requested=False).exists()

        try:
            view = plans_base(plan.base)
            worlds = base_worlds(plan.base, 2, view=view)
            # A named foundation can be replaced: the plan says which version it ran on.
            Plan.objects.filter(pk=plan.pk).update(base_now=worlds[0].now, base_version=view.version)
            keep_report = report_wanted or len(worlds[0].rows) <= REPORT_ROWS
            replays = PlanReplays()
            run = run_plan_worlds(worlds[0], worlds[1], changes, plan.horizon_s, progress=progress,
                                  cancelled=cancelled, sample=keep_report, replays=replays)
            result = plan_result(run)
            result["replays"] = replays.summary()
            label = f"{plan.base} ({view.version})" if view.version else plan.base
            html = plan_report_html(run, label) if len(worlds[0].rows) <= REPORT_ROWS else ""
            with transaction.atomic():
                PlanAuction.objects.filter(plan_id=plan.pk).delete()
                PlanAuction.objects.bulk_create(
                    PlanAuction(plan_id=plan.pk, number=n, started_at=r["started_at"], record=r)
                    for n, r in enumerate(replays.kept, 1))
                Plan.objects.filter(pk=plan.pk).update(status=Plan.Status.DONE, result=result, report=html,
                                                       progress=1.0, finished_at=timezone.now())
            return run
        except PlanCancelled:
            Plan.objects.filter(pk=plan.pk).update(status=Plan.Status.CANCELLED, finished_at=timezone.now())
        except (PlanError, InvalidRequest) as exc:
            Plan.objects.filter(pk=plan.pk).update(status=Plan.Status.FAILED, error=exc.message,
                                                   finished_at=timezone.now())
        except Exception as exc:
            log.exception("plan %s failed", plan.pk)
            Plan.objects.filter(pk=plan.pk).update(status=Plan.Status.FAILED, error=f"internal error: {exc}",
                                                   finished_at=timezone.now())
        return None


class PlanReplays:
    """The sink a plan's world hands its auctions' replay records to (plans.md 1.7):
    keeps them in order within the bounds above, then answers False (no more wanted)."""

    def __init__(self, count: int | None = None, full: int | None = None, budget: int | None = None) -> None:
        self.count = PLAN_REPLAYS if count is None else count
        self.full = PLAN_FULL_REPLAYS if full is None else full
        self.budget = PLAN_REPLAY_BYTES if budget is None else budget
        self.kept: list[dict[str, Any]] = []
        self.bytes = 0
        self.stopped_by = ""

    def __call__(self, record: dict[str, Any]) -> bool:
        if len(self.kept) >= self.full and record.get("explanations"):
            record["explanations"] = [explanation_summary(note) for note in record["explanations"]]
            record["detail"] = "summary"
        size = len(json.dumps(record, separators=(",", ":")))
        if self.bytes + size > self.budget:
            self.stopped_by = "bytes"
            return False
        self.kept.append(record)
        self.bytes += size
        if len(self.kept) >= self.count:
            self.stopped_by = "count"
            return False
        return True

    def summary(self) -> dict[str, Any]:
        return {"kept": len(self.kept), "limit": self.count, "full": min(self.full, len(self.kept)),
                "full_limit": self.full,
                "bytes": self.bytes, "byte_limit": self.budget, "stopped_by": self.stopped_by}


def plan_note(plan_id: int) -> str:
    """The element a plan's group carries: its status and progress (plans.md 1.5)."""
    row = Plan.objects.filter(pk=plan_id).values("status", "progress").first()
    status, progress = (row["status"], row["progress"]) if row else ("gone", 0.0)
    return (f'<div id="plan-note" hx-swap-oob="true" hidden data-status="{status}" '
            f'data-progress="{progress:.3f}"></div>')


def _notify(plan_id: int) -> None:
    """Open pages of the plan learn of its progress through the live layer (no polling)."""
    key = f"html:plan.{plan_id}|plan-note"
    publish.mark_dirty(key, stored={key: plan_note(plan_id)})


def plan_report_html(run: PlanRun, base: str) -> str:
    return plan_report(run, base=base)


def plan_discard(plan_id: Any, *, user: Any = None, source: str = "api") -> None:
    """Discard a plan; a running one stops between two steps (its runner finds it gone)."""
    plan = plan_get(plan_id)
    with transaction.atomic():
        was = plan.status
        Plan.objects.filter(pk=plan.pk).delete()
        audit_record("plan_discard", f"plan-{plan.pk}", sim_now(), source=source, user=user,
                     diff={"status": [was, None]})


def plan_cancel(plan_id: Any, *, user: Any = None, source: str = "dashboard") -> Plan:
    """Stop a running plan between two steps; it stays, marked cancelled."""
    plan = plan_get(plan_id)
    if plan.status != Plan.Status.RUNNING:
        raise InvalidRequest(f"plan {plan.pk} is {plan.status}; only a running plan can be cancelled")
    with transaction.atomic():
        Plan.objects.filter(pk=plan.pk).update(cancel_requested=True)
        audit_record("plan_cancel", f"plan-{plan.pk}", sim_now(), source=source, user=user, diff={})
    plan.refresh_from_db()
    return plan


def plans_expire(*, now: datetime | None = None, source: str = "system", sparing: int | None = None) -> int:
    """Delete the plans past their retention (plans.md 1.8), their auctions with them, and
    answer how many: applied plans stay; an unapplied one goes once it is older than
    ``DIEGO_PLANS_MAX_AGE_DAYS`` or beyond the newest ``DIEGO_PLANS_KEEP`` unapplied
    (a running one only by age: its runner finds it gone and stops). ``sparing``: the plan
    just created, kept whatever the settings say (its creator is about to show it)."""
    now = now or timezone.now()
    unapplied = Plan.objects.filter(applied_at__isnull=True)
    old = Q(created_at__lt=now - timedelta(days=settings.DIEGO_PLANS_MAX_AGE_DAYS))
    newest = list(unapplied.exclude(old).order_by("-pk").values_list("pk", flat=True)
                  [:max(settings.DIEGO_PLANS_KEEP, 0)])
    ids = list(unapplied.filter(old | (~Q(pk__in=newest) & ~Q(status=Plan.Status.RUNNING)))
               .exclude(pk=sparing).order_by("pk").values_list("pk", flat=True))
    if not ids:
        return 0
    with transaction.atomic():
        Plan.objects.filter(pk__in=ids).delete()  # PlanAuction rows cascade
        audit_record("plans_expire", "plans", sim_now(), source=source, user=None,
                     diff={"plans": [ids, None]})
    return len(ids)


def plan_get(plan_id: Any) -> Plan:
    """A plan by id, or the newest with ``latest``."""
    if plan_id == "latest":
        plan = Plan.objects.order_by("-pk").first()
        if plan is None:
            raise ResourceNotFound("no plan yet")
    else:
        text = str(plan_id)
        plan = Plan.objects.filter(pk=int(text)).first() if text.isascii() and text.isdigit() \
            and len(text) <= 12 else None
    if plan is None:
        # Plans expire (``plans_expire``): say so, so a bookmarked plan is not a riddle.
        raise ResourceNotFound(f"plan {plan_id} expired or never existed")
    if (plan.status == Plan.Status.RUNNING
            and (timezone.now() - plan.created_at).total_seconds() > STALE_S and plan.progress == 0):
        # Its process went away before the first step: say so rather than spin forever.
        Plan.objects.filter(pk=plan.pk, status=Plan.Status.RUNNING, progress=0).update(
            status=Plan.Status.FAILED, error="the run was lost (its process stopped); run it again")
        plan.refresh_from_db()
    return plan


def plan_json(plan: Plan) -> dict[str, Any]:
    """A plan for the API; ``auctions`` links each kept auction's replay page (plans.md 1.7)."""
    auctions = [{"number": n, "detail": detail, "replay": reverse("plan-auction", args=(plan.pk, n))}
                for n, detail in plan_auction_details(plan.pk).items()]
    return {"id": plan.pk, "base": plan.base, "base_version": plan.base_version, "changes": plan.changes, "horizon_s": plan.horizon_s,
            "status": plan.status, "progress": plan.progress, "error": plan.error,
            "base_now": plan.base_now, "result": plan.result, "auctions": auctions,
            "applied": plan.applied_at is not None, "applied_sim": plan.applied_sim}


# -- applying -----------------------------------------------------------------------------

def plan_apply(plan_id: Any, *, user: Any = None, source: str = "dashboard") -> Plan:
    """Perform the plan's changes on the live cluster now, all or nothing (plans.md 1.6)."""
    plan = plan_get(plan_id)
    if plan.base != "live":
        raise InvalidRequest(f"plan {plan.pk} is on foundation {plan.base}, not the live cluster")
    if plan.status != Plan.Status.DONE:
        raise InvalidRequest(f"plan {plan.pk} is {plan.status}; only a finished plan can be applied")
    if plan.applied_at is not None:
        raise InvalidRequest(f"plan {plan.pk} was applied already")
    changes = plan_changes(plan.changes, plan.horizon_s)
    late = next((n for n, c in enumerate(changes) if c.at), None)
    if late is not None:
        raise InvalidRequest(f"changes[{late}] is at {changes[late].at:g} s: Apply performs changes at 0 only")
    with transaction.atomic():
        now = DbStore().now
        for change in changes:
            _apply_one(change, user=user, source=source, chaos_run=chaos_run)
        audit_record("plan_apply", f"plan-{plan.pk}", now, source=source, user=user,
                     diff={"changes": [None, [c.describe() for c in changes]]})
        Plan.objects.filter(pk=plan.pk).update(applied_at=timezone.now(), applied_sim=now,
                                               applied_by=user if getattr(user, "pk", None) else None)
    plan.refresh_from_db()
    return plan


def _apply_one(change: Change, *, user: Any, source: str, chaos_run: Any) -> None:
    args = dict(change.args)
    if change.action in CHAOS_CHANGES:
        name, names = CHAOS_CHANGES[change.action]
        chaos_run(name, {names[k]: v for k, v in args.items()}, source=source, user=user)
    elif change.action == "desire":
        desired_lrp_desire(args["spec"], source=source, user=user)
    elif change.action == "remove":
        desired_lrp_remove(args["process_guid"], source=source, user=user)
    elif change.action == "remove_cell":
        cell_remove(args["cell_id"], source=source, user=user)
    elif change.action == "auction_config":
        auction_settings_update(args, source=source, user=user)
    else:
        existing = {c.cell_id: sim_cell(c) for c in Cell.objects.select_related("zone")}
        zone, _ = Zone.objects.get_or_create(name=args["zone"])
        for cell in added_cells(existing, args):
            cell_save(_cell_model(cell, zone), [], source=source, user=user)


def _cell_model(cell: SimCell, zone: Zone) -> Cell:
    return Cell(cell_id=cell.cell_id, zone=zone, index=cell.index, memory_mb=cell.memory_mb,
                disk_mb=cell.disk_mb, containers=cell.containers, proxy_memory_mb=cell.proxy_memory_mb,
                preloaded_rootfses=list(cell.preloaded_rootfses), rootfs_providers=list(cell.rootfs_providers),
                volume_drivers=list(cell.volume_drivers), placement_tags=list(cell.placement_tags),
                optional_placement_tags=list(cell.optional_placement_tags))


def live_placed() -> dict[str, dict[str, int]]:
    """Per app, the live cluster's ORDINARY RUNNING instances per zone (beside a prediction)."""
    zone_of = dict(Cell.objects.values_list("cell_id", "zone__name"))
    out: dict[str, dict[str, int]] = {}
    for guid, cell_id in ActualLRP.objects.filter(
            presence=ActualLRP.Presence.ORDINARY, state=ActualLRP.State.RUNNING).values_list("desired_id", "cell_id"):
        zone = zone_of.get(cell_id, "(removed cell)")
        by_zone = out.setdefault(guid, {})
        by_zone[zone] = by_zone.get(zone, 0) + 1
    return {g: dict(sorted(z.items())) for g, z in sorted(out.items())}


# -- capacity -----------------------------------------------------------------------------

def capacity_answer(raw: Mapping[str, Any]) -> dict[str, Any]:
    """How many more of a shape fit on the base (plans.md 2.1)."""
    try:
        shape = work_shape(raw)
    except CapacityError as exc:
        raise InvalidRequest(exc.message) from None
    base = _base_name(raw.get("base"))
    if base == "live":
        cells = [sim_cell(c) for c in Cell.objects.select_related("zone")]
        loads = cell_loads([c.cell_id for c in cells], {c.cell_id: c.proxy_memory_mb for c in cells})
        now = DbStore().now
    else:
        view = plans_base(base)
        cells, loads, now = list(view.cells), dict(view.loads), view.now
    return capacity(cells, loads, now, shape, auction_settings_config())


def _live_fingerprint() -> str:
    """What the zone-loss answer depends on, cheaply: the world epoch, the cells' states
    and the desired instances (not the clock, not every placement)."""
    epoch = SimClock.objects.filter(pk=1).values_list("world_epoch", flat=True).first()
    cells = Cell.objects.order_by("cell_id").values_list("cell_id", "state", "memory_mb")
    apps = DesiredLRP.objects.order_by("process_guid").values_list("process_guid", "instances", "memory_mb")
    return zone_loss_fingerprint(epoch, cells, apps)


def _fingerprint(name: str) -> str:
    if name == "live":
        return _live_fingerprint()
    kept = Foundation.objects.filter(name=name).values_list("version", "sha256").first()
    return zone_loss_fingerprint(name, [str(kept)], [])


@dataclass(frozen=True)
class ZoneLossState:
    """Where a base's N-1 answer stands for an asker: ``answer`` when current; otherwise
    the worker's computation started ``since`` (None: no broker took the ask) and the
    ``last`` answer, of an older world, if any."""

    answer: dict[str, Any] | None
    last: dict[str, Any] | None = None
    since: datetime | None = None


def zone_loss_poll(base: Any = None) -> ZoneLossState:
    """The base's answer without making the asker wait (plans.md 2.2): the kept one when
    it is current; worked out here on a small base (``INLINE_ROWS``); on a big one asked
    of the Celery worker (``zone_loss_refresh``, one at a time per base)."""
    name = _base_name(base)
    key = _fingerprint(name)
    kept = ZoneLossAnswer.objects.filter(base=name).values("fingerprint", "answer").first()
    if kept is not None and kept["answer"] is not None and kept["fingerprint"] == key:
        return ZoneLossState(kept["answer"])
    if _base_rows(name) <= INLINE_ROWS:
        return ZoneLossState(zone_loss_answer(name))
    zone_loss_request(name)
    # Read again: the worker may have answered already, or the ask found no broker.
    row = ZoneLossAnswer.objects.filter(base=name).values("fingerprint", "answer", "computing_since").first()
    if row is not None and row["answer"] is not None and row["fingerprint"] == key:
        return ZoneLossState(row["answer"])
    return ZoneLossState(None, row["answer"] if row else None, row["computing_since"] if row else None)


def _base_rows(name: str) -> int:
    """The base's instance count, the size the inline rule reads (a foundation's from
    its summary; one imported before summaries counts as big)."""
    if name == "live":
        return ActualLRP.objects.count()
    summary = Foundation.objects.filter(name=name).values_list("summary", flat=True).first()
    if summary is None:
        raise InvalidRequest(f"no foundation named {name}")
    rows = summary.get("actual_lrps")
    return int(rows) if isinstance(rows, int) else INLINE_ROWS + 1


def zone_loss_chips() -> dict[str, Any] | None:
    """The live answer for the grid header: the current one, or the last (or None)
    while the worker works the new one out."""
    state = zone_loss_poll("live")
    return state.answer if state.answer is not None else state.last


def zone_loss_request(base: str = "live") -> bool:
    """Ask the worker for the base's answer unless it is working one out already (a claim
    older than ``ZONE_LOSS_STALE_S`` was lost with its worker). True when asked now."""
    ZoneLossAnswer.objects.get_or_create(base=base)
    now = timezone.now()
    claimed = ZoneLossAnswer.objects.filter(
        Q(computing_since__isnull=True) | Q(computing_since__lt=now - timedelta(seconds=ZONE_LOSS_STALE_S)),
        base=base).update(computing_since=now)
    if not claimed:
        return False
    transaction.on_commit(lambda: _zone_loss_dispatch(base, now))
    return True


def _zone_loss_dispatch(base: str, claimed_at: Any) -> None:
    try:
        worker_send(ZONE_LOSS_RUN, base)
    except Exception as exc:  # noqa: BLE001 - no broker: the chips say "checking", the API 503, until a later ask
        log.warning("no broker (%s); the zone-loss answer of %s waits for a worker", exc, base)
        ZoneLossAnswer.objects.filter(base=base, computing_since=claimed_at).update(computing_since=None)


def zone_loss_refresh(base: str = "live") -> None:
    """The worker's body: the base's answer worked out and kept with the fingerprint of
    the world it was read from; the claim released whatever happens."""
    try:
        zone_loss_answer(base, force=True)
    finally:
        ZoneLossAnswer.objects.filter(base=base).update(computing_since=None)


def zone_loss_answer(base: Any = None, *, force: bool = False) -> dict[str, Any]:
    """N-1 per zone (plans.md 2.2), kept (in the database: every process reads it) until
    the base changes."""
    name = _base_name(base)
    key = _fingerprint(name)
    if not force:
        kept = ZoneLossAnswer.objects.filter(base=name, fingerprint=key).values_list("answer", flat=True).first()
        if kept is not None:
            answer: dict[str, Any] = kept
            return answer
    view = plans_base(name)
    seed, config = clock_row().seed, auction_settings_config()
    zones = sorted({c.zone for c in view.cells})
    answer = {"zones": {}, "horizon_s": 0.0, "base_now": view.now}
    for zone in zones:
        world = world_from_view(view, config, seed=seed, record_log=False)
        answer["zones"][zone] = zone_loss(world, zone, fresh=True)
        answer["horizon_s"] = zone_loss_horizon(world)
    if not zones:
        answer["horizon_s"] = zone_loss_horizon(world_from_view(view, config, seed=seed, record_log=False))
    ZoneLossAnswer.objects.update_or_create(base=name, defaults={
        "fingerprint": key, "answer": answer, "computed_at": timezone.now()})
    return answer
