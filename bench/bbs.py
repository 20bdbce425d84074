"""Benchmarks of the database shell (issue: BBS and auctioneer loop). Prints JSON.

    DATABASE_URL=postgres://… python -m bench.bbs --wipe

1. A convergence pass over 10,000 desired LRPs and 250,000 actual LRPs (1,000 cells in
   5 zones, one cell lost, 1 % of instances missing, 0.5 % crashed and due a restart).
2. The auction of a 1,000-instance batch on 100 cells, database included.
3. The unplaceable flood (issue 14): on the 4-cell seed, scale an app to 100,000 (the
   request's time), then one auction (100,000 failures, with its writes and record)
   while another thread ticks the clock (every writer retries on a lock: the lock
   errors met and given up on are counted), one convergence pass with the 100,000
   still queued, the scale back to 3, and how much work is still queued after it (0).
4. ``--happy``: 100,000 instances of 64 MB desired on 1,000 cells of 64 GB in 3 zones;
   the time until all are RUNNING (desire, auctions, starts), database included.

5. ``remove`` (with ``--happy N``, default 100,000): the happy path's N RUNNING instances,
   then a scale-down to 1 and, on a cluster built again, the removal of the app
   (``DELETE /api/v1/desired_lrps/:guid``'s service), and a cell full of instances taken
   out: each request's time, the time until the last of its rows is gone, the sim-seconds
   per wall-second meanwhile (at least over a second) that another thread covered
   advancing the live cluster to a running clock's now, as beat does, its slowest
   advance, and the lock errors met (issue 27). Last, a scenario load replacing a
   cluster of N x 2.5 RUNNING instances (250,000 for the default).

``--only flood,happy`` runs a subset. It replaces the cluster in the database it runs
against: hence --wipe. Quote figures with ``DJANGO_DEBUG=0`` (the debug cursor records
every statement).

The figures and their history are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from typing import Any

from django.core.management import call_command
from django.db import connection, transaction

from auction.live.publish import suppressed
from auction.models import ActualLRP, Cell, DesiredLRP, Domain, PendingWork, Task, Zone
from auction.services.clock import clock_reset, clock_tick
from auction.services.domains import domain_upsert
from auction.services.retry import lock_stats
from auction.services.sim import auction_once, convergence_run
from auction.services.store import DbStore
from auction.services.work import set_trigger_suppressed

PARTS = ("auction", "convergence", "flood", "happy", "remove")


def wipe() -> None:
    models = (PendingWork, ActualLRP, DesiredLRP, Task, Domain, Cell, Zone)
    if connection.vendor == "postgresql":
        # As a fresh cluster is: a DELETE left the last part's 100,000 rows as dead tuples
        # that the next part's first reads walked (most of a scale-up's own 3-row read).
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE " + ", ".join(connection.ops.quote_name(m._meta.db_table) for m in models))
    for model in models:
        model.objects.all().delete()
    clock_reset(0.0, paused=True)  # a new world, at 0, advanced to 0


def make_cells(count: int, zones: int, memory: int, disk: int, containers: int) -> list[str]:
    zone_rows = Zone.objects.bulk_create(Zone(name=f"z{z + 1}") for z in range(zones))
    cells = [Cell(cell_id=f"cell-{i:04d}", zone=zone_rows[i % zones], index=i // zones,
                  memory_mb=memory, disk_mb=disk, containers=containers) for i in range(count)]
    Cell.objects.bulk_create(cells, batch_size=1000)
    return [c.cell_id for c in cells]


def bench_convergence(desired: int, instances: int, cells: int) -> dict[str, Any]:
    wipe()
    cell_ids = make_cells(cells, 5, 30_720, 102_400, 250)
    Domain.objects.create(name="cf-apps", ttl_s=0, expires_at=None)
    DesiredLRP.objects.bulk_create(
        (DesiredLRP(process_guid=f"app-{d:05d}", domain="cf-apps", instances=instances,
                    memory_mb=100, disk_mb=200) for d in range(desired)), batch_size=2000)
    rows = []
    n = 0
    for d in range(desired):
        for i in range(instances):
            n += 1
            if n % 100 == 0:
                continue  # 1 % missing
            crashed = n % 200 == 1
            rows.append(ActualLRP(
                desired_id=f"app-{d:05d}", index=i, domain="cf-apps",
                state="CRASHED" if crashed else "RUNNING",
                cell_id="" if crashed else cell_ids[n % cells], crash_count=3 if crashed else 0,
                instance_guid="" if crashed else f"g{n}", since=0.0))
            if len(rows) == 10_000:
                ActualLRP.objects.bulk_create(rows)
                rows = []
    ActualLRP.objects.bulk_create(rows)
    Cell.objects.filter(cell_id=cell_ids[0]).update(state="failed", presence_lost_at=0.0)
    actual = ActualLRP.objects.count()
    timings = []
    for _ in range(2):
        start = time.perf_counter()
        summary = convergence_run(1000.0)
        timings.append(time.perf_counter() - start)
    # summary: the second pass, the steady state after the first repaired things
    return {
        "desired_lrps": desired, "actual_lrps": actual, "cells": cells,
        "first_pass_s": round(timings[0], 3), "steady_pass_s": round(timings[1], 3),
        "steady_pass_metrics": summary.metrics,
        "api": bench_api_paging(),
    }


def bench_api_paging() -> dict[str, Any]:
    """GET /api/v1/actual_lrps over the big cluster: one page, a deep page, one app, and
    walking every page (what a script listing all 250k instances costs)."""
    from django.test import RequestFactory

    from auction.api import actual_lrps

    factory = RequestFactory()

    def get(query: str) -> tuple[float, dict[str, Any]]:
        start = time.perf_counter()
        response = actual_lrps.collection(factory.get(f"/api/v1/actual_lrps?{query}"))
        elapsed = time.perf_counter() - start
        assert response.status_code == 200, response.content[:300]
        return elapsed, json.loads(response.content)

    first_s, body = get("")
    one_app_s, _ = get("process_guid=app-05000")
    walked, pages, token, walk_start = 0, 0, "", time.perf_counter()
    deep_s = 0.0
    while True:
        elapsed, body = get(f"page_size=1000&page_token={token}")
        walked += len(body["actual_lrps"])
        pages += 1
        if pages == 200:
            deep_s = elapsed
        token = body["next_page_token"]
        if not token:
            break
    return {"first_page_500_ms": round(first_s * 1000, 1), "one_app_ms": round(one_app_s * 1000, 1),
            "page_200_of_1000_ms": round(deep_s * 1000, 1), "walk_all_rows": walked,
            "walk_all_pages": pages, "walk_all_s": round(time.perf_counter() - walk_start, 2)}


def bench_auction(cells: int, apps: int, instances: int) -> dict[str, Any]:
    wipe()
    make_cells(cells, 5, 30_720, 102_400, 250)
    DesiredLRP.objects.bulk_create(
        DesiredLRP(process_guid=f"app-{a:04d}", domain="cf-apps", instances=instances,
                   memory_mb=100, disk_mb=200) for a in range(apps))
    ActualLRP.objects.bulk_create(
        ActualLRP(desired_id=f"app-{a:04d}", index=i, domain="cf-apps") for a in range(apps)
        for i in range(instances))
    PendingWork.objects.bulk_create(
        PendingWork(kind="lrp", ident=f"app-{a:04d}.{i}", process_guid=f"app-{a:04d}", index=i,
                    queued_at=0.0) for a in range(apps) for i in range(instances))
    start = time.perf_counter()
    summary = auction_once()
    seconds = time.perf_counter() - start
    assert summary is not None
    return {"cells": cells, "batch": summary.items, "placed": summary.placed,
            "failed": summary.failed, "auction_s": round(seconds, 3)}


def bench_flood(instances: int) -> dict[str, Any]:
    from auction.services.lrps import desired_lrp_update
    from auction.services.scenarios import scenario_load

    wipe()
    scenario_load("seed-example")
    figures: dict[str, Any] = {"instances": instances}

    def timed(name: str, fn: Any, *args: Any) -> Any:
        start = time.perf_counter()
        out = fn(*args)
        figures[name] = round(time.perf_counter() - start, 3)
        return out

    lock_stats.clear()
    with PageProbe() as probe:
        timed("scale_up_s", desired_lrp_update, "lrp-a", {"instances": instances})
        figures["queued_after_scale_up"] = PendingWork.objects.count()
        with Ticker() as ticker:
            summary = timed("auction_s", auction_once)
    figures.update(probe.figures())
    figures["auction_failed"] = summary.failed if summary is not None else None
    figures["ticks_during_auction"] = ticker.ticks
    figures["slowest_tick_s"] = round(ticker.slowest, 3)
    figures["tick_errors"] = ticker.errors
    figures["queued_during_convergence"] = PendingWork.objects.count()
    timed("convergence_s", convergence_run, 30.0)
    timed("scale_down_s", desired_lrp_update, "lrp-a", {"instances": 3})
    figures["queued_after_scale_down"] = PendingWork.objects.filter(process_guid="lrp-a").count()
    figures["lock_retries"] = lock_stats["retried"]
    figures["lock_errors"] = lock_stats["gave_up"] + len(ticker.errors)
    return figures


class PageProbe:
    """The grid page as an operator would load it while the work runs: a web process of
    its own (``diego_web.serve``, as ``make run`` starts it) on this database, asked for
    ``/grid/`` again and again from a thread; p50/p95/max of the answers (issue 14 point 3:
    p95 <= 1 s). A web process apart, as in production: in this process the page would
    wait on the benchmark's own interpreter."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: Any = None

    def _run(self) -> None:
        import urllib.request

        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url + "/grid/", timeout=60) as answer:
                    answer.read()
                self.times.append(time.perf_counter() - start)
            except OSError as error:
                self.errors.append(f"{type(error).__name__}: {error}"[:200])
            self._stop.wait(0.2)

    def __enter__(self) -> PageProbe:
        import os
        import socket
        import subprocess
        import sys
        import urllib.request

        from django.conf import settings

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self._server = subprocess.Popen(
            [sys.executable, "-m", "diego_web.serve", "-b", "127.0.0.1", "-p", str(port),
             "diego_web.asgi:application"], cwd=settings.BASE_DIR, env={**os.environ, "DJANGO_DEBUG": "0"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url + "/grid/", timeout=30):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._server.terminate()
        self._server.wait(10)

    def figures(self) -> dict[str, Any]:
        times = sorted(self.times)
        if not times:
            return {"grid_loads": 0, "grid_errors": len(self.errors)}
        return {"grid_loads": len(times), "grid_p50_s": round(times[len(times) // 2], 3),
                "grid_p95_s": round(times[int(0.95 * (len(times) - 1))], 3),
                "grid_max_s": round(times[-1], 3), "grid_errors": len(self.errors)}


class Ticker:
    """Another writer during the flood's auction, every 0.1 s on its own connection: the
    clock tick and a domain freshness bump (what beat and the cc-bridge do while the
    worker auctions); ``slowest`` is the longest one waited for the auction's lock."""

    def __init__(self) -> None:
        self.ticks = 0
        self.slowest = 0.0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from django.db import connection as own

        try:
            while not self._stop.wait(0.1):
                start = time.perf_counter()
                try:
                    clock_tick()
                    domain_upsert("cf-apps", 120.0, source="bench")
                except Exception as error:  # counted, the bench goes on
                    self.errors.append(f"{type(error).__name__}: {error}"[:200])
                self.slowest = max(self.slowest, time.perf_counter() - start)
                self.ticks += 1
        finally:
            own.close()

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def bench_happy(instances: int, cells: int) -> dict[str, Any]:
    """``instances`` of 64 MB on ``cells`` cells of 64 GB in 3 zones: until all RUNNING."""
    lock_stats.clear()
    figures: dict[str, Any] = {"instances": instances, "cells": cells}
    with PageProbe() as probe:
        at = happy_cluster(instances, cells, figures)
    figures.update(probe.figures())
    figures["sim_seconds"] = at
    figures["running"] = ActualLRP.objects.filter(state="RUNNING").count()
    figures["lock_errors"] = lock_stats["gave_up"]
    return figures


def happy_cluster(instances: int, cells: int, figures: dict[str, Any]) -> float:
    """The happy path's cluster, all RUNNING; its times into ``figures``; the sim instant."""
    from auction.services.lrps import desired_lrp_desire
    from auction.sim.driver import advance

    wipe()
    make_cells(cells, 3, 65_536, 1_048_576, 1_000)
    Domain.objects.create(name="cf-apps", ttl_s=0, expires_at=None)
    start = time.perf_counter()
    desired_lrp_desire({"process_guid": "happy", "domain": "cf-apps", "instances": instances,
                        "memory_mb": 64, "disk_mb": 64, "start_delay_s": 1.0})
    figures["desire_s"] = round(time.perf_counter() - start, 3)
    store = DbStore(trigger_auctions=False)
    at = 0.0
    while ActualLRP.objects.exclude(state="RUNNING").exists() and at < 60.0:
        at += 1.0
        advance(store, at)
    figures["all_running_s"] = round(time.perf_counter() - start, 3)
    return at


class Advancer:
    """Beat beside a removal: the clock runs at 1x from the cluster's instant and another
    thread advances the live cluster to its now every 0.1 s, on its own connection.
    ``rate`` gives the sim-seconds it covered per wall-second over a window (1.0 when
    nothing held it up); ``slowest`` is the longest advance, ``errors`` the lock errors."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []  # (wall, the instant advanced to)
        self.slowest = 0.0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from django.db import connection as own

        from auction.selectors.clock import clock_row
        from auction.sim.driver import advance

        try:
            self.samples.append((time.perf_counter(), DbStore(trigger_auctions=False).now))
            while not self._stop.wait(0.1):
                start = time.perf_counter()
                try:
                    store = DbStore(trigger_auctions=False)
                    advance(store, max(clock_row().now(), store.now))
                    self.samples.append((time.perf_counter(), store.now))
                except Exception as error:  # counted, the bench goes on
                    self.errors.append(f"{type(error).__name__}: {error}"[:200])
                self.slowest = max(self.slowest, time.perf_counter() - start)
        finally:
            own.close()

    def __enter__(self) -> Advancer:
        from auction.services.clock import clock_place

        clock_place(DbStore(trigger_auctions=False).now, paused=False)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _reached(self, wall: float) -> float:
        return max((at for when, at in self.samples if when <= wall), default=self.samples[0][1])

    def figures(self, prefix: str, start: float, end: float) -> dict[str, Any]:
        """Over the wall window [start, end] (at least a second)."""
        end = max(end, start + 1.0)
        rate = (self._reached(end) - self._reached(start)) / (end - start)
        return {f"{prefix}_sim_s_per_wall_s": round(rate, 3),
                f"{prefix}_slowest_advance_s": round(self.slowest, 3),
                f"{prefix}_advance_errors": len(self.errors)}


def _until_gone(query: Any, start: float, limit_s: float = 300.0) -> float:
    """Wall seconds from ``start`` until ``query`` finds no row (polled every 50 ms)."""
    while query.exists() and time.perf_counter() - start < limit_s:
        time.sleep(0.05)
    return round(time.perf_counter() - start, 3)


def bench_remove(instances: int, cells: int) -> dict[str, Any]:
    """Removal and scale-down of a big RUNNING app, and a cell taken out (issue 27)."""
    from auction.services.cells import cell_remove
    from auction.services.clock import clock_pause
    from auction.services.lrps import desired_lrp_remove, desired_lrp_update, stops_wait

    figures: dict[str, Any] = {"instances": instances, "cells": cells}
    # The instances of the cell taken out are convergence's (missing, then extras): the
    # removal's own rows are those on the cells left.
    happy = ActualLRP.objects.filter(desired_id="happy").exclude(cell_id="cell-0000")
    cases = (("scale_down", lambda: desired_lrp_update("happy", {"instances": 1}), happy.filter(index__gte=1)),
             ("cell_remove", lambda: cell_remove("cell-0000"), Cell.objects.filter(cell_id="cell-0000")),
             ("remove", lambda: desired_lrp_remove("happy"), happy))
    for name, request, left in cases:
        if name != "remove":
            happy_cluster(instances, cells, {})
        lock_stats.clear()
        with Advancer() as advancer:
            time.sleep(0.5)  # the clock's pace before the request
            start = time.perf_counter()
            request()
            figures[f"{name}_request_s"] = round(time.perf_counter() - start, 3)
            figures[f"{name}_gone_s"] = gone = _until_gone(left, start)
            stops_wait()
            time.sleep(1.5)  # an advance that waited on the window's end reports after it
        clock_pause()
        figures.update(advancer.figures(name, start, start + gone))
        figures[f"{name}_lock_errors"] = lock_stats["gave_up"] + len(advancer.errors)
        figures[f"{name}_lock_retries"] = lock_stats["retried"]
    # A scenario load that replaces a 250,000-instance cluster (one transaction: the
    # world is swapped whole).
    from auction.services.scenarios import scenario_load

    figures["replaced_instances"] = big_cluster(max(instances // 10, 1), 25, cells)
    lock_stats.clear()
    with Advancer() as advancer:
        time.sleep(0.5)
        start = time.perf_counter()
        scenario_load("seed-example")
        figures["load_request_s"] = round(time.perf_counter() - start, 3)
        time.sleep(1.5)
    clock_pause()
    # The load puts the clock back to its new world's start: no pace to quote.
    figures["load_slowest_advance_s"] = round(advancer.slowest, 3)
    figures["load_advance_errors"] = len(advancer.errors)
    figures["load_lock_errors"] = lock_stats["gave_up"] + len(advancer.errors)
    return figures


def big_cluster(desired: int, instances: int, cells: int) -> int:
    """``desired`` apps of ``instances`` RUNNING instances each on ``cells`` cells."""
    from auction.services.bulk import bulk_insert

    wipe()
    cell_ids = make_cells(cells, 3, 65_536, 1_048_576, 1_000)
    Domain.objects.create(name="cf-apps", ttl_s=0, expires_at=None)
    bulk_insert(DesiredLRP, ("process_guid", "domain", "instances", "memory_mb", "disk_mb", "rootfs"),
                ((f"app-{d:05d}", "cf-apps", instances, 64, 64, "") for d in range(desired)))
    bulk_insert(ActualLRP, ("desired", "index", "presence", "domain", "state", "cell_id",
                            "instance_guid", "since", "ports"),
                ((f"app-{d:05d}", i, "ORDINARY", "cf-apps", "RUNNING",
                  cell_ids[(d * instances + i) % cells], f"g{d}-{i}", 0.0, [])
                 for d in range(desired) for i in range(instances)))
    return ActualLRP.objects.count()


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bbs",
        description="Benchmark a convergence pass (10k desired / 250k actual) and a 1,000-instance auction.")
    parser.add_argument("--wipe", action="store_true", help="required: replaces the cluster")
    parser.add_argument("--desired", type=int, default=10_000)
    parser.add_argument("--instances", type=int, default=25)
    parser.add_argument("--flood", type=int, default=100_000,
                        help="instances of the unplaceable flood (0: skip it)")
    parser.add_argument("--happy", nargs="?", type=int, const=100_000, default=0,
                        help="the happy path: N instances (default 100,000) on 1,000 cells")
    parser.add_argument("--happy-cells", type=int, default=1000)
    parser.add_argument("--only", default="",
                        help=f"comma-separated parts to run, of {', '.join(PARTS)}")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if not args.wipe:
        parser().error("it replaces the cluster in this database; pass --wipe")
    only = {p.strip() for p in args.only.split(",") if p.strip()}
    if only - set(PARTS):
        parser().error(f"--only: unknown part {sorted(only - set(PARTS))[0]!r}; parts: {', '.join(PARTS)}")
    # A fresh checkout (or a new bench database) has no tables yet: the cluster this
    # replaces starts from the current schema.
    call_command("migrate", interactive=False, verbosity=0)
    if args.happy and not only:
        only = set(PARTS)
    parts = only or {"auction", "convergence", "flood"}
    out: dict[str, Any] = {"database": connection.vendor}
    set_trigger_suppressed(True)
    with suppressed():
        if "auction" in parts:
            with transaction.atomic():
                out["auction_1000_on_100_cells"] = bench_auction(100, 40, 25)
        if "convergence" in parts:
            out["convergence"] = bench_convergence(args.desired, args.instances, 1000)
        if "flood" in parts and args.flood:
            out["unplaceable_flood"] = bench_flood(args.flood)
        if "happy" in parts:
            out["happy_path"] = bench_happy(args.happy or 100_000, args.happy_cells)
        if "remove" in parts:
            out["removal"] = bench_remove(args.happy or 100_000, args.happy_cells)
        wipe()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
