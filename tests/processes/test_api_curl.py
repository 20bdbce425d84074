"""The README's curl walk-through against the whole app as `make run` starts it (issue 5).

daphne, Celery worker and beat and the bundled Redis run as real processes; every call
is the curl command a person would type, with a token from ``manage.py api_token``.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from stack import LiveStack

pytestmark = pytest.mark.processes


@pytest.fixture(scope="module")
def stack():
    live = LiveStack("api")
    try:
        live.start()
        yield live
    finally:
        live.stop()


def curl(stack: LiveStack, token: str | None, method: str, path: str, body: dict | None = None):
    argv = ["curl", "-sS", "-X", method, "-w", "\n%{http_code}", f"{stack.url}api/v1/{path}"]
    if token:
        argv += ["-H", f"Authorization: Bearer {token}"]
    if body is not None:
        argv += ["-H", "Content-Type: application/json", "-d", json.dumps(body)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True).stdout
    text, _, code = out.rpartition("\n")
    return int(code), json.loads(text)


def wait(stack: LiveStack, path: str, predicate, what: str, timeout: float = 90):
    deadline = time.monotonic() + timeout
    body = None
    while time.monotonic() < deadline:
        _, body = curl(stack, None, "GET", path)
        if predicate(body):
            return body
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}: {str(body)[:2000]}")


def running(body: dict) -> dict[int, dict]:
    return {a["index"]: a for a in body["actual_lrps"]
            if a["presence"] == "ORDINARY" and a["state"] == "RUNNING"}


def test_readme_walkthrough(stack: LiveStack) -> None:
    token = stack.manage("api_token", "admin", "--name", "readme").strip()
    assert token.startswith("dw_")
    # Unauthenticated writes are refused; reads are public.
    status, body = curl(stack, None, "POST", "desired_lrps", {"process_guid": "x"})
    assert status == 401 and body["error"]["type"] == "Unauthorized"
    assert curl(stack, token, "POST", "clock", {"speed": 10})[0] == 200

    # Desire an app and watch its actual LRPs come up.
    status, body = curl(stack, token, "POST", "desired_lrps", {
        "process_guid": "demo", "domain": "cf-apps", "rootfs": "preloaded:cflinuxfs4",
        "instances": 3, "memory_mb": 128, "disk_mb": 256, "ports": [8080]})
    assert status == 201, body
    body = wait(stack, "actual_lrps?process_guid=demo", lambda b: len(running(b)) == 3, "demo running")
    assert all(a["address"] and a["ports"] for a in running(body).values())

    # Kill an index and see it return.
    killed = running(body)[1]["instance_guid"]
    assert curl(stack, token, "DELETE", "actual_lrps/demo/1") == (200, {})
    wait(stack, "actual_lrps?process_guid=demo&index=1",
         lambda b: 1 in running(b) and running(b)[1]["instance_guid"] != killed,
         "demo.1 back with a new instance", timeout=120)

    # Bad input: the BBS's words.
    status, body = curl(stack, token, "POST", "desired_lrps", {
        "process_guid": "bad", "domain": "", "rootfs": "", "instances": -1})
    assert status == 400
    assert body["error"]["message"] == ("Invalid field: domain, Invalid field: rootfs, "
                                        "Invalid field: rootfs, Invalid field: instances, "
                                        "Invalid field: domain")

    # A stale domain keeps an extra: the stop of a scale-down cannot reach a cell that
    # lost its presence, and convergence retires extras only while the domain is fresh.
    curl(stack, token, "POST", "clock", {"paused": True})
    assert curl(stack, token, "PUT", "domains/cf-apps", {"ttl": 1})[0] == 200
    victim = running(curl(stack, None, "GET", "actual_lrps?process_guid=demo&index=2")[1])[2]["cell_id"]
    assert curl(stack, token, "POST", f"cells/{victim}/fail")[0] == 200
    curl(stack, token, "POST", "clock", {"step": 16})
    assert curl(stack, token, "PATCH", "desired_lrps/demo", {"instances": 2})[0] == 200
    _, clock = curl(stack, token, "POST", "clock", {"paused": False})
    _, domains = curl(stack, None, "GET", "domains")
    assert "cf-apps" not in domains["domains"]
    two_passes_later = (clock["clock"]["now"] + 61) * 1e9
    wait(stack, "metrics", lambda b: (b["at"] or 0) > two_passes_later, "two passes", timeout=120)
    _, body = curl(stack, None, "GET", "actual_lrps?process_guid=demo&index=2")
    assert body["actual_lrps"], "the extra was retired although cf-apps is stale"
    # Bump the domain: the next pass retires the extra.
    curl(stack, token, "PUT", "domains/cf-apps", {"ttl": 120})
    wait(stack, "actual_lrps?process_guid=demo",
         lambda b: not any(a["index"] == 2 for a in b["actual_lrps"]), "the extra retired", timeout=120)

    # Cancel a task.
    status, body = curl(stack, token, "POST", "tasks", {
        "task_guid": "report", "domain": "cf-tasks", "rootfs": "docker:///busybox",
        "memory_mb": 64, "duration_s": 600})
    assert status == 201 and body["task"]["state"] == "PENDING"
    wait(stack, "tasks/report", lambda b: b["task"]["state"] == "RUNNING", "the task running")
    status, body = curl(stack, token, "POST", "tasks/report/cancel")
    assert status == 200
    assert (body["task"]["state"], body["task"]["failure_reason"]) == ("COMPLETED", "task was cancelled")
    _, audit = curl(stack, None, "GET", "metrics")
    assert audit["counters"]


def test_completion_callback_is_posted_by_the_worker(stack: LiveStack) -> None:
    """bbs.md 7 Callback, with the real Celery worker: RESOLVING, POST, then deleted."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    bodies: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        token = stack.manage("api_token", "admin", "--name", "callbacks").strip()
        curl(stack, token, "POST", "clock", {"paused": False, "speed": 10})
        status, _ = curl(stack, token, "POST", "tasks", {
            "task_guid": "with-callback", "domain": "cf-tasks", "rootfs": "docker:///busybox",
            "memory_mb": 32, "duration_s": 5,
            "completion_callback_url": f"http://127.0.0.1:{server.server_port}/done"})
        assert status == 201
        wait(stack, "tasks/with-callback", lambda b: "error" in b, "the task deleted after its callback")
        assert [b["task_guid"] for b in bodies] == ["with-callback"]
        assert bodies[0]["failed"] is False
    finally:
        server.shutdown()


