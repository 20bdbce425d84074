"""Crash-only `make run` (issue 15, dashboard.md S1-S4): kill each process, it comes back.

The whole stack as `make run` starts it (Otto too), under ``diego_web.supervise``. Each
process kind is killed with SIGKILL, one at a time; the app must keep answering or come
back, the killed kind must have a new pid within 10 s and a restart line in the log, and
the desired LRPs, their instances and the running actual LRPs must be neither lost nor
doubled. Measured restart times are printed (run with -s to see them).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import websockets
from stack import ROOT, LiveStack, pid_alive, session_members

pytestmark = pytest.mark.processes

KINDS = ("redis", "web", "worker", "callbacks", "plans", "beat", "otto", "orchestrators")


@pytest.fixture(scope="module")
def stack():
    live = LiveStack("super", otto=True)
    try:
        live.start()
        yield live
    finally:
        live.stop()


def get(stack: LiveStack, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(stack.url + path, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""
    except OSError:
        return 0, b""


def api(stack: LiveStack, path: str) -> dict | None:
    status, body = get(stack, f"api/v1/{path}")
    return json.loads(body) if status == 200 else None


def serving(stack: LiveStack) -> bool:
    return get(stack, "grid/")[0] == 200 and api(stack, "desired_lrps") is not None


def world(stack: LiveStack) -> dict:
    """What must survive the restarts: desired LRPs, their instance counts, running ones."""
    desired = api(stack, "desired_lrps")
    actual = api(stack, "actual_lrps")
    assert desired is not None and actual is not None
    running = sorted((a["process_guid"], a["index"]) for a in actual["actual_lrps"]
                     if a["presence"] == "ORDINARY" and a["state"] == "RUNNING")
    return {
        "desired": sorted((d["process_guid"], d["instances"]) for d in desired["desired_lrps"]),
        "running": running,
    }


def wait_until(predicate, timeout: float, what: str, stack: LiveStack, interval: float = 0.1):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out ({timeout} s) waiting for {what}:\n{stack.log()[-3000:]}")


def settled(stack: LiveStack) -> dict:
    """Every desired instance running, exactly once."""
    def check() -> dict | None:
        if not serving(stack):
            return None
        w = world(stack)
        wanted = sorted((guid, i) for guid, n in w["desired"] for i in range(n))
        return w if w["running"] == wanted else None

    return wait_until(check, 90, "every desired instance running once", stack, interval=0.5)


def clock_advances(stack: LiveStack, timeout: float) -> float:
    """Seconds until beat's tick pushes clock frames again (dashboard.md L7, S3).

    The clock's now is computed from a database row, so the API's clock moves on even with
    beat dead; what beat drives is the tick that publishes it. The live socket's first
    frame is the snapshot; two more with a later ``data-sim-now`` mean beat ticks.
    """
    async def watch() -> float:
        started = time.monotonic()
        seen: list[float] = []
        url = f"ws://127.0.0.1:{stack.port}/ws/live/?view=grid"
        async with websockets.connect(url, origin="http://127.0.0.1") as ws:
            while len(seen) < 3:
                left = timeout - (time.monotonic() - started)
                if left <= 0:
                    raise AssertionError(f"the clock did not advance within {timeout} s "
                                         f"(frames: {seen}):\n{stack.log()[-3000:]}")
                try:
                    message = await asyncio.wait_for(ws.recv(), left)
                except TimeoutError:
                    continue
                text = message if isinstance(message, str) else message.decode()
                for value in map(float, re.findall(r'data-sim-now="([\d.]+)"', text)):
                    if not seen or value > seen[-1]:
                        seen.append(value)
        return time.monotonic() - started

    return asyncio.run(watch())


def test_every_kind_killed_comes_back_and_nothing_is_lost_or_doubled(stack: LiveStack) -> None:
    """dashboard.md S1, S3: SIGKILL each kind in turn; new pid in 10 s; the same world."""
    before = settled(stack)
    assert before["desired"] and before["running"], before
    clock_advances(stack, 30)
    timings: dict[str, dict[str, float]] = {}
    for kind in KINDS:
        old = stack.child_pids()[kind]
        assert pid_alive(old), f"{kind} (pid {old}) is not running before the kill"
        killed_at = time.monotonic()
        os.kill(old, signal.SIGKILL)
        new = wait_until(lambda kind=kind, old=old: (p := stack.child_pids()[kind]) != old
                         and pid_alive(p) and p, 10, f"{kind} back with a new pid", stack, 0.05)
        back = time.monotonic() - killed_at
        wait_until(lambda: serving(stack), 60, f"the app answering after {kind} was killed", stack)
        answering = time.monotonic() - killed_at
        timings[kind] = {"new_pid_s": round(back, 2), "app_answering_s": round(answering, 2)}
        assert re.search(rf"system\s+\| {kind} exited \(SIGKILL\), restarted in [12] s", stack.log()), \
            stack.log()[-3000:]
        assert re.search(rf"system\s+\| {kind} started \(pid={new}\)", stack.log())
        if kind == "beat":
            # The clock is beat's to tick: it must move again (dashboard.md S3).
            timings[kind]["clock_advancing_s"] = round(answering + clock_advances(stack, 30), 2)
        if kind == "web":
            timings[kind]["grid_200_s"] = timings[kind]["app_answering_s"]
    print("\nrestart timings (s from SIGKILL):", json.dumps(timings, indent=1))
    after = settled(stack)
    assert after == before
    # Nothing else was restarted along the way, and the supervisor still runs.
    assert stack.proc is not None and stack.proc.poll() is None
    # Every kill shows once; the only other exit allowed is the clock worker's, which
    # Celery ends when its broker (the killed Redis) is gone: S1 brings it back too.
    others = [line for line in re.findall(r"\| (\w+ exited \([^)]*\))", stack.log())
              if "(SIGKILL)" not in line and not line.startswith("worker exited")]
    assert len(re.findall(r"exited \(SIGKILL\)", stack.log())) == len(KINDS), stack.log()[-3000:]
    assert others == [], stack.log()[-3000:]
    clock_advances(stack, 30)


def test_sigterm_to_the_supervisor_stops_every_process(stack: LiveStack) -> None:
    """dashboard.md S4: SIGTERM (to the supervisor alone) leaves no child behind."""
    children = stack.child_pids()
    assert set(children) == set(KINDS), stack.log()[-2000:]
    sessions = set(children.values()) | {stack.proc.pid}
    assert len(session_members(sessions)) >= len(KINDS)
    stack.proc.send_signal(signal.SIGTERM)
    stack.proc.wait(30)
    wait_until(lambda: not session_members(sessions), 10, "every child gone after SIGTERM", stack)
    assert "stopping every process" in stack.log()


def test_a_sigkilled_supervisor_leaves_no_child_running() -> None:
    """dashboard.md S4: the supervisor itself SIGKILLed (nothing of it runs any more): the
    kernel's parent-death signal still stops every child."""
    live = LiveStack("superkill")
    try:
        live.start()
        children = live.child_pids()
        assert set(children) == {"redis", "web", "worker", "callbacks", "plans", "beat"}, live.log()[-3000:]
        sessions = set(children.values())
        assert all(pid_alive(pid) for pid in children.values())
        assert live.proc is not None
        live.proc.send_signal(signal.SIGKILL)  # the supervisor alone, not its group
        live.proc.wait(10)
        try:
            wait_until(lambda: not session_members(sessions), 20,
                       "every child gone after the supervisor was SIGKILLed", live)
        except AssertionError as exc:
            left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:200]
                    for pid in session_members(sessions) if Path(f"/proc/{pid}").exists()}
            raise AssertionError(f"still running: {left}") from exc
    finally:
        live.stop()


