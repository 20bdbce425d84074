"""The whole app as real processes, started the way ``make run`` starts it.

Each stack gets its own var folder (SQLite database and Redis socket), or its own
PostgreSQL database when the suite runs with DATABASE_URL, a free port, and the
supervisor (``diego_web.supervise``) running redis, daphne, the Celery worker and beat.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
ADMIN_PASSWORD = "diego-test-admin"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes (its parent has not reaped it yet).
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1].split()[0] != "Z"
    except OSError:
        return False


def session_members(session_ids: set[int]) -> list[int]:
    """Live processes in any of these sessions (the supervisor starts each process in its own)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(") ", 1)[1].split()
        except OSError:
            continue
        state, sid = fields[0], int(fields[3])
        if sid in session_ids and state != "Z":
            members.append(int(entry.name))
    return members


_MIGRATED: dict[str, Any] = {}


def migrated(env: dict[str, str]) -> Any:
    """A database that ``manage.py migrate`` made once for this pytest process: each
    stack's starts as a copy of it (PostgreSQL: its template; SQLite: its file), so that
    ``bootstrap`` finds every migration applied, as it would on a second ``make run``,
    instead of running them all again for each stack (a second of CPU each)."""
    if "database" in _MIGRATED:
        return _MIGRATED["database"]
    folder = Path(tempfile.mkdtemp(prefix="dw-migrated-", dir="/tmp"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    env = {**env, "DIEGO_VAR_DIR": str(folder)}
    database: Any = folder / "db.sqlite3"
    if env.get("DATABASE_URL", "").startswith("postgres"):
        database = f"diego_migrated_{os.getpid()}"
        admin = os.environ["DATABASE_URL"]
        env["DATABASE_URL"] = urlunsplit(urlsplit(admin)._replace(path=f"/{database}"))
        _pg_execute(admin, f'DROP DATABASE IF EXISTS "{database}"')
        _pg_execute(admin, f'CREATE DATABASE "{database}"')
        atexit.register(_pg_execute, admin, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=300)
    _MIGRATED["database"] = database
    return database


def _pg_execute(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


class LiveStack:
    def __init__(self, name: str = "e2e", otto: bool = False) -> None:
        self.var = Path(tempfile.mkdtemp(prefix=f"dw-{name}-", dir="/tmp"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log_path = self.var / "supervise.log"
        self.env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")}
        # PYTHONPATH: celery and daphne import this checkout's code, not whichever one
        # the virtualenv's editable install names (a git worktree's tests test the worktree).
        self.env.update(
            DIEGO_VAR_DIR=str(self.var), PORT=str(self.port), HOST="127.0.0.1",
            DIEGO_ADMIN_PASSWORD=ADMIN_PASSWORD, PYTHONUNBUFFERED="1", PYTHONPATH=str(ROOT),
        )
        if not otto:
            # Stacks that do not test Otto start faster, and start fewer processes on two
            # cores, without it (idle, it waits on its channels: otto.md 11).
            self.env["DIEGO_OTTO"] = "0"
        self.pg_database = ""
        if os.environ.get("DATABASE_URL", "").startswith("postgres"):
            self.pg_database = f"diego_{name}_{os.getpid()}"
            self.env["DATABASE_URL"] = self._pg_url(self.pg_database)
            self._pg_admin(f'DROP DATABASE IF EXISTS "{self.pg_database}"')
            self._pg_admin(f'CREATE DATABASE "{self.pg_database}" TEMPLATE "{migrated(self.env)}"')
            # As the test databases (tests/conftest.py): no WAL flush per commit.
            self._pg_admin(f'ALTER DATABASE "{self.pg_database}" SET synchronous_commit = off')
        elif "DATABASE_URL" not in self.env:  # the default: SQLite in the var folder
            for path in migrated(self.env).parent.iterdir():
                if path.name.startswith("db.sqlite3"):
                    shutil.copyfile(path, self.var / path.name)
        self.proc: subprocess.Popen[bytes] | None = None
        self._manage_lock = threading.Lock()
        self._zygote: subprocess.Popen[bytes] | None = None
        self._zygote_env: dict[str, str] = {}
        self._zygote_replies: int | None = None
        self._zygote_buffer = b""
        self._calls = 0
        self.spawned: list[subprocess.Popen[bytes]] = []
        self.bootstrap_output = ""

    @staticmethod
    def _pg_url(database: str) -> str:
        parts = urlsplit(os.environ["DATABASE_URL"])
        return urlunsplit(parts._replace(path=f"/{database}"))

    def _pg_admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
            conn.execute(sql)

    def manage(self, *args: str, timeout: float = 120) -> str:
        """``python manage.py ARGS`` with the stack's environment; its stdout.

        Run by a fork of a process that has already imported Django with this
        environment (``manage_zygote.py``): the same command, parsing and exit status as a
        fresh ``manage.py``, without a second of start-up per call."""
        with self._manage_lock:
            returncode, stdout, stderr = self._zygote_run(list(args), timeout)
        if returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{stdout}\n{stderr}")
        return stdout

    def _zygote_start(self) -> None:
        read_replies, write_replies = os.pipe()
        log = open(self.var / "manage-zygote.log", "ab")
        try:
            self._zygote = subprocess.Popen(
                [sys.executable, str(ROOT / "tests" / "support" / "manage_zygote.py"), str(write_replies)],
                cwd=ROOT, env=self.env, stdin=subprocess.PIPE, pass_fds=(write_replies,),
                stdout=log, stderr=subprocess.STDOUT,
            )
        finally:
            os.close(write_replies)
            log.close()
        self._zygote_env = dict(self.env)
        self._zygote_replies = read_replies
        self._zygote_buffer = b""

    def _zygote_stop(self) -> None:
        zygote, self._zygote = self._zygote, None
        if zygote is None:
            return
        assert zygote.stdin is not None and self._zygote_replies is not None
        try:
            zygote.stdin.close()  # EOF: it exits
            zygote.wait(10)
        except (OSError, subprocess.TimeoutExpired):
            zygote.kill()
            zygote.wait(10)
        os.close(self._zygote_replies)
        self._zygote_replies = None

    def _zygote_reply(self, timeout: float | None) -> dict | None:
        """The zygote's next answer line, or None when none came within ``timeout``."""
        assert self._zygote_replies is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._zygote_buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._zygote_replies], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._zygote_replies, 65536)
            if not chunk:
                raise RuntimeError("the manage.py zygote exited")
            self._zygote_buffer += chunk
        line, _, self._zygote_buffer = self._zygote_buffer.partition(b"\n")
        return json.loads(line)

    def _zygote_run(self, argv: list[str], timeout: float) -> tuple[int, str, str]:
        if self._zygote is not None and self._zygote_env != self.env:
            self._zygote_stop()  # the test changed the stack's environment: start afresh
        if self._zygote is None:
            self._zygote_start()
        assert self._zygote is not None and self._zygote.stdin is not None
        self._calls += 1
        out, err = self.var / f".manage-{self._calls}.out", self.var / f".manage-{self._calls}.err"
        request = {"argv": argv, "stdout": str(out), "stderr": str(err)}
        self._zygote.stdin.write((json.dumps(request) + "\n").encode())
        self._zygote.stdin.flush()
        started = self._zygote_reply(None)
        assert started is not None
        done = self._zygote_reply(timeout)
        if done is None:
            try:
                os.kill(started["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._zygote_reply(None)
            raise subprocess.TimeoutExpired(["manage.py", *argv], timeout)
        try:
            return (done["rc"], out.read_text(errors="replace"), err.read_text(errors="replace"))
        finally:
            out.unlink(missing_ok=True)
            err.unlink(missing_ok=True)

    def start(self, timeout: float = 90) -> float:
        """Bootstrap and start; return the seconds until the page answered."""
        started = time.monotonic()
        self.bootstrap_output = self.manage("bootstrap", "--url", self.url)
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "diego_web.supervise"], cwd=ROOT, env=self.env,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        while time.monotonic() - started < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(f"supervisor exited early:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url, timeout=2) as response:
                    if response.status == 200:
                        return time.monotonic() - started
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"no answer at {self.url} within {timeout} s:\n{self.log()}")

    # --- individual processes (for tests that kill or multiply them) ---------------

    def spawn(self, name: str, *argv: str) -> subprocess.Popen[bytes]:
        log = open(self.var / f"{name}.log", "ab")
        proc = subprocess.Popen(
            [sys.executable, *argv], cwd=ROOT, env=self.env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.spawned.append(proc)
        return proc

    def start_redis(self) -> None:
        self.spawn("redis", "manage.py", "runredis")
        self.run_module("diego_web.wait_for_redis")

    def run_module(self, module: str) -> None:
        subprocess.run([sys.executable, "-m", module], cwd=ROOT, env=self.env, check=True, timeout=60)

    def start_worker(self, name: str = "worker", queue: str = "celery",
                     concurrency: int = 4) -> subprocess.Popen[bytes]:
        """A Celery worker as the Procfile starts it: queue ``celery`` (clock, auctions) or
        ``callbacks`` (task completion callbacks, bbs.md 7.1)."""
        return self.spawn(name, "-m", "celery", "-A", "diego_web", "worker", "-l", "warning",
                          "-Q", queue, "--pool=threads", f"--concurrency={concurrency}",
                          "--without-gossip", "--without-mingle", f"--hostname={name}@%h")

    def start_beat(self, name: str = "beat") -> subprocess.Popen[bytes]:
        return self.spawn(name, "-m", "celery", "-A", "diego_web", "beat", "-l", "warning",
                          "--scheduler", "diego_web.beat:IdleDatabaseScheduler",
                          "--pidfile=", f"--schedule={self.var / name}")

    def cli(self, *args: str) -> str:
        return self.manage("diego", *args)

    def status(self) -> dict:
        return json.loads(self.cli("status", "--json", "--details"))

    def wait_for(self, predicate, timeout: float = 60, interval: float = 0.5, what: str = ""):  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = self.status()
            if predicate(last):
                return last
            time.sleep(interval)
        summary = {k: v for k, v in (last or {}).items() if k not in ("passes", "auction_runs")}
        raise AssertionError(f"timed out waiting for {what or predicate}; last status "
                             f"(passes and auctions left out): {str(summary)[:3000]}")

    @staticmethod
    def kill(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL, grace: float = 10) -> None:
        """Send `sig` to the process group; a group that outlives `grace` seconds gets SIGKILL.

        A Celery worker's warm shutdown waits for its running tasks, and a task blocked on a
        Redis that is already gone can keep it waiting for minutes.
        """
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def child_pids(self) -> dict[str, int]:
        return {m[0]: int(m[1]) for m in re.findall(r"system\s+\| (\w+) started \(pid=(\d+)\)", self.log())}

    def wait_in_log(self, pattern: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.log()):
                return
            time.sleep(0.2)
        raise AssertionError(f"{pattern!r} not in the log within {timeout} s:\n{self.log()[-4000:]}")

    def interrupt(self, timeout: float = 30) -> int:
        """Ctrl-C, as a person at the terminal would send it (to the whole group)."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGINT)
        return self.proc.wait(timeout)

    def stop(self) -> None:
        """Teardown: the stack is thrown away, database and all, so every process of it is
        SIGKILLed at once rather than stopped in order (a Celery worker's warm shutdown
        alone took seconds). Orderly stops are what the tests of Ctrl-C and SIGTERM check
        (test_make_run_stack, test_supervise_restarts), through ``interrupt()``."""
        self._zygote_stop()
        if self.proc is not None and self.proc.poll() is None:
            # The supervisor's group; its children, each in its own session, get SIGKILL
            # from the kernel as it dies (PR_SET_PDEATHSIG), and below by their groups.
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(10)
        for proc in self.spawned:
            if proc.poll() is None:
                self.kill(proc, signal.SIGKILL)
        for pid in self.child_pids().values():
            if pid_alive(pid):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        # Nothing of the stack outlives the test: each process ran in its own session
        # (the supervisor's children, the spawned ones), and anything still in one is
        # killed until it is gone (a connection it held would keep its database alive).
        sessions = set(self.child_pids().values()) | {p.pid for p in self.spawned}
        if self.proc is not None:
            sessions.add(self.proc.pid)
        deadline = time.monotonic() + 15
        while (left := session_members(sessions)) and time.monotonic() < deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)
        if left:
            raise RuntimeError(f"stack processes still running after stop(): {left}")
        if self.pg_database:
            self._pg_admin(f'DROP DATABASE IF EXISTS "{self.pg_database}" WITH (FORCE)')
        shutil.rmtree(self.var, ignore_errors=True)
