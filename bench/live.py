"""Benchmarks of the live dashboard (dashboard.md L3, G8). Prints JSON.

    python -m bench.live            # starts its own Redis + daphne on a scratch database

1. Commit-to-block latency on a 100-cell cluster: a service commits a placement; a real
   chromium (Playwright, Debian's build) notes when the block enters its DOM. p50/p95/max.
2. 1,000 cells and 250,000 instances: the grid's first view (zones mode) — server time of
   the page, time until the tiles are on screen and the socket is open — and that it
   stays live (a failed cell reaches its tile).
3. A 10,000-placement auction on 1,000 cells: frames and bytes one browser receives,
   in zones mode and in dense mode, against the frames' cap of 4 per second.
5. /lrps/ with 10,000 DesiredLRPs: the page's size and load time, and how long a crash
   takes to reach its row (with the frames' bytes).
4. 200 viewers of a 1,500-block grid connecting at once: time to each one's first
   snapshot (p50/p95/max), then the frames one of them gets while apps are desired and
   placed one at a time (count, mean and max bytes).
6. Issue 13's three flows with one open grid (dashboard.md L1), the clock paused: fail a
   cell, add a cell as the admin saves it, load a scenario from the shell. From the
   change's commit to the open grid's last change, once its data hooks equal a fresh
   load's (target 3 s).

``--only latency,viewers`` runs some of them.

The outer run makes a scratch var folder (SQLite + bundled Redis), starts redis-server and
daphne there, and re-runs itself with ``--inner`` against them: nothing touches your own
database, and the coalescer runs inside daphne exactly as in production.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from django.conf import settings

from auction.live.hooks import HOOKS_JS

ROOT = Path(settings.BASE_DIR)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.live",
                                     description="Live dashboard benchmarks in a real browser (prints JSON).")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", default="")
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--instances", type=int, default=250_000)
    parser.add_argument("--placements", type=int, default=10_000)
    parser.add_argument("--viewers", type=int, default=200)
    parser.add_argument("--only", default="", help="comma-separated: latency, first_view, burst, viewers, lrps, flows")
    parser.add_argument("--plain-daphne", action="store_true",
                        help="serve with plain daphne (no websocket compression), for before/after figures")
    return parser


def main(argv: list[str] | None = None) -> None:
    options = vars(parser().parse_args(argv))
    if options["inner"]:
        print(json.dumps(inner(options), indent=2))
        return
    print(outer(options))


def outer(options: dict[str, Any]) -> str:
    var = Path(tempfile.mkdtemp(prefix="dw-bench-live-", dir="/tmp"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    env.update(DIEGO_VAR_DIR=str(var), PYTHONUNBUFFERED="1", DJANGO_ALLOW_ASYNC_UNSAFE="true")
    python = sys.executable
    procs: list[subprocess.Popen[bytes]] = []
    log = open(var / "servers.log", "wb")  # noqa: SIM115 - closed in finally
    try:
        subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        procs.append(subprocess.Popen([python, "manage.py", "runredis"], cwd=ROOT, env=env,
                                      stdout=log, stderr=log))
        subprocess.run([python, "-m", "diego_web.wait_for_redis"], cwd=ROOT, env=env, check=True)
        procs.append(subprocess.Popen(
            [python, "-m", "daphne" if options["plain_daphne"] else "diego_web.serve", "-b", "127.0.0.1", "-p", str(port),
             "diego_web.asgi:application"], cwd=ROOT, env=env, stdout=log, stderr=log))
        url = f"http://127.0.0.1:{port}"
        _wait_http(url + "/grid/")
        argv = [python, "-m", "bench.live", "--inner", "--url", url,
                "--samples", str(options["samples"]), "--instances", str(options["instances"]),
                "--placements", str(options["placements"]), "--viewers", str(options["viewers"]),
                "--only", options["only"]]
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            return done.stdout + done.stderr + "\n" + (var / "servers.log").read_text()[-3000:]
        return done.stdout
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()
        shutil.rmtree(var, ignore_errors=True)


# --- the measurements, in the process that shares daphne's database and Redis ------------

# When each bench block enters the DOM, and when the websocket message that carried it
# arrived (so a slow sample says whether the server or the page's swap was slow).
_WATCH = """
window.__seen = {}; window.__arrived = {}; window.__lastMessage = 0;
document.addEventListener("htmx:wsBeforeMessage", function () { window.__lastMessage = Date.now(); }, true);
new MutationObserver(function () {
  document.querySelectorAll('.cell [data-instance^="bench-"]').forEach(function (el) {
    var k = el.dataset.instance;
    if (!(k in window.__seen)) { window.__seen[k] = Date.now(); window.__arrived[k] = window.__lastMessage; }
  });
}).observe(document.body, {subtree: true, childList: true});
"""


def inner(options: dict[str, Any]) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from auction.services.work import set_trigger_suppressed

    set_trigger_suppressed(True)  # the benchmark runs each auction itself
    url = options["url"]
    out: dict[str, Any] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        only = set(filter(None, options["only"].split(","))) or {
            "latency", "first_view", "burst", "viewers", "lrps", "flows"}
        try:
            if "latency" in only:
                out["commit_to_block_100_cells"] = latency(browser, url, options["samples"])
            if "first_view" in only:
                out["first_view_1000_cells"] = first_view(browser, url, options["instances"])
            if "burst" in only:
                out["burst_10000_placements"] = burst(browser, url, options["placements"])
            if "lrps" in only:
                out["lrps_10000_desired"] = lrps_10k(browser, url)
            if "flows" in only:
                out["flows_open_grid"] = flows(browser, url, options["samples"])
        finally:
            browser.close()
    if "viewers" in only:
        out["viewers_1500_blocks"] = viewers(url, options["viewers"])
    return out


def _running(cell_ids: list[str], instances: int, per_app: int = 100, prefix: str = "app") -> None:
    """``instances`` RUNNING instances spread round-robin over the cells (bulk rows)."""
    from auction.models import ActualLRP, DesiredLRP

    apps = max(1, instances // per_app)
    DesiredLRP.objects.bulk_create(
        (DesiredLRP(process_guid=f"{prefix}-{a:05d}", domain="cf-apps", instances=per_app,
                    memory_mb=128, disk_mb=256) for a in range(apps)), batch_size=2000)
    rows = []
    for n in range(instances):
        rows.append(ActualLRP(desired_id=f"{prefix}-{n // per_app:05d}", index=n % per_app,
                              domain="cf-apps", state="RUNNING", cell_id=cell_ids[n % len(cell_ids)],
                              instance_guid=f"g{n}", since=0.0))
        if len(rows) == 10_000:
            ActualLRP.objects.bulk_create(rows)
            rows = []
    ActualLRP.objects.bulk_create(rows)


def lrps_10k(browser, url: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from auction.services.cells import actual_lrp_crash

    cell_ids = _cluster(100, 4, 65_536)
    _running(cell_ids, 10_000, per_app=1)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    frames: list[int] = []
    page.on("websocket", lambda ws: ws.on(
        "framereceived", lambda f: frames.append(len(f if isinstance(f, bytes) else f.encode()))))
    started = time.perf_counter()
    page.goto(url + "/lrps/")
    page.wait_for_selector("body[data-ws=open]", timeout=60_000)
    load_s = time.perf_counter() - started
    html_bytes = len(page.content().encode())
    time.sleep(1.5)
    frames.clear()
    crashes = []
    for n in range(5):
        guid = f"app-{n:05d}"
        started = time.perf_counter()
        actual_lrp_crash(guid, 0, source="bench")
        page.wait_for_function(
            f"(document.querySelector('#lrp-{guid} [data-col=crashes]') || {{}}).textContent === '1'",
            timeout=30_000)
        crashes.append(time.perf_counter() - started)
        time.sleep(0.5)
    page.close()
    return {"desired_lrps": 10_000, "rows_on_page": 200, "page_bytes": html_bytes,
            "load_to_socket_open_s": round(load_s, 3), "crash_to_row_s": _quantiles(crashes),
            "frames": len(frames), "mean_frame_bytes": round(statistics.mean(frames)) if frames else 0}


def _quantiles(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {"p50": round(statistics.median(values), 3),
            "p95": round(values[int(0.95 * (len(values) - 1))], 3), "max": round(values[-1], 3)}


def viewers(url: str, count: int) -> dict[str, Any]:
    """200 sockets on a 1,500-block grid: first snapshot times, then one viewer's frames."""
    import asyncio
    import re

    import websockets

    from auction.live.coalescer import SEP
    from auction.services.lrps import desired_lrp_desire
    from auction.services.sim import auctioneer_run

    cell_ids = _cluster(100, 4, 32_768)
    _running(cell_ids, 1500)
    ws_url = url.replace("http://", "ws://") + "/ws/live/?view=grid&mode=full"

    async def one() -> float:
        started = time.perf_counter()
        async with websockets.connect(ws_url, origin=url, max_size=None, open_timeout=300) as socket:
            await socket.recv()
            return time.perf_counter() - started

    async def crowd() -> list[float]:
        return list(await asyncio.gather(*(one() for _ in range(count))))

    firsts = asyncio.run(crowd())

    by_element: dict[str, int] = {}

    async def watch_frames(seconds_quiet: float = 2.0) -> list[int]:
        sizes: list[int] = []
        async with websockets.connect(ws_url, origin=url, max_size=None, open_timeout=300) as socket:
            await socket.recv()  # the snapshot
            loop = asyncio.get_running_loop()
            done = loop.run_in_executor(None, place_one_at_a_time)
            while True:
                try:
                    message = await asyncio.wait_for(socket.recv(), seconds_quiet)
                except TimeoutError:
                    if done.done():
                        break
                    continue
                text = message if isinstance(message, str) else message.decode()
                sizes.append(len(text.encode()))
                for piece in text.split(SEP):
                    match = re.search(r'id="([^"]+)"', piece)
                    name = re.sub(r"\d+", "N", match.group(1)) if match else piece[:20]
                    by_element[name] = by_element.get(name, 0) + len(piece.encode())
            await done
        return sizes

    def place_one_at_a_time() -> None:
        from django.db import close_old_connections

        for n in range(20):
            desired_lrp_desire({"process_guid": f"frame-{n:03d}", "domain": "cf-apps", "instances": 2,
                                "memory_mb": 256, "disk_mb": 256})
            auctioneer_run()
            time.sleep(0.3)
        close_old_connections()

    sizes = asyncio.run(watch_frames())
    return {
        "viewers": count, "blocks": 1500, "first_snapshot_s": _quantiles(firsts),
        "target_first_snapshot_p95_s": 2.0,
        "frames_while_placing_20_apps": {"frames": len(sizes), "mean_bytes": round(statistics.mean(sizes)) if sizes else 0,
                                         "max_bytes": max(sizes, default=0),
                                         "bytes_by_element": dict(sorted(by_element.items(), key=lambda kv: -kv[1])[:8])},
    }


