"""Otto keeps its bidders after Redis restarts or a group expires (otto.md 7; issue 27).

The stack as `make run` starts it, Otto included, with members joining their groups again
every 2 s instead of 30 (``DIEGO_OTTO_GROUP_REFRESH_S``). A Redis restart forgets every
channel-layer group, and a group's membership expires after a day: either way the
orchestrators were out of ``tasks.auction`` for good and Otto tasks got no bid, ever.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request

import pytest
import redis
from stack import LiveStack, pid_alive

pytestmark = pytest.mark.processes


@pytest.fixture(scope="module")
def stack():
    live = LiveStack("ottorejoin", otto=True)
    live.env["DIEGO_OTTO_GROUP_REFRESH_S"] = "2"
    try:
        live.start()
        live.token = live.manage("api_token", "admin", "--name", "otto").strip()  # type: ignore[attr-defined]
        yield live
    finally:
        live.stop()


def api(stack: LiveStack, method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"{stack.url}api/v1/{path}", method=method, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {stack.token}", "Content-Type": "application/json"})  # type: ignore[attr-defined]
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def started(stack: LiveStack, guid: str, timeout: float = 60) -> dict:
    """An Otto task submitted now is auctioned, awarded and started within ``timeout``."""
    api(stack, "POST", "tasks", {"task_guid": guid, "domain": "otto", "rootfs": "preloaded:cflinuxfs4",
                                 "memory_mb": 64, "disk_mb": 64, "placement_mode": "otto"})
    deadline = time.monotonic() + timeout
    task: dict = {}
    while time.monotonic() < deadline:
        task = api(stack, "GET", f"tasks/{guid}")["task"]
        if task.get("state") == "RUNNING":
            return task
        time.sleep(0.5)
    raise AssertionError(f"{guid} never started: {task}\n{stack.log()[-3000:]}")


def test_otto_awards_after_a_redis_restart_and_a_group_expiry(stack: LiveStack) -> None:
    started(stack, "otto-before")
    old = stack.child_pids()["redis"]
    os.kill(old, signal.SIGKILL)  # the bundled Redis keeps nothing (no RDB, no AOF)
    deadline = time.monotonic() + 15
    while not ((new := stack.child_pids()["redis"]) != old and pid_alive(new)):
        assert time.monotonic() < deadline, stack.log()[-3000:]
        time.sleep(0.1)
    started(stack, "otto-after-restart")

    # The layer's group membership expires (a day by default): the group key is gone.
    layer = redis.Redis(unix_socket_path=str(stack.var / "redis.sock"), db=2)
    groups = [key for key in layer.scan_iter(match="*group*") if b"tasks.auction" in key]
    assert groups, "no tasks.auction group found in the channel layer's database"
    layer.delete(*groups)
    started(stack, "otto-after-expiry")
