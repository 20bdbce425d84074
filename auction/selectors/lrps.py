"""Desired vs actual, in cfdot's nouns (dashboard.md D1-D5): the /lrps/ read model.

Every figure is what the BBS itself would compute from the same rows: missing and
extra indices follow convergence step 3 (bbs.md 4.2, blind spot included), restarts
follow the crash policy of bbs.md 3 (``auction.bbs.restart``), freshness bbs.md 5.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from auction.bbs.restart import (
    IMMEDIATE_RESTARTS,
    MAX_RESTART_ATTEMPTS,
    backoff_s,
    crash_count_after,
)
from auction.models import ActualLRP, Cell, ConvergenceRun, DesiredLRP, Domain, Task
from auction.selectors.clock import clock_row

ORDINARY = ActualLRP.Presence.ORDINARY
EVACUATING = ActualLRP.Presence.EVACUATING
SUSPECT = ActualLRP.Presence.SUSPECT
STATES = ("UNCLAIMED", "CLAIMED", "RUNNING", "CRASHED")
# bbs.md 0: the timer that gates each task row (kick, expire pending, expire completed).
TASK_KICK_S = 30.0
TASK_EXPIRE_PENDING_S = 1800.0
TASK_EXPIRE_COMPLETED_S = 120.0
MAX_TASK_REJECTIONS = 3
# dashboard.md D4 / M1: ConvergenceLRPDuration warns at 10 s and is critical at 20 s.
CONVERGENCE_WARN_S = 10.0
CONVERGENCE_CRIT_S = 20.0
BANNER = ("Extras are retired only while their domain is fresh; "
          "missing instances are created regardless.")


def seconds_text(seconds: float) -> str:
    return f"{math.ceil(seconds - 1e-9):d} s"


@dataclass(frozen=True, slots=True)
class Restart:
    """When an instance is (or would be) restarted, as the crash policy says."""

    text: str
    due: float | None = None  # sim instant the back-off ends, for the browser's countdown


def restart_of(state: str, crash_count: int, since: float, now: float) -> Restart:
    """bbs.md 3, for one ORDINARY row.

    A CRASHED row waits for the first pass at or after since + B(n) (never at 200);
    any other row is shown with what its *next* crash would do, so an instance that
    crashed once or twice reads "immediate" and the third crash's wait is visible.
    """
    if state == "CRASHED":
        if crash_count >= MAX_RESTART_ATTEMPTS:
            return Restart(f"never ({crash_count} crashes)")
        if crash_count <= IMMEDIATE_RESTARTS:
            return Restart("next pass")
        due = since + backoff_s(crash_count)
        if due <= now:
            return Restart("next pass", due)
        return Restart(f"in {seconds_text(due - now)}, next pass", due)
    if crash_count == 0:
        return Restart("")
    upcoming = crash_count_after(state, since, crash_count, now)
    if upcoming >= MAX_RESTART_ATTEMPTS:
        return Restart(f"never ({upcoming} crashes)")
    if upcoming <= IMMEDIATE_RESTARTS:
        return Restart("immediate")
    return Restart(f"after {seconds_text(backoff_s(upcoming))} back-off")


@dataclass(slots=True)
class DomainView:
    name: str
    expires_at: float | None  # None: never expires (ttl 0)
    ttl_s: float | None
    fresh: bool
    recorded: bool  # False: LRPs name it but no upsert exists (stale, bbs.md 5)
    now: float

    @property
    def remaining_s(self) -> float | None:
        return None if self.expires_at is None else self.expires_at - self.now

    @property
    def expiry_text(self) -> str:
        if not self.recorded:
            return "no upsert: stale"
        if self.expires_at is None:
            return "never expires"
        left = self.expires_at - self.now
        return f"expires in {seconds_text(left)}" if left > 0 else f"expired {seconds_text(-left)} ago"


@dataclass(slots=True)
class InstanceLine:
    """D2: one line per index and presence."""

    process_guid: str
    index: int
    presence: str
    state: str
    cell_id: str
    zone: str
    since: float
    crash_count: int
    crash_reason: str
    placement_error: str
    restart: Restart
    extra: bool = False

    @property
    def ident(self) -> str:
        return f"{self.index}-{self.presence.lower()}"


def misaligned_words(indices: list[int], instances: int) -> str:
    """Diego's index-misalignment blind spot, said where it happens (bbs.md 10)."""
    shown = ", ".join(map(str, indices[:8])) + (", …" if len(indices) > 8 else "")
    return (f"indices {shown} for {instances} instance{'s' if instances != 1 else ''}: Diego's "
            "convergence does not see misaligned indices (the count matches); it stays until "
            "the count changes")