def _chromium() -> str:
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def _open(browser, url: str):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(url)
    page.wait_for_selector("body[data-ws=open]", timeout=60_000)
    return page


def _cluster(cells: int, zones: int, memory: int) -> list[str]:
    from auction.models import Domain
    from auction.services.clock import clock_reset
    from bench.bbs import make_cells, wipe

    wipe()
    clock_reset(0.0, paused=True)
    Domain.objects.get_or_create(name="cf-apps", defaults={"ttl_s": 0, "expires_at": None})
    return make_cells(cells, zones, memory, 4 * memory, 250)


class _SocketWatch:
    """A plain websocket viewer in a thread: when each bench block first arrives in a frame."""

    def __init__(self, url: str, path: str) -> None:
        import asyncio
        import re
        import threading

        self.seen: dict[str, float] = {}
        self.done = threading.Event()
        self.ready = threading.Event()
        pattern = re.compile(r'data-instance="(bench-[0-9]+\.0)"')

        async def watch() -> None:
            import websockets

            async with websockets.connect("ws" + url[4:] + path, origin=url, max_size=None) as ws:
                self.ready.set()
                while not self.done.is_set():
                    try:
                        text = await asyncio.wait_for(ws.recv(), 0.2)
                    except TimeoutError:
                        continue
                    now = time.time() * 1000
                    text = text if isinstance(text, str) else text.decode()
                    # Blocks in cells only (the tray names unplaced instances the same way).
                    for piece in text.split("<!--live-->"):
                        if piece.lstrip().startswith('<article id="cell-'):
                            for key in pattern.findall(piece):
                                self.seen.setdefault(key, now)

        self.thread = threading.Thread(target=lambda: asyncio.run(watch()), daemon=True)
        self.thread.start()
        self.ready.wait(10)

    def stop(self) -> dict[str, float]:
        self.done.set()
        self.thread.join(5)
        return self.seen