def test_event_stream_over_daphne(stack: LiveStack) -> None:
    """bbs.md 8 over HTTP: `curl -N /api/v1/events` sees a desire and its instance start,
    and resumes after a reconnect from Last-Event-ID without losing or repeating one."""
    token = stack.manage("api_token", "admin", "--name", "events").strip()
    curl(stack, token, "POST", "clock", {"paused": False, "speed": 10})
    reader = subprocess.Popen(
        ["curl", "-sS", "-N", f"{stack.url}api/v1/events?stream=lrp_instances"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout is not None
        assert reader.stdout.readline().startswith(": diego-web BBS events")
        curl(stack, token, "POST", "desired_lrps", {
            "process_guid": "watched", "domain": "cf-apps", "rootfs": "preloaded:cflinuxfs4",
            "instances": 1, "memory_mb": 64})
        frames, current = [], {}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = reader.stdout.readline().rstrip("\n")
            if line.startswith(("id: ", "event: ", "data: ")):
                name, _, value = line.partition(": ")
                current[name] = value
            elif line == "" and current:
                frames.append(current)
                current = {}
                data = json.loads(frames[-1]["data"])
                if frames[-1]["event"] == "actual_lrp_instance_changed" and data.get("after", {}).get("state") == "RUNNING":
                    break
        types = [f["event"] for f in frames]
        assert types[0] == "desired_lrp_created", types
        assert "actual_lrp_instance_changed" in types
        ids = [int(f["id"]) for f in frames]
        assert ids == sorted(ids)
    finally:
        reader.kill()
    # Resume from the first frame's id: the next frames are the ones after it.
    out = subprocess.run(
        ["curl", "-sS", "-N", "--max-time", "3", "-H", f"Last-Event-ID: {ids[0]}",
         f"{stack.url}api/v1/events?stream=lrp_instances"], capture_output=True, text=True)
    resumed = [int(line[4:]) for line in out.stdout.splitlines() if line.startswith("id: ")]
    assert resumed[: len(ids) - 1] == ids[1:]


def test_live_socket_is_deflated_by_daphne(stack: LiveStack) -> None:
    """dashboard.md L8: `make run`'s daphne accepts permessage-deflate, so the grid's first
    snapshot travels compressed; a client that offers nothing still gets it plain."""
    import asyncio

    import websockets

    ws_url = stack.url.replace("http://", "ws://") + "ws/live/?view=grid&mode=full"
    origin = stack.url.rstrip("/")

    async def first(compression: str | None) -> tuple[str | None, str]:
        async with websockets.connect(ws_url, origin=origin, compression=compression,
                                      max_size=None, open_timeout=30) as socket:
            text = await asyncio.wait_for(socket.recv(), 30)
            return socket.response.headers.get("Sec-WebSocket-Extensions"), text

    extensions, deflated = asyncio.run(first("deflate"))
    assert extensions and extensions.startswith("permessage-deflate"), extensions
    plain_extensions, plain = asyncio.run(first(None))
    assert plain_extensions is None
    # The same regions either way (the demo cluster is still; both are snapshots).
    assert 'id="zone-' in deflated and 'id="zone-' in plain
