"""Benchmark of the idle stack (dashboard.md L9): CPU of each ``make run`` process at rest.

    python -m bench.idle [--seconds 60] [--settle 20] [--browser] [--json]

Starts the real stack the way ``make run`` does (``manage.py bootstrap``, then
``python -m diego_web.supervise``: redis, daphne, the Celery worker and beat, the Otto
auctioneer and orchestrators) on a free port in a scratch var folder (SQLite and the
bundled Redis), or in a scratch PostgreSQL database when DATABASE_URL names one. It waits
``--settle`` seconds for the first auction and the start-up work to finish, then reads
each process's CPU time (user + system, its children included) at the start and the end
of ``--seconds`` wall seconds with no browser open. With ``--browser`` it then opens one
headless chromium page on /grid/ (the clock at 1x) and measures again.

Per-process CPU time, not the machine's load: other work on the machine does not count.
Prints a table (CPU % of one core per process, and the total), or JSON with ``--json``;
the targets are <= 3 % idle and <= 10 % with one browser. Asserts nothing. The stack is
stopped completely at the end, whatever happened.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
IDLE_TARGET_PCT = 3.0
BROWSER_TARGET_PCT = 10.0
STARTED = re.compile(r"system\s+\| (\w+) started \(pid=(\d+)\)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _clock_ticks() -> int:
    return int(os.sysconf("SC_CLK_TCK"))


def _proc_stat(pid: int) -> tuple[int, int, float] | None:
    """(parent pid, session id, CPU seconds) of a live process, from /proc/<pid>/stat."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(") ", 1)[1].split()
    if fields[0] == "Z":
        return None
    # fields[0] is field 3 (state): utime is field 14, stime field 15.
    cpu = (int(fields[11]) + int(fields[12])) / _clock_ticks()
    return int(fields[1]), int(fields[3]), cpu


def _all_stats() -> dict[int, tuple[int, int, float]]:
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _proc_stat(int(entry.name))
            if stat is not None:
                stats[int(entry.name)] = stat
    return stats