def latency(browser, url: str, samples: int) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from auction.services.lrps import desired_lrp_desire
    from auction.services.sim import auctioneer_run

    _cluster(100, 4, 32_768)
    page = _open(browser, url + "/grid/")
    page.evaluate(_WATCH)
    socket_seen = _SocketWatch(url, "/ws/live/?view=grid")
    # Two cases: the placement commits with no other frame in the last 250 ms
    # ("isolated"), and right after the desire's own frame (the auction trigger's
    # usual timing), where the 4 frames/s cap makes it wait out the previous frame.
    committed: dict[str, dict[str, float]] = {"isolated": {}, "after_desire": {}}
    for n in range(samples):
        guid = f"bench-{n:04d}"
        case = "isolated" if n % 2 == 0 else "after_desire"
        desired_lrp_desire({"process_guid": guid, "domain": "cf-apps", "instances": 1,
                            "memory_mb": 256, "disk_mb": 256})
        if case == "isolated":
            time.sleep(random.uniform(0.3, 0.6))
        auctioneer_run()  # marks are made on commit, just before this returns
        committed[case][f"{guid}.0"] = time.time() * 1000
        page.wait_for_function(f"'{guid}.0' in window.__seen", timeout=10_000)
        time.sleep(random.uniform(0.3, 0.6))
    seen, arrived = page.evaluate("[window.__seen, window.__arrived]")
    page.close()
    at_socket = socket_seen.stop()
    out: dict[str, Any] = {"target_p95_ms": 150}

    def p95(values: list[float]) -> float:
        return round(sorted(values)[int(0.95 * (len(values) - 1))], 1)

    for case, times in committed.items():
        lat = sorted(seen[k] - t for k, t in times.items())
        # Commit to the message's arrival (server, socket) and arrival to the block in the
        # DOM (the page's swap), per sample.
        server = [arrived[k] - t for k, t in times.items()]
        page_ms = [seen[k] - arrived[k] for k in times]
        # The same frames read by a plain websocket client in this process: the server's
        # share without the browser's (its event loop, htmx's parsing, the swap).
        socket_ms = [at_socket[k] - t for k, t in times.items() if k in at_socket]
        out[case] = {"samples": len(lat), "p50_ms": round(statistics.median(lat), 1),
                     "p95_ms": p95(lat), "max_ms": round(lat[-1], 1), "all_ms": [round(v) for v in lat],
                     "to_arrival_p50_ms": round(statistics.median(server), 1), "to_arrival_p95_ms": p95(server),
                     "swap_p50_ms": round(statistics.median(page_ms), 1), "swap_p95_ms": p95(page_ms),
                     "plain_socket_p50_ms": round(statistics.median(socket_ms), 1) if socket_ms else None,
                     "plain_socket_p95_ms": p95(socket_ms) if socket_ms else None}
    return out