def test_a_closed_stdout_pipe_leaves_no_child_running() -> None:
    """dashboard.md S4: the terminal (a pipe here) goes away; the stack goes with it."""
    live = LiveStack("superpipe")
    try:
        live.manage("bootstrap", "--url", live.url)
        proc = subprocess.Popen(
            [sys.executable, "-m", "diego_web.supervise"], cwd=ROOT, env=live.env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )
        live.proc = proc
        assert proc.stdout is not None
        seen = b""
        deadline = time.monotonic() + 90
        while b"diego-web is up at" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                seen += os.read(proc.stdout.fileno(), 65536)
        live.log_path.write_bytes(seen)  # so child_pids() and stop() see the children
        children = live.child_pids()
        assert set(children) == {"redis", "web", "worker", "callbacks", "plans", "beat"}, seen.decode()[-3000:]
        sessions = set(children.values()) | {proc.pid}
        assert all(pid_alive(pid) for pid in children.values())
        proc.stdout.close()  # nobody reads the supervisor any more
        proc.wait(30)
        wait_until(lambda: not session_members(sessions), 10,
                   "every child gone after stdout closed", live)
    finally:
        live.stop()


def test_a_process_that_keeps_dying_backs_off_and_the_rest_run_on() -> None:
    """dashboard.md S1, S2, S4, with stand-in commands: 1 s, then 2 s; a neighbour untouched."""
    import io
    import threading

    from diego_web.supervise import Supervisor

    out = io.StringIO()
    supervisor = Supervisor(dict(os.environ), output=out)
    supervisor.add("crasher", "echo hello; exit 3")
    supervisor.add("sleeper", "exec sleep 60")
    loop = threading.Thread(target=supervisor.loop)
    loop.start()
    try:
        deadline = time.monotonic() + 15
        while out.getvalue().count("crasher started") < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        sleeper = supervisor.children[1].proc
        assert sleeper is not None and sleeper.poll() is None
    finally:
        supervisor.stopping.set()
        loop.join(20)
    text = out.getvalue()
    assert re.search(r"system\s+\| crasher exited \(rc=3\), restarted in 1 s", text), text
    assert re.search(r"system\s+\| crasher exited \(rc=3\), restarted in 2 s", text), text
    assert re.search(r"crasher\s+\| hello", text), text
    assert text.count("sleeper started") == 1 and "sleeper exited" not in text, text
    assert not loop.is_alive() and sleeper.poll() is not None, text
    assert re.search(r"system\s+\| sleeper stopped \(SIGTERM\)", text), text