def cpu_by_process(roots: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each named process and its live descendants."""
    stats = _all_stats()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    out = {}
    for name, root in roots.items():
        total, todo = 0.0, [root]
        while todo:
            pid = todo.pop()
            if pid in stats:
                total += stats[pid][2]
            todo += children.get(pid, [])
        out[name] = total
    return out


class Stack:
    """``make run`` in a scratch folder; ``stop`` ends every process it started."""

    def __init__(self) -> None:
        self.var = Path(tempfile.mkdtemp(prefix="dw-bench-idle-", dir="/tmp"))
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")}
        # PYTHONPATH: daphne and celery import this checkout's code, not whichever one the
        # virtualenv's editable install names.
        self.env.update(DIEGO_VAR_DIR=str(self.var), PORT=str(self.port), HOST="127.0.0.1",
                        PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT))
        self.pg_database = ""
        if os.environ.get("DATABASE_URL", "").startswith("postgres"):
            self.pg_database = f"diego_bench_idle_{os.getpid()}"
            parts = urlsplit(os.environ["DATABASE_URL"])
            self.env["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{self.pg_database}"))
            self._pg_admin(f'DROP DATABASE IF EXISTS "{self.pg_database}"')
            self._pg_admin(f'CREATE DATABASE "{self.pg_database}"')
        self.log_path = self.var / "supervise.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @staticmethod
    def _pg_admin(sql: str) -> None:
        import psycopg

        with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
            conn.execute(sql)

    def start(self, timeout: float = 120) -> None:
        subprocess.run([sys.executable, "manage.py", "bootstrap", "--url", self.url], cwd=ROOT,
                       env=self.env, check=True, capture_output=True, timeout=timeout)
        log = open(self.log_path, "wb")  # noqa: SIM115 - the child holds it; closed with the folder
        self.proc = subprocess.Popen([sys.executable, "-m", "diego_web.supervise"], cwd=ROOT,
                                     env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the supervisor exited early:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url, timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"no answer at {self.url} within {timeout:.0f} s:\n{self.log()[-3000:]}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def processes(self) -> dict[str, int]:
        """The supervisor and each process it started, by Procfile name."""
        assert self.proc is not None
        found = {name: int(pid) for name, pid in STARTED.findall(self.log())}
        # The supervisor itself (honcho, the readiness thread) without its children.
        return {"supervisor": self.proc.pid, **found}

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        # honcho starts each process in its own session: end any it left behind.
        for pid in [p for n, p in STARTED.findall(self.log())]:
            try:
                os.killpg(int(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.pg_database:
            self._pg_admin(f'DROP DATABASE IF EXISTS "{self.pg_database}" WITH (FORCE)')
        shutil.rmtree(self.var, ignore_errors=True)


def own_cpu(roots: dict[str, int], seconds: float) -> dict[str, float]:
    """As ``measure``, but the supervisor counts only itself (its children are listed)."""
    sup = roots["supervisor"]
    others = {k: v for k, v in roots.items() if k != "supervisor"}
    before_all, before_sup = cpu_by_process(others), _proc_stat(sup)
    started = time.monotonic()
    time.sleep(seconds)
    after_all, after_sup = cpu_by_process(others), _proc_stat(sup)
    took = time.monotonic() - started
    out = {name: max(0.0, after_all[name] - before_all.get(name, 0.0)) / took * 100 for name in others}
    if before_sup and after_sup:
        out["supervisor"] = (after_sup[2] - before_sup[2]) / took * 100
    return out


def _chromium() -> str:
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def table(title: str, figures: dict[str, float], target: float) -> str:
    lines = [title, f"  {'process':<14} {'CPU % of one core':>18}"]
    for name, pct in figures.items():
        lines.append(f"  {name:<14} {pct:>18.2f}")
    total = sum(figures.values())
    verdict = "within" if total <= target else "OVER"
    lines.append(f"  {'total':<14} {total:>18.2f}   ({verdict} the {target:g} % target)")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.idle",
        description="CPU of the idle make-run stack per process, without and with one browser.")
    parser.add_argument("--seconds", type=float, default=60.0, help="each measurement's wall seconds")
    parser.add_argument("--settle", type=float, default=20.0,
                        help="seconds to wait after the stack answers (start-up work)")
    parser.add_argument("--browser", action="store_true",
                        help="then measure again with one chromium page on /grid/ at 1x")
    parser.add_argument("--json", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    options = vars(parser().parse_args(argv))
    stack = Stack()
    out: dict[str, Any] = {"database": "postgresql" if stack.pg_database else "sqlite",
                           "seconds": options["seconds"]}
    try:
        stack.start()
        time.sleep(options["settle"])  # the measured quantity: the stack after its start-up work
        roots = stack.processes()
        out["idle"] = own_cpu(roots, options["seconds"])
        if not options["json"]:
            print(f"database: {out['database']}, {options['seconds']:g} s each")
            print(table("no browser:", out["idle"], IDLE_TARGET_PCT))
        if options["browser"]:
            out["browser"] = with_browser(stack, roots, options["seconds"])
            if not options["json"]:
                print(table("one browser on /grid/ at 1x:", out["browser"], BROWSER_TARGET_PCT))
    finally:
        stack.stop()
    if options["json"]:
        print(json.dumps(out, indent=2))


def with_browser(stack: Stack, roots: dict[str, int], seconds: float) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    subprocess.run([sys.executable, "manage.py", "diego", "clock", "--resume", "--speed", "1"],
                   cwd=ROOT, env=stack.env, capture_output=True, timeout=60)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True,
                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.goto(stack.url + "grid/", wait_until="load")
            time.sleep(5)  # the socket opens and the first frames arrive
            # The browser is the client, not the stack: it is not in the figures.
            return own_cpu(roots, seconds)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
