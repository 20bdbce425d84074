"""Run the Procfile's processes, restart any that dies, and say when the app answers.

``make run`` ends here. The bundled Redis is started only when REDIS_URL is unset.

Crash-only supervision (issue 15): a process that exits or is killed is restarted after a
back-off (1 s, doubling to 30 s, back to 1 s once it has run 60 s), announced in one line
("worker exited (SIGKILL), restarted in 1 s"). Only Ctrl-C, SIGTERM or SIGHUP to the
supervisor stops the stack, and then always all of it: every child's process group gets
SIGTERM, then SIGKILL after a grace period. A closed stdout (a dead terminal, ``| head``)
counts as a stop too: a write that fails with BrokenPipe, or a poll that sees the pipe's
reader gone, stops every child rather than leaving them running unseen.

Why not honcho's Manager: it stops everything when any one process exits and has no
restart hook. So this is a small supervisor over subprocess: each process runs through
``/bin/sh -c`` in its own session (process group), as honcho ran them, so one killpg
reaches it and anything it forked. honcho's pieces that fit are kept: its Procfile parser
and its Printer, so the output looks as before ("12:00:00 web    | ..." lines, "system |
web started (pid=N)" lines that tests read the pids from).

Quiet unless ``DIEGO_VERBOSE=1`` (issue 16): daphne without its access log and info lines,
Celery without its banners; warnings and errors still show. ``make run`` hands over what
``manage.py bootstrap`` said (the URL and the admin's password) in ``DIEGO_RUN_BANNER``,
printed after "is up", so it is the last thing on the first screen; no child sees it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import datetime
import functools
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from honcho.environ import parse_procfile
from honcho.printer import Message, Printer

ROOT = Path(__file__).resolve().parent.parent

BACKOFF_FIRST = 1.0
BACKOFF_CAP = 30.0
BACKOFF_RESET_AFTER = 60.0
STOP_GRACE = 10.0
COLOURS = ["36", "33", "32", "35", "34", "31", "36;1", "33;1"]


def wanted_processes(environ: dict[str, str]) -> list[str]:
    # The Otto auctioneer and orchestrators (otto.md 1) run beside the Diego loop, unless
    # DIEGO_OTTO=0 (they run elsewhere, or a test starts them itself, in its own order).
    # ``callbacks`` is a second Celery worker for task completion callbacks only (bbs.md
    # 7.1): a receiver that never answers holds its threads, not the clock's or auctions'.
    # ``plans`` is a third, for plans and zone-loss answers (plans.md 2.2): minutes of
    # simulation in its own interpreter, never between the clock's ticks.
    names = ["redis", "web", "worker", "callbacks", "plans", "beat", "otto", "orchestrators"]
    if environ.get("DIEGO_OTTO", "1").lower() in ("0", "false", "no", "off"):
        names = names[:6]
    return names[1:] if environ.get("REDIS_URL") else names


def restart_delay(streak: int, ran_for: float) -> tuple[int, float]:
    """The back-off after an exit: (new streak, seconds to wait before the restart).

    ``streak`` counts the quick exits before this one; a run of BACKOFF_RESET_AFTER
    seconds or more starts the count again. 1 s, 2 s, 4 s ... capped at BACKOFF_CAP.
    """
    streak = 0 if ran_for >= BACKOFF_RESET_AFTER else streak
    return streak + 1, min(BACKOFF_CAP, BACKOFF_FIRST * 2**streak)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"rc={returncode}"


# Lines a quiet run leaves out: Python logging's INFO lines (daphne logs them whatever its
# verbosity: Django's logging config sets the level) and the embedded Redis server's own
# log (start-up art and tuning advice), unless a line speaks of an error.
NOISE = re.compile(r" INFO |^\d+:[CMXS] \d{1,2} \w{3} \d{4} [\d:.]+ [#*.-] |^redis: serving ")


def noise(line: str) -> bool:
    return bool(NOISE.search(line)) and "error" not in line.lower()


def quiet_environment(env: dict[str, str]) -> dict[str, str]:
    """The Procfile's verbosity knobs: quiet unless ``DIEGO_VERBOSE=1``."""
    verbose = env.get("DIEGO_VERBOSE", "") == "1"
    env.setdefault("DIEGO_DAPHNE_VERBOSITY", "1" if verbose else "0")
    env.setdefault("DIEGO_CELERY_QUIET", "" if verbose else "--quiet")
    return env


def announce_when_ready(url: str, say, timeout: float = 120.0, banner: str = "") -> None:  # type: ignore[no-untyped-def]
    """Print the URL and the banner (the admin's password) once the web process answers
    its light readiness URL (``healthz/``: no page is rendered for it); if it never does
    within ``timeout``, say so and print the banner all the same (the password is shown
    once: it must not be lost to a slow start)."""
    started = time.monotonic()
    probe = url.rstrip("/") + "/healthz/"
    while time.monotonic() - started < timeout:
        try:
            with urllib.request.urlopen(probe, timeout=5) as response:
                if response.status == 200:
                    took = time.monotonic() - started
                    say(f"\n>>> diego-web is up at {url} ({took:.1f} s). Ctrl-C stops it.\n")
                    say((banner.strip("\n") + "\n\n") if banner.strip() else "\n")
                    return
        except OSError:
            time.sleep(0.3)
    say(f"\n>>> diego-web did not answer at {url} within {timeout:.0f} s\n")
    say((banner.strip("\n") + "\n\n") if banner.strip() else "\n")


@dataclass
class Child:
    name: str
    command: str
    colour: str
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    streak: int = 0
    restart_at: float | None = None