@dataclass(slots=True)
class LRPRow:
    """D1: one row per DesiredLRP."""

    process_guid: str
    domain: DomainView
    instances: int
    memory_mb: int
    ordinary: dict[str, int]
    evacuating: int
    suspect: int
    missing: list[int]
    extra: list[int]
    misaligned: list[int]  # the indices, when the count matches but they are not 0..n-1
    zones: dict[str, int]
    crashes: int
    restart: Restart
    placement_error: str
    lines: list[InstanceLine] = field(default_factory=list)

    @property
    def held(self) -> str:
        """D3: extras a stale domain keeps alive."""
        if self.extra and not self.domain.fresh:
            return f"{len(self.extra)} extra, held: {self.domain.name} stale"
        return ""

    @property
    def skew(self) -> int:
        return max(self.zones.values()) - min(self.zones.values()) if len(self.zones) > 1 else 0

    @property
    def status(self) -> tuple[str, str, str]:
        """(key, glyph, words): never colour alone (U4)."""
        running = self.ordinary.get("RUNNING", 0)
        if self.ordinary.get("CRASHED", 0):
            return "crashing", "✗", f"crashing: {self.ordinary['CRASHED']} crashed"
        if self.held:
            return "held", "‖", self.held
        if self.missing:
            return "missing", "!", f"{len(self.missing)} missing"
        if self.extra:
            return "extra", "+", f"{len(self.extra)} extra, to retire"
        if self.misaligned:
            return "misaligned", "≠", misaligned_words(self.misaligned, self.instances)
        if running == self.instances and not self.suspect:
            return "converged", "✓", "converged"
        return "starting", "…", f"{running}/{self.instances} running"


@dataclass(slots=True)
class ConvergenceView:
    """D4: the countdown to the next pass and what the last one did."""

    now: float
    next_at: float
    interval_s: float
    last_at: float | None
    last_duration_s: float | None
    lrp_actions: dict[str, list[str]]
    task_actions: dict[str, list[str]]

    @property
    def remaining_s(self) -> float:
        return max(0.0, self.next_at - self.now)

    @property
    def level(self) -> str:
        d = self.last_duration_s
        if d is None or d < CONVERGENCE_WARN_S:
            return "ok"
        return "crit" if d >= CONVERGENCE_CRIT_S else "warn"


@dataclass(slots=True)
class TaskLine:
    """D5: a task's mode, state, cell, rejections, failure and the timer it waits on."""

    task_guid: str
    mode: str
    state: str
    cell_id: str
    rejection_count: int
    rejection_reason: str
    failed: bool
    failure_reason: str
    expires_at: float | None
    expiry_what: str
    now: float

    @property
    def rejections(self) -> str:
        return f"{self.rejection_count}/{MAX_TASK_REJECTIONS}"

    @property
    def expiry_text(self) -> str:
        if self.expires_at is None:
            return ""
        left = self.expires_at - self.now
        return f"{self.expiry_what} in {seconds_text(left)}" if left > 0 else f"{self.expiry_what} at next pass"


@dataclass(slots=True)
class LRPsPage:
    now: float
    rows: list[LRPRow]  # this page's rows (``PER_PAGE``), in guid order
    domains: list[DomainView]
    convergence: ConvergenceView
    tasks: list[TaskLine]
    orphans: list[InstanceLine]
    banner: str = BANNER
    total: int = 0  # DesiredLRPs on every page
    number: int = 1
    pages: int = 1

    @property
    def rows_digest(self) -> str:
        """Names the set and order of this page's rows: it changes when an LRP comes or goes."""
        return hashlib.sha1(" ".join(r.process_guid for r in self.rows).encode()).hexdigest()[:12]


