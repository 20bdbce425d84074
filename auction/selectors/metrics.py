"""The metrics header (dashboard.md M1): Diego's names, values, 60-point sparklines.

Honest numbers: a gauge the cluster has right now (instances and tasks by state, desired
instances) shows the live count, so the header never contradicts the grid; a gauge only
a convergence pass knows (missing, extra, suspect cells...) says which pass and sim
instant it is from ("pass 12 · 0:06:00"). Sparklines are the passes' history (the live
value last); auctioneer figures come from the stored auctions and the running counters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Sum

from auction.models import ActualLRP, AuctionRun, Cell, ConvergenceRun, Counter, DesiredLRP, Task
from auction.selectors.clock import clock_row, world_epoch
from auction.sim.clock import format_sim_time

POINTS = 60
SPARK_W = 60
SPARK_H = 16

# name → (tooltip, unit, warn, crit); thresholds in the unit shown.
GAUGES: dict[str, str] = {
    "LRPsDesired": "Sum of instances over all DesiredLRPs (now)",
    "LRPsRunning": "ORDINARY instances RUNNING (now; a pass records it after its actions)",
    "LRPsClaimed": "ORDINARY instances CLAIMED (now)",
    "LRPsUnclaimed": "ORDINARY instances UNCLAIMED (now)",
    "CrashedActualLRPs": "ORDINARY instances CRASHED (now)",
    "CrashingDesiredLRPs": "Process guids with at least one ORDINARY CRASHED instance (now)",
    "LRPsMissing": "Instances the last pass found missing (step 3)",
    "LRPsExtra": "Instances the last pass retired (extras in fresh domains, fresh orphans)",
    "SuspectRunningActualLRPs": "SUSPECT instances RUNNING, found by the last pass",
    "PresentCells": "Cells whose presence was alive at the last pass",
    "SuspectCells": "Cells holding instances but without presence at the last pass",
    "TasksPending": "Tasks PENDING (now)",
    "TasksRunning": "Tasks RUNNING (now)",
    "TasksCompleted": "Tasks COMPLETED (now)",
    "TasksResolving": "Tasks RESOLVING (now)",
}
AUCTION_COUNTERS: dict[str, str] = {
    "AuctioneerLRPAuctionsStarted": "LRP instances placed (total; sparkline per auction)",
    "AuctioneerLRPAuctionsFailed": "LRP instances that failed placement (total; per auction)",
    "AuctioneerTaskAuctionsStarted": "Tasks placed (total; sparkline per auction)",
    "AuctioneerTaskAuctionsFailed": "Tasks that failed placement (total; per auction)",
}


@dataclass(slots=True)
class Metric:
    name: str
    value: float | None
    text: str
    tooltip: str
    series: list[float]
    level: str = "ok"  # ok | warn | crit
    asof: str = ""  # "pass 12 · 0:06:00" for a value only a pass knows; "" when live

    @property
    def dom_id(self) -> str:
        return "metric-" + self.name.replace(".", "-")

    @property
    def points(self) -> str:
        """An SVG polyline's points, scaled to the series' own range."""
        if not self.series:
            return ""
        low, high = min(self.series), max(self.series)
        span = (high - low) or 1.0
        step = SPARK_W / max(1, POINTS - 1)
        offset = POINTS - len(self.series)
        return " ".join(
            f"{(offset + i) * step:.1f},{SPARK_H - 1 - (v - low) / span * (SPARK_H - 2):.1f}"
            for i, v in enumerate(self.series)
        )

    @property
    def level_label(self) -> str:
        return {"warn": "warning", "crit": "critical"}.get(self.level, "")


def _level(seconds: float | None, warn: float, crit: float) -> str:
    if seconds is None or seconds < warn:
        return "ok"
    return "crit" if seconds >= crit else "warn"


def _count_text(value: float | None) -> str:
    return "—" if value is None else f"{int(value):,}"


def _seconds_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


def live_gauges() -> dict[str, int]:
    """The gauges the cluster has right now (bbs.md 9 definitions, counted live)."""
    out = {name: 0 for name in ("LRPsRunning", "LRPsClaimed", "LRPsUnclaimed", "CrashedActualLRPs",
                                "TasksPending", "TasksRunning", "TasksCompleted", "TasksResolving")}
    names = {"RUNNING": "LRPsRunning", "CLAIMED": "LRPsClaimed", "UNCLAIMED": "LRPsUnclaimed",
             "CRASHED": "CrashedActualLRPs"}
    for state, n in ActualLRP.objects.filter(presence=ActualLRP.Presence.ORDINARY).values_list(
            "state").annotate(n=Count("id")).values_list("state", "n"):
        out[names[state]] = n
    for state, n in Task.objects.values_list("state").annotate(n=Count("id")).values_list("state", "n"):
        out["Tasks" + state.title()] = n
    out["CrashingDesiredLRPs"] = ActualLRP.objects.filter(
        presence=ActualLRP.Presence.ORDINARY, state=ActualLRP.State.CRASHED).values(
        "desired_id").distinct().count()
    out["LRPsDesired"] = DesiredLRP.objects.aggregate(n=Sum("instances"))["n"] or 0
    return out


def _auction_counts(epoch: int) -> list[dict[str, Any]]:
    """This world's last auctions' placements and failures, LRPs and tasks apart, oldest
    first. Read from each record's counts; only a record kept before it had them is decoded."""
    rows = list(AuctionRun.objects.filter(world_epoch=epoch).order_by("-id")
                .values("id", "failure_counts", "fetch_ms")[:POINTS])[::-1]
    old = [r["id"] for r in rows if "placed" not in (r["failure_counts"] or {})]
    decoded = {r["id"]: r for r in AuctionRun.objects.filter(id__in=old).values("id", "placements", "failures")}
    out = []
    for row in rows:
        counted = row["failure_counts"] or {}
        if row["id"] in decoded:
            # LRP idents are "<guid>.<index>"; task guids cannot hold a dot (bbs.md 7).
            placements, failures = decoded[row["id"]]["placements"], decoded[row["id"]]["failures"]
            placed = {"lrp": sum(1 for k in placements if "." in k), "task": sum(1 for k in placements if "." not in k)}
            counted = {"lrp": sum(1 for k in failures if "." in k), "task": sum(1 for k in failures if "." not in k),
                       **counted}  # a sampled record's own counts win
        else:
            placed = counted["placed"]
        out.append({"placed": placed, "failed": {"lrp": counted["lrp"], "task": counted["task"]},
                    "fetch_ms": row["fetch_ms"]})
    return out


