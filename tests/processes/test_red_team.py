"""What a red team broke, against the stack as `make run` starts it (issue 27).

- The sign-in throttle (dashboard.md AD7): a client that writes its own X-Forwarded-For
  gains no guesses, and one address spraying many usernames is held up too.
- Bad input (bbs.md 1.5): a plan's desire without a process guid is a 400 in the BBS's
  words, and a websocket frame of deeply nested JSON leaves no traceback and the socket
  open.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import socket
import time
import urllib.parse
import urllib.request

import pytest
import websockets
from stack import ADMIN_PASSWORD, LiveStack

pytestmark = pytest.mark.processes


@pytest.fixture(scope="module")
def stack():
    live = LiveStack("redteam")
    live.env["DIEGO_UPLOAD_MAX_MB"] = "5"
    try:
        live.start()
        yield live
    finally:
        live.stop()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return None


def sign_in(stack: LiveStack, username: str, password: str, forwarded: str | None = None) -> tuple[int, str]:
    """One sign-in as a browser makes it (the form's CSRF token first); (status, page)."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    with opener.open(urllib.request.Request(f"{stack.url}login/", headers=headers), timeout=30) as page:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())
    assert token is not None
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), "username": username,
                                   "password": password}).encode()
    request = urllib.request.Request(f"{stack.url}login/", data=body, headers={
        **headers, "Referer": f"{stack.url}login/"})
    try:
        with opener.open(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as redirect:  # 302: signed in
        return redirect.code, ""


def test_a_forged_forwarded_header_gains_no_guesses(stack: LiveStack) -> None:
    """AD7: five wrong passwords, each "from" another forged address, then the right one
    from a sixth: held up, because the header of an untrusted client is not believed."""
    for n in range(5):
        status, page = sign_in(stack, "admin", "wrong", forwarded=f"198.51.100.{n}")
        assert status == 200 and "Too many" not in page
    status, page = sign_in(stack, "admin", ADMIN_PASSWORD, forwarded="198.51.100.77")
    assert status == 200, "the right password got in past the throttle with a forged header"
    assert "Too many failed sign-ins for this username from your address" in page


def test_spraying_many_usernames_from_one_address_is_held(stack: LiveStack) -> None:
    """AD7: one address trying one password on many usernames is held by its 21st try
    (sooner when this address already failed in another test of the module)."""
    for n in range(21):
        status, page = sign_in(stack, f"sprayed{n}", "Winter2026!")
        assert status == 200
        if "Too many" in page:
            break
    assert "Too many failed sign-ins from your address" in page, "21 usernames tried, none held"


def test_a_plan_desire_without_a_process_guid_is_refused(stack: LiveStack) -> None:
    """bbs.md 1.5 / plans.md 1.2: every door validates before it builds."""
    token = stack.manage("api_token", "admin", "--name", "redteam").strip()
    for change in ({"action": "desire", "instances": 2},
                   {"action": "desire", "process_guid": ["x"], "rootfs": 7}):
        request = urllib.request.Request(
            f"{stack.url}api/v1/plans", method="POST", data=json.dumps({"changes": [change]}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=30)
            raise AssertionError("accepted")
        except urllib.error.HTTPError as refused:
            body = json.loads(refused.read())
            assert refused.code == 400, body
            assert "Invalid field: process_guid" in body["error"]["message"], body


def test_a_deeply_nested_websocket_frame_is_ignored(stack: LiveStack) -> None:
    """A page's socket reads only its own small messages: a 200,000-deep array and a
    5,000-deep one (short enough to be read) raise nothing; the socket stays open."""
    log_before = len(stack.log())

    async def scenario() -> None:
        url = f"ws://127.0.0.1:{stack.port}/ws/live/?view=grid"
        async with websockets.connect(url, origin="http://127.0.0.1", open_timeout=60,
                                      max_size=None) as ws:
            await asyncio.wait_for(ws.recv(), 60)  # the snapshot
            for depth in (200_000, 5_000):
                await ws.send("[" * depth + "]" * depth)
            await asyncio.sleep(1)
            pong = await ws.ping()
            await asyncio.wait_for(pong, 10)  # still open and answering

    asyncio.run(scenario())
    time.sleep(1)
    log = stack.log()[log_before:]
    assert "Traceback" not in log and "RecursionError" not in log, log[-4000:]


def test_a_revoked_kiosk_link_closes_its_open_socket(stack: LiveStack) -> None:
    """dashboard.md AD9: a wall screen's socket needs its link; `kiosk_link --revoke-all`
    closes the open one at once (it streamed on for good), and one without a token is
    refused."""
    link = stack.manage("kiosk_link", "--base", stack.url).strip().splitlines()[-1]
    token = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["token"][0]

    async def scenario() -> int | None:
        base = f"ws://127.0.0.1:{stack.port}/ws/live/?view=kiosk"
        try:
            async with websockets.connect(base, origin="http://127.0.0.1", open_timeout=30):
                raise AssertionError("a kiosk socket without a token was accepted")
        except websockets.InvalidStatus:
            pass
        async with websockets.connect(f"{base}&token={token}", origin="http://127.0.0.1",
                                      open_timeout=60, max_size=None) as ws:
            await asyncio.wait_for(ws.recv(), 60)  # the snapshot
            await asyncio.to_thread(stack.manage, "kiosk_link", "--revoke-all")
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    await asyncio.wait_for(ws.recv(), deadline - time.monotonic())
                except websockets.ConnectionClosed as closed:
                    return closed.rcvd.code if closed.rcvd else None
                except TimeoutError:
                    break
        return None

    assert asyncio.run(scenario()) == 4403


def test_a_socket_stays_open_while_the_clock_is_paused(stack: LiveStack) -> None:
    """dashboard.md L8: with nothing to send for a while (a paused clock), a page's socket
    stays open as long as the page; it was closed with 1011 every ~6 s (a Redis read
    timeout shorter than the channel layer's blocking receive) and logged a traceback."""
    token = stack.manage("api_token", "admin", "--name", "paused").strip()
    request = urllib.request.Request(
        f"{stack.url}api/v1/clock", method="POST", data=json.dumps({"paused": True}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    assert urllib.request.urlopen(request, timeout=30).status == 200
    log_before = len(stack.log())

    async def scenario() -> None:
        url = f"ws://127.0.0.1:{stack.port}/ws/live/?view=grid"
        async with websockets.connect(url, origin="http://127.0.0.1", open_timeout=60, max_size=None) as ws:
            await asyncio.wait_for(ws.recv(), 60)  # the snapshot
            deadline = time.monotonic() + 14
            while (left := deadline - time.monotonic()) > 0:
                try:
                    await asyncio.wait_for(ws.recv(), left)
                except TimeoutError:
                    break
            await asyncio.wait_for(await ws.ping(), 10)  # open after 14 s of quiet

    asyncio.run(scenario())
    log = stack.log()[log_before:]
    assert "Traceback" not in log and "Timeout reading" not in log, log[-4000:]


def raw_answer(stack: LiveStack, head: bytes, body: bytes = b"", timeout: float = 5) -> tuple[bytes, float]:
    """The first line a raw HTTP request is answered with, and how long it took."""
    with socket.create_connection(("127.0.0.1", stack.port), timeout=timeout) as conn:
        started = time.monotonic()
        conn.sendall(head + body)
        data = b""
        try:
            while b"\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        except TimeoutError:
            return b"(no answer)", time.monotonic() - started
        return data.split(b"\r\n", 1)[0], time.monotonic() - started


def test_an_upload_over_the_limit_is_refused_before_its_body(stack: LiveStack) -> None:
    """dashboard.md U5: a declared length over the limit is answered 413 at once, without
    sending a byte of the body (it was read whole first: 7-14 s for 300 MB, everyone
    waiting); a chunked body is cut off at the limit; other requests never wait."""
    for path in (b"/foundations/", b"/api/v1/foundations"):
        line, took = raw_answer(stack, b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                b"Content-Type: multipart/form-data; boundary=x\r\n"
                                b"Content-Length: 314572800\r\n\r\n")
        assert line.startswith(b"HTTP/1.1 413"), (path, line)
        assert took < 2, took
    chunk = b"x" * 65536
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(6 * 16)) + b"0\r\n\r\n"
    line, _ = raw_answer(stack, b"POST /api/v1/foundations HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", body)
    assert line.startswith(b"HTTP/1.1 413"), line
    started = time.monotonic()
    assert urllib.request.urlopen(f"{stack.url}healthz/", timeout=5).status == 200
    assert time.monotonic() - started < 2