def first_view(browser, url: str, instances: int) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from auction.models import ActualLRP, DesiredLRP
    from auction.services.cells import cell_fail

    cell_ids = _cluster(1000, 4, 65_536)
    apps = max(1, instances // 100)
    DesiredLRP.objects.bulk_create(
        (DesiredLRP(process_guid=f"app-{a:05d}", domain="cf-apps", instances=100,
                    memory_mb=128, disk_mb=256) for a in range(apps)), batch_size=2000)
    rows = []
    for n in range(instances):
        rows.append(ActualLRP(desired_id=f"app-{n // 100:05d}", index=n % 100, domain="cf-apps",
                              state="RUNNING", cell_id=cell_ids[n % len(cell_ids)],
                              instance_guid=f"g{n}", since=0.0))
        if len(rows) == 10_000:
            ActualLRP.objects.bulk_create(rows)
            rows = []
    ActualLRP.objects.bulk_create(rows)
    started = time.perf_counter()
    with urllib.request.urlopen(url + "/grid/") as response:
        body = response.read()
    server_s = time.perf_counter() - started
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    started = time.perf_counter()
    page.goto(url + "/grid/")
    page.wait_for_selector(".zone-tile", timeout=60_000)
    tiles_s = time.perf_counter() - started
    page.wait_for_selector("body[data-ws=open]", timeout=60_000)
    open_s = time.perf_counter() - started
    mode = page.get_attribute("#grid", "data-mode")
    started = time.perf_counter()
    cell_fail(cell_ids[0])
    page.wait_for_function("document.querySelector('#tile-z1').textContent.indexOf('1 missing') >= 0",
                           timeout=10_000)
    live_s = time.perf_counter() - started
    page.close()
    return {
        "cells": len(cell_ids), "instances": ActualLRP.objects.count(), "mode": mode,
        "page_bytes": len(body), "server_render_s": round(server_s, 3),
        "tiles_on_screen_s": round(tiles_s, 3), "socket_open_s": round(open_s, 3),
        "failed_cell_reaches_tile_s": round(live_s, 3), "target_first_view_s": 2.0,
    }


def burst(browser, url: str, placements: int) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from auction.models import ActualLRP
    from auction.services.lrps import desired_lrp_desire
    from auction.services.sim import auctioneer_run

    results: dict[str, Any] = {}
    for mode in ("zones", "dense"):
        _cluster(1000, 4, 65_536)
        per_app = 100
        for a in range(max(1, placements // per_app)):
            desired_lrp_desire({"process_guid": f"burst-{a:04d}", "domain": "cf-apps",
                                "instances": per_app, "memory_mb": 128, "disk_mb": 128})
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        frames: list[int] = []

        def count(payload: str | bytes, frames: list[int] = frames) -> None:
            frames.append(len(payload if isinstance(payload, bytes) else payload.encode()))

        page.on("websocket", lambda ws, count=count: ws.on("framereceived", count))
        page.goto(url + f"/grid/?mode={mode}")
        page.wait_for_selector("body[data-ws=open]", timeout=60_000)
        time.sleep(1.0)
        frames.clear()  # the snapshot is the view's size, not the burst's
        started = time.perf_counter()
        summaries = auctioneer_run()
        auction_s = time.perf_counter() - started
        placed = sum(s.placed for s in summaries)
        # Until the last frame of the burst: quiet for 2 s.
        last = -1
        while len(frames) != last:
            last = len(frames)
            time.sleep(2.0)
        duration = time.perf_counter() - started - 2.0
        blocks = dom_s = None
        if mode == "dense":
            page.wait_for_function(
                f"document.querySelectorAll('.cell [data-instance]').length >= {placed}",
                timeout=120_000)
            dom_s = round(time.perf_counter() - started, 2)
            blocks = page.locator(".cell [data-instance]").count()
        page.close()
        results[mode] = {
            "placed": placed, "auction_s": round(auction_s, 2), "frames": len(frames),
            "bytes": sum(frames), "seconds": round(duration, 2),
            "frame_cap": int(duration / 0.25) + 2, "blocks_in_dom": blocks,
            "all_blocks_in_dom_s": dom_s,
            "claimed_in_db": ActualLRP.objects.filter(state="CLAIMED").count(),
        }
    return results


# When the page's hooks changed, across the reloads a new world epoch makes: an init script
# records [time, hash of the hooks] after each batch of DOM changes, in the tab's
# sessionStorage (it outlives a reload). ``__VARYING__`` are the attributes left out.
_HISTORY = """
(function () {
  var varying = __VARYING__, hooks = __HOOKS__;
  function key() {
    var kept = [];
    hooks('').forEach(function (text) {
      var hook = JSON.parse(text);
      varying.forEach(function (name) { delete hook[2][name]; });
      if (hook[1] || Object.keys(hook[2]).length) kept.push(JSON.stringify(hook));
    });
    var joined = kept.sort().join('\\n'), h = 5381;
    for (var j = 0; j < joined.length; j++) h = ((h * 33) ^ joined.charCodeAt(j)) | 0;
    return h;
  }
  window.__hooksKey = key;
  var queued = false;
  function record() {
    queued = false;
    var history = JSON.parse(sessionStorage.getItem('__history') || '[]');
    history.push([Date.now(), key()]);
    sessionStorage.setItem('__history', JSON.stringify(history.slice(-200)));
  }
  new MutationObserver(function () {
    if (!queued) { queued = true; setTimeout(record, 0); }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})();
"""


def flows(browser, url: str, samples: int) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Issue 13's flows: each change is made as its door makes it (the admin's save is
    ``cell_save``, the shell's load is ``manage.py load_scenario``), then the open grid is
    compared with a fresh load until equal; the figure is commit -> the open grid's last
    change. The clock is paused, so nothing else moves the pages."""
    from auction.models import Cell, Zone
    from auction.selectors.clock import world_epoch
    from auction.services.cells import cell_fail, cell_save
    from auction.services.clock import clock_change
    from auction.services.scenarios import scenario_load

    scenario_load("imbalanced-deploy")
    clock_change(paused=True, source="bench")
    probe = browser.new_context()
    varying = _varying(probe, url + "/grid/")
    probe.close()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_init_script(_HISTORY.replace("__VARYING__", json.dumps(sorted(varying)))
                            .replace("__HOOKS__", HOOKS_JS))
    page = context.new_page()
    page.goto(url + "/grid/")
    page.wait_for_selector("body[data-ws=open]", timeout=60_000)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}

    def fail_a_cell(n: int) -> None:
        healthy = Cell.objects.filter(state=Cell.State.HEALTHY).order_by("cell_id").first()
        assert healthy is not None
        cell_fail(healthy.cell_id, source="bench")

    def admin_add_cell(n: int) -> None:
        zone = Zone.objects.order_by("name").first()
        assert zone is not None
        cell_save(Cell(cell_id=f"bench-cell-{n}", zone=zone, index=100 + n, memory_mb=32_768,
                       disk_mb=131_072, containers=250), [], source="admin")

    def shell_load(n: int) -> float:
        """The commit is when the world epoch moves (seen here within 20 ms), not when the
        command's process has exited (its interpreter's teardown is no part of the flow)."""
        name = ("az-loss", "imbalanced-deploy")[n % 2]
        before = world_epoch()
        with subprocess.Popen([sys.executable, "manage.py", "load_scenario", name], cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as command:
            while world_epoch() == before and command.poll() is None:
                time.sleep(0.02)
            committed = time.time() * 1000
            # A load starts the clock; the comparison needs it still (the new world's
            # first sim-milliseconds may run meanwhile, and the pages draw those too).
            clock_change(paused=True, source="bench")
            if command.wait() != 0:
                raise RuntimeError(f"load_scenario {name} failed")
        return committed

    out: dict[str, Any] = {"target_s": 3.0, "left_out": sorted(varying)}
    for name, change in (("fail_a_cell", fail_a_cell), ("admin_add_cell", admin_add_cell),
                         ("shell_scenario_load", shell_load)):
        times = []
        for n in range(max(1, samples // 10)):
            time.sleep(1.0)  # the previous change's frames are out
            # The history starts with the page as it is before the change.
            page.evaluate("sessionStorage.setItem('__history', JSON.stringify([[Date.now(), window.__hooksKey()]]))")
            committed = change(n) or time.time() * 1000
            try:
                times.append(max(0.0, _converged(context, page, url + "/grid/") - committed))
            except RuntimeError as exc:
                raise RuntimeError(f"{name}, sample {n}: {exc}") from None
        out[name] = {"samples": len(times), "max_s": round(max(times) / 1000, 3),
                     "all_s": [round(t / 1000, 3) for t in times]}
    context.close()
    return out


def _fresh(context, url: str) -> list[tuple[str, str, dict[str, str]]]:  # type: ignore[no-untyped-def]
    page = context.new_page()
    try:
        page.goto(url)
        page.wait_for_selector("body[data-ws=open]", timeout=30_000)
        # Settled: unchanged for 1.5 s (its snapshot is in, and the zone-loss chips it
        # fetches 0.5 s after loading), as the convergence test waits for a fresh load.
        last, quiet_since = page.evaluate(HOOKS_JS, ""), time.monotonic()
        while time.monotonic() - quiet_since < 1.5:
            time.sleep(0.1)
            now = page.evaluate(HOOKS_JS, "")
            if now != last:
                last, quiet_since = now, time.monotonic()
        return [tuple(json.loads(item)) for item in last]
    finally:
        page.close()


def _varying(context, url: str) -> set[str]:  # type: ignore[no-untyped-def]
    """Attributes that differ between two fresh loads of the paused cluster (tokens, ages)."""
    one, two = ({(tag, ident, k): v for tag, ident, data in _fresh(context, url) for k, v in data.items()}
                for _ in range(2))
    return {key[2] for key in one.keys() ^ two.keys()} | {key[2] for key, v in one.items()
                                                          if key in two and two[key] != v}


def _converged(context, page, url: str, timeout: float = 30.0) -> float:  # type: ignore[no-untyped-def]
    """When the open ``page``'s hooks became what a fresh load shows, for good (ms)."""
    from playwright.sync_api import Error as PlaywrightError

    fresh = context.new_page()
    try:
        fresh.goto(url)
        fresh.wait_for_selector("body[data-ws=open]", timeout=30_000)
        # Settled: unchanged for 1.5 s (its snapshot is in, and the zone-loss chips it
        # fetches 0.5 s after loading), as the convergence test waits for a fresh load.
        want, quiet_since = fresh.evaluate("window.__hooksKey()"), time.monotonic()
        while time.monotonic() - quiet_since < 1.5:
            time.sleep(0.1)
            now = fresh.evaluate("window.__hooksKey()")
            if now != want:
                want, quiet_since = now, time.monotonic()
    finally:
        fresh.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            history = page.evaluate("JSON.parse(sessionStorage.getItem('__history') || '[]')")
            current = page.evaluate("window.__hooksKey()")
        except PlaywrightError:  # the page is reloading itself (a new world epoch)
            time.sleep(0.05)
            continue
        if current == want and history and history[-1][1] == want:
            since = history[-1][0]
            for at, key in reversed(history):
                if key != want:
                    break
                since = at
            return float(since)
        time.sleep(0.1)
    raise RuntimeError("the open grid did not converge to a fresh load")


if __name__ == "__main__":
    main()
