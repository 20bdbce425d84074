"""The sign-in throttle against the real web server (dashboard.md AD7).

daphne as `make run` starts it: a client that writes its own X-Forwarded-For gains no
guesses, and one address spraying many usernames is held up too.
"""

from __future__ import annotations

import http.cookiejar
import re
import urllib.parse
import urllib.request

import pytest
from stack import ADMIN_PASSWORD, LiveStack

pytestmark = pytest.mark.processes


@pytest.fixture(scope="module")
def stack():
    live = LiveStack("signin")
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
