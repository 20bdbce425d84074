"""150 live sockets closing at once, against the stack as ``make run`` starts it
(dashboard.md L10; issue 15 saw 49 Redis "Too many connections" here).

Each socket joins its groups on connect and leaves them on close, each a channel-layer
call that takes a pooled Redis connection for a moment; all 150 leave in the same instant.
No error may reach the log, and a socket opened right after gets its snapshot.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import websockets
from stack import LiveStack

pytestmark = pytest.mark.processes

SOCKETS = 150


@pytest.fixture(scope="module")
def stack():
    live = LiveStack("massws")
    try:
        live.start()
        yield live
    finally:
        live.stop()


async def first_frame(url: str) -> websockets.ClientConnection:
    ws = await websockets.connect(url, origin="http://127.0.0.1", open_timeout=60)
    await asyncio.wait_for(ws.recv(), 60)  # the snapshot: its groups are joined by now
    return ws


def test_150_sockets_closing_at_once_leave_no_redis_errors(stack: LiveStack) -> None:
    url = f"ws://127.0.0.1:{stack.port}/ws/live/?view=grid"
    log_before = len(stack.log())

    async def scenario() -> float:
        sockets: list[websockets.ClientConnection] = []
        for start in range(0, SOCKETS, 25):  # in waves: the open is not what is measured
            sockets += await asyncio.gather(*(first_frame(url) for _ in range(start, min(SOCKETS, start + 25))))
        # Every socket's TCP connection is cut in the same instant (no close handshake to
        # wait for): the server sees 150 disconnects together, as when a room's wifi drops.
        for ws in sockets:
            ws.transport.abort()
        await asyncio.sleep(3)
        started = time.monotonic()
        ws = await first_frame(url)
        took = time.monotonic() - started
        await ws.close()
        return took

    took = asyncio.run(scenario())
    print(f"\n{SOCKETS} sockets closed at once; a new socket's snapshot came {took:.2f} s later")
    time.sleep(2)
    log = stack.log()[log_before:]
    for symptom in ("Too many connections", "max number of clients", "Traceback", "ERROR"):
        assert symptom not in log, log[-4000:]