# Counters start again with each world (a scenario or foundation load): they count what
# happened in the cluster shown, not across worlds whose sim times restarted at 0.
SINCE_LOAD = "(since this world was loaded)"


def metrics_header() -> list[Metric]:
    # This world's passes and auctions only: after a scenario or foundation load the tiles
    # start again rather than show the last world's (dashboard.md M1).
    epoch = world_epoch()
    runs = list(ConvergenceRun.objects.filter(world_epoch=epoch).order_by("-id")
                .values("id", "at", "metrics", "duration_ns")[:POINTS])[::-1]
    auctions = _auction_counts(epoch)
    counters = dict(Counter.objects.values_list("name", "value"))
    latest = runs[-1]["metrics"] if runs else {}
    asof = f"pass {runs[-1]['id']} · {format_sim_time(runs[-1]['at'])}" if runs else ""
    live = live_gauges()
    out: list[Metric] = []
    for name, tip in GAUGES.items():
        series = [float(r["metrics"].get(name, 0)) for r in runs]
        if name in live:
            value: float | None = live[name]
            out.append(Metric(name, value, _count_text(value), tip, [*series, float(live[name])][-POINTS:]))
            continue
        value = latest.get(name) if runs else None
        out.append(Metric(name, value, _count_text(value), f"{tip} (as of {asof or 'no pass yet'})",
                          series, asof=asof))

    durations = [r["duration_ns"] / 1e9 for r in runs]
    duration = durations[-1] if durations else None
    out.append(Metric("ConvergenceLRPDuration", duration, _seconds_text(duration),
                      "Wall time of the last convergence pass (warn 10 s, critical 20 s)",
                      durations, _level(duration, 10.0, 20.0)))
    lrp_runs = counters.get("ConvergenceLRPRuns")
    run_series = [float(lrp_runs - (len(runs) - 1 - i)) for i in range(len(runs))] if lrp_runs else []
    out.append(Metric("ConvergenceLRPRuns", lrp_runs, _count_text(lrp_runs),
                      f"Convergence passes completed {SINCE_LOAD}", run_series))

    per_auction = {name: [] for name in AUCTION_COUNTERS}
    for a in auctions:
        per_auction["AuctioneerLRPAuctionsStarted"].append(a["placed"]["lrp"])
        per_auction["AuctioneerTaskAuctionsStarted"].append(a["placed"]["task"])
        per_auction["AuctioneerLRPAuctionsFailed"].append(a["failed"]["lrp"])
        per_auction["AuctioneerTaskAuctionsFailed"].append(a["failed"]["task"])
    for name, tip in AUCTION_COUNTERS.items():
        value = counters.get(name, 0 if auctions else None)
        out.append(Metric(name, value, _count_text(value), f"{tip} {SINCE_LOAD}",
                          [float(v) for v in per_auction[name]]))

    fetches = [a["fetch_ms"] / 1000 for a in auctions]
    fetch = fetches[-1] if fetches else None
    out.append(Metric("AuctioneerFetchStatesDuration", fetch, _seconds_text(fetch),
                      "Wall time of the last auction's cell state fetch (warn 2 s, critical 5 s)",
                      fetches, _level(fetch, 2.0, 5.0)))
    # A failed cell whose presence has not lapsed yet is still asked, and does not answer.
    now = clock_row().now()
    silent = sum(1 for lost in Cell.objects.filter(state=Cell.State.FAILED).values_list(
        "presence_lost_at", flat=True) if lost is None or now < lost)
    out.append(Metric("AuctioneerFailedCellStateRequests", silent, _count_text(silent),
                      "Cells the auctioneer asks for state that do not answer (failed, presence not yet lapsed)",
                      []))
    for name in sorted(k for k in latest if k.startswith("Domain.")):
        series = [float(r["metrics"].get(name, 0)) for r in runs]
        out.append(Metric(name, latest[name], "fresh",
                          f"{name[7:]} was fresh at the last pass (a stale domain is absent)", series))
    return out