def domain_views(now: float, named: set[str] | None = None) -> dict[str, DomainView]:
    views = {
        name: DomainView(name, expires_at, ttl, expires_at is None or expires_at > now, True, now)
        for name, expires_at, ttl in Domain.objects.values_list("name", "expires_at", "ttl_s")
    }
    for name in sorted(named or ()):
        if name and name not in views:
            views[name] = DomainView(name, 0.0, None, False, False, now)
    return dict(sorted(views.items()))


def lrp_rows(now: float, guids: list[str] | None = None) -> tuple[list[LRPRow], list[InstanceLine], dict[str, DomainView]]:
    """Rows for every DesiredLRP (or ``guids``), plus ORDINARY rows with no desired (orphans)."""
    desired_q = DesiredLRP.objects.values_list("process_guid", "domain", "instances", "memory_mb")
    actual_q = ActualLRP.objects.values_list(
        "desired_id", "index", "presence", "state", "cell_id", "since", "crash_count",
        "crash_reason", "placement_error", "domain").order_by("desired_id", "index", "presence")
    if guids is not None:
        desired_q = desired_q.filter(process_guid__in=guids)
        actual_q = actual_q.filter(desired_id__in=guids)
    desired = list(desired_q)
    zone_of = dict(Cell.objects.values_list("cell_id", "zone__name"))
    by_guid: dict[str, list[InstanceLine]] = defaultdict(list)
    for guid, index, presence, state, cell_id, since, crashes, reason, error, _domain in actual_q:
        restart = restart_of(state, crashes, since, now) if presence == ORDINARY else Restart("")
        by_guid[guid].append(InstanceLine(guid, index, presence, state, cell_id, zone_of.get(cell_id, ""),
                                          since, crashes, reason, error, restart))
    domains = domain_views(now, {d for _, d, _, _ in desired})
    rows = [_row(guid, domains[domain], instances, memory, by_guid.pop(guid, []), now)
            for guid, domain, instances, memory in desired]
    orphans = [line for lines in by_guid.values() for line in lines if line.presence == ORDINARY]
    return rows, orphans, domains


def _row(guid: str, domain: DomainView, instances: int, memory: int,
         lines: list[InstanceLine], now: float) -> LRPRow:
    ordinary = [line for line in lines if line.presence == ORDINARY]
    by_state = Counter(line.state for line in ordinary)
    missing: list[int] = []
    extra: list[int] = []
    misaligned: list[int] = []
    present = {line.index for line in ordinary}
    # Step 3 of bbs.md 4.2 looks only when the ORDINARY count differs from instances.
    if len(ordinary) != instances:
        missing = [i for i in range(instances) if i not in present]
        extra = sorted(line.index for line in ordinary if line.index >= instances)
    elif any(index >= instances for index in present):
        # The count matches but not the indices (rows 0 and 2 for 2 instances): Diego's
        # blind spot (bbs.md 10), named here instead of "converged".
        misaligned = sorted(present)
    for line in ordinary:
        line.extra = line.index in extra
    zones: Counter[str] = Counter(line.zone for line in ordinary
                                  if line.state in ("CLAIMED", "RUNNING") and line.zone)
    crashed = [line.restart for line in ordinary if line.state == "CRASHED"]
    restart = min(crashed, key=_restart_order) if crashed else Restart("")
    errors = [line.placement_error for line in ordinary if line.state == "UNCLAIMED" and line.placement_error]
    return LRPRow(
        process_guid=guid, domain=domain, instances=instances, memory_mb=memory,
        ordinary={s: by_state.get(s, 0) for s in STATES},
        evacuating=sum(1 for line in lines if line.presence == EVACUATING),
        suspect=sum(1 for line in lines if line.presence == SUSPECT),
        missing=missing, extra=extra, misaligned=misaligned, zones=dict(sorted(zones.items())),
        crashes=sum(line.crash_count for line in ordinary), restart=restart,
        placement_error=errors[-1] if errors else "", lines=lines,
    )


def _restart_order(restart: Restart) -> float:
    """Soonest first: "next pass" (back-off over, or none), then by due instant, "never" last."""
    if restart.text.startswith("never"):
        return math.inf
    return restart.due if restart.due is not None and restart.text.startswith("in ") else -math.inf