class Supervisor:
    def __init__(self, env: dict[str, str], output: IO[str] = sys.stdout) -> None:
        self.env = env
        self.quiet = env.get("DIEGO_VERBOSE", "") != "1"
        self.output = output
        self.printer = Printer(output, width=0)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.children: list[Child] = []

    # --- output -----------------------------------------------------------------------

    def _write(self, fn) -> None:  # type: ignore[no-untyped-def]
        with self.lock:
            if self.output is None:
                return
            try:
                fn()
            except (BrokenPipeError, OSError, ValueError):
                # Nobody reads us any more: stop everything rather than run on unseen.
                self.output = None  # type: ignore[assignment]
                self.stopping.set()

    def print_line(self, name: str, data: str | bytes, colour: str | None = None) -> None:
        message = Message(type="line", data=data, time=datetime.datetime.now(), name=name, colour=colour)
        self._write(lambda: self.printer.write(message))

    def system(self, text: str) -> None:
        self.print_line("system", text + "\n")

    def say(self, text: str) -> None:
        def write() -> None:
            self.output.write(text)
            self.output.flush()

        self._write(write)

    def output_gone(self) -> bool:
        """True when stdout is a pipe whose reader has closed it."""
        try:
            fd = self.output.fileno()
        except (AttributeError, OSError, ValueError):
            return self.output is None
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))

    # --- processes --------------------------------------------------------------------

    def add(self, name: str, command: str) -> None:
        self.children.append(Child(name, command, COLOURS[len(self.children) % len(COLOURS)]))
        self.printer.width = max(len(c.name) for c in self.children + [Child("system", "", "")])

    def start(self, child: Child) -> None:
        child.proc = subprocess.Popen(
            ["/bin/sh", "-c", child.command], cwd=str(ROOT), env=self.env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=functools.partial(_die_with_parent, os.getpid()),
        )
        child.started = time.monotonic()
        child.restart_at = None
        self.system(f"{child.name} started (pid={child.proc.pid})")
        threading.Thread(target=self._pump, args=(child, child.proc), daemon=True).start()

    def _pump(self, child: Child, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for line in iter(proc.stdout.readline, b""):
            if self.quiet and noise(line.decode("utf-8", "replace")):
                continue
            self.print_line(child.name, line, child.colour)
        proc.stdout.close()

    def reap(self, child: Child, now: float) -> None:
        """Notice an exit and schedule the restart."""
        assert child.proc is not None
        returncode = child.proc.poll()
        if returncode is None:
            return
        # Leftovers of the dead process's group (a shell's child) go with it.
        _killpg(child.proc.pid, signal.SIGKILL)
        child.streak, delay = restart_delay(child.streak, now - child.started)
        child.proc = None
        child.restart_at = now + delay
        self.system(f"{child.name} exited ({describe_exit(returncode)}), restarted in {delay:g} s")

    def loop(self) -> int:
        for child in self.children:
            self.start(child)
        while not self.stopping.is_set():
            now = time.monotonic()
            for child in self.children:
                if self.stopping.is_set():
                    break
                if child.proc is not None:
                    self.reap(child, now)
                elif child.restart_at is not None and now >= child.restart_at:
                    self.start(child)
            if self.output_gone():
                self.stopping.set()
            self.stopping.wait(0.1)
        self.stop_all()
        return 0

    def stop_all(self) -> None:
        running = [c.proc for c in self.children if c.proc is not None]
        self.system("stopping every process")
        for proc in running:
            _killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        for proc in running:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        # SIGKILL to every group, also to those whose leader went on SIGTERM: a grandchild
        # that ignored it would otherwise outlive us.
        for proc in running:
            _killpg(proc.pid, signal.SIGKILL)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:  # stuck in the kernel: report it, go on
                self.system(f"{self.name_of(proc)} (pid={proc.pid}) did not die on SIGKILL")
                continue
            if proc.returncode is not None:
                self.system(f"{self.name_of(proc)} stopped ({describe_exit(proc.returncode)})")

    def name_of(self, proc: subprocess.Popen[bytes]) -> str:
        return next(c.name for c in self.children if c.proc is proc)


PR_SET_PDEATHSIG = 1
# Loaded once here: between fork and exec (``_die_with_parent``) only the call is safe.
_LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True) if sys.platform == "linux" else None


def _die_with_parent(parent: int) -> None:
    """In the child, before exec: killed when the supervisor dies, even by SIGKILL (S4).

    Nothing of ours runs in a supervisor killed with SIGKILL, so the kernel does it
    (Linux's parent-death signal, kept across exec). Every Procfile line ends in ``exec``,
    so the process that gets it is the service itself. SIGKILL, not SIGTERM: with no
    supervisor to stop them in order, Redis went first and a Celery worker's warm
    shutdown then kept retrying the broker well past 20 s. Every process here is
    crash-only (late acks, one transaction per change), so nothing is lost by it."""
    if _LIBC is None:
        return
    _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the supervisor died before the prctl: nobody would tell us
        os.kill(os.getpid(), signal.SIGKILL)


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def main() -> int:
    env = quiet_environment(dict(os.environ))
    banner = env.pop("DIEGO_RUN_BANNER", "")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.setdefault("HOST", "127.0.0.1")
    env.setdefault("PORT", "8000")
    procfile = parse_procfile((ROOT / "Procfile").read_text())
    supervisor = Supervisor(env)

    def stop(signum: int, frame: object) -> None:
        supervisor.stopping.set()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    for name in wanted_processes(env):
        supervisor.add(name, procfile.processes[name])
    url = f"http://{env['HOST']}:{env['PORT']}/"
    threading.Thread(target=announce_when_ready, args=(url, supervisor.say),
                     kwargs={"banner": banner}, daemon=True).start()
    code = supervisor.loop()
    # The dead pipe's buffered bytes must not raise at interpreter exit either.
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return code


if __name__ == "__main__":
    sys.exit(main())
