"""A fuzz of what a page may send on its live socket (dashboard.md L8, bbs.md 1.5): any
text, any JSON, deep nesting and oversized frames are read or ignored, never raise, and
the socket stays open (a 200,000-deep array raised RecursionError inside the app)."""

from __future__ import annotations

import json

import pytest
from channels.testing import WebsocketCommunicator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diego_web.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True)]
ORIGIN = [(b"origin", b"http://127.0.0.1:8000")]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10)
FRAMES = (st.text(min_size=1, max_size=200) | JSON.map(json.dumps)
          | st.builds(lambda present: json.dumps({"present": present}), JSON)
          | st.integers(1, 300_000).map(lambda depth: "[" * depth + "]" * depth)
          | st.integers(1, 5_000).map(lambda depth: '{"present":' + '{"a":' * depth + "1" + "}" * (depth + 1)))


@pytest.mark.asyncio
async def test_any_frame_from_a_page_leaves_the_socket_open() -> None:
    frames: list[str] = []

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(FRAMES)
    def draw(frame: str) -> None:
        frames.append(frame)

    draw()
    communicator = WebsocketCommunicator(application, "/ws/live/?view=grid", headers=ORIGIN)
    connected, _ = await communicator.connect()
    assert connected
    await communicator.receive_from(timeout=5)  # the snapshot
    for frame in [*frames, "[" * 200_000 + "]" * 200_000, "[" * 5_000 + "]" * 5_000]:
        await communicator.send_to(text_data=frame)
    # Every frame was handled (the consumer reads them in order) and the socket is open:
    # an exception in receive would have closed it with an error.
    assert await communicator.receive_nothing(timeout=0.5)
    await communicator.disconnect()


@pytest.mark.asyncio
async def test_a_kiosk_socket_needs_its_link_and_closes_when_it_is_revoked() -> None:
    """dashboard.md AD9: no token, no stream; a revoked link's open socket is closed."""
    from asgiref.sync import sync_to_async

    from auction.services.kiosk import kiosk_token_issue, revoke_kiosk_tokens

    for path in ("/ws/live/?view=kiosk", "/ws/live/?view=grid&screen=1", "/ws/live/?view=kiosk&token=forged"):
        refused = WebsocketCommunicator(application, path, headers=ORIGIN)
        connected, _ = await refused.connect()
        assert not connected, path
    token = await sync_to_async(kiosk_token_issue)()
    wall = WebsocketCommunicator(application, f"/ws/live/?view=kiosk&token={token}", headers=ORIGIN)
    connected, _ = await wall.connect()
    assert connected
    await wall.receive_from(timeout=5)  # the snapshot
    assert await sync_to_async(revoke_kiosk_tokens)() == 1
    closed = await wall.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4403}