def next_pass_at() -> float:
    """The next pass's instant (bbs.md 4.1: one interval after the previous pass).

    The advance moves the clock row's timer after the pass's transaction commits, so a
    frame rendered by that commit would still read the old instant: the last recorded
    pass says it too.
    """
    clock = clock_row()
    last = ConvergenceRun.objects.order_by("-id").values_list("at", flat=True).first()
    if last is not None and abs(last - clock.next_convergence_at) < 1e-6:
        return last + clock.convergence_interval_s
    return clock.next_convergence_at


def convergence_view(now: float) -> ConvergenceView:
    clock = clock_row()
    last = ConvergenceRun.objects.order_by("-id").values("at", "duration_ns", "lrp", "tasks").first()
    return ConvergenceView(
        now=now, next_at=next_pass_at(), interval_s=clock.convergence_interval_s,
        last_at=last["at"] if last else None,
        last_duration_s=last["duration_ns"] / 1e9 if last else None,
        lrp_actions=dict(last["lrp"]) if last else {},
        task_actions={k: _task_keys(v) for k, v in last["tasks"].items()} if last else {},
    )


def _task_keys(value: object) -> list[str]:
    # "fail" is stored as guid → reason; the rest as lists of guids.
    if isinstance(value, dict):
        return [f"{guid}: {reason}" for guid, reason in sorted(value.items())]
    return list(value) if isinstance(value, list) else []


def task_lines(now: float) -> list[TaskLine]:
    lines = []
    for t in Task.objects.values("task_guid", "placement_mode", "state", "cell_id", "rejection_count",
                                 "rejection_reason", "failed", "failure_reason", "created_at",
                                 "updated_at", "first_completed_at"):
        expires_at, what = _task_timer(t)
        lines.append(TaskLine(t["task_guid"], t["placement_mode"], t["state"], t["cell_id"],
                              t["rejection_count"], t["rejection_reason"], t["failed"],
                              t["failure_reason"], expires_at, what, now))
    return lines


def _task_timer(t: dict) -> tuple[float | None, str]:
    """Which task-convergence rule (bbs.md 7) acts on this task next, and when."""
    if t["state"] == Task.State.PENDING:
        return t["created_at"] + TASK_EXPIRE_PENDING_S, "fails unstarted"
    if t["state"] == Task.State.COMPLETED and t["first_completed_at"] is not None:
        return t["first_completed_at"] + TASK_EXPIRE_COMPLETED_S, "deleted"
    if t["state"] == Task.State.RESOLVING:
        return t["updated_at"] + TASK_KICK_S, "back to COMPLETED"
    return None, ""


# DesiredLRPs per page of /lrps/: a page (and each live frame of it) stays small however
# many LRPs the cluster has (dashboard.md D1).
PER_PAGE = 200


def lrps_page(now: float | None = None, page: int | str = 1) -> LRPsPage:
    """One page of desired vs actual: only its LRPs' instances are read (10,000 LRPs cost
    what 200 do), the domains and the orphans are the whole cluster's."""
    now = clock_row().now() if now is None else now
    total = DesiredLRP.objects.count()
    pages = max(1, -(-total // PER_PAGE))
    number = min(max(1, int(page) if str(page).isascii() and str(page).isdigit() else 1), pages)
    guids = list(DesiredLRP.objects.order_by("process_guid").values_list("process_guid", flat=True)
                 [(number - 1) * PER_PAGE:number * PER_PAGE])
    rows, _, _ = lrp_rows(now, guids)
    rows.sort(key=lambda row: row.process_guid)
    orphan_guids = list(ActualLRP.objects.filter(presence=ORDINARY).exclude(
        desired_id__in=DesiredLRP.objects.values("process_guid")).values_list("desired_id", flat=True).distinct())
    _, orphans, _ = lrp_rows(now, orphan_guids) if orphan_guids else ([], [], {})
    domains = domain_views(now, set(DesiredLRP.objects.values_list("domain", flat=True).distinct()))
    return LRPsPage(now=now, rows=rows, domains=list(domains.values()),
                    convergence=convergence_view(now), tasks=task_lines(now), orphans=orphans,
                    total=total, number=number, pages=pages)
