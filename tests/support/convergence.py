"""Comparing an open live page with a fresh load of its URL (dashboard.md L1).

A page is reduced to its *data hooks*: every element inside ``<main>`` with an id or a
``data-*`` attribute, as ``[tag, id, {data-*}]``, sorted. An open page has converged when
its hooks equal those of a fresh load of the same URL once both have stopped changing.
Used by the convergence test and the multi-process topology test.
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
import urllib.request

from playwright.sync_api import BrowserContext, Page, expect
from playwright.sync_api import Error as PlaywrightError
from stack import ADMIN_PASSWORD, LiveStack

from auction.live.hooks import HOOKS_JS

SETTLE_QUIET_S = 1.5  # hooks unchanged this long = settled
# How often the open pages' hooks are read while settling. Each read walks every element of
# a dozen pages: at 0.1 s that alone kept a core busy beside the rest of the suite.
SETTLE_POLL_S = 0.25
SETTLE_MAX_S = 20.0

# A follower's controls are disabled while it follows (dashboard.md C5): the page's own
# state, not the cluster's, so never compared with a fresh load.
FOLLOWING = {"data-follow-off", "data-follow-title"}


def hooks(page: Page, excluded: set[str], skip: str = "") -> list[str]:
    """The page's data hooks, less the ``excluded`` attributes and elements inside ``skip``
    (a CSS selector; nothing is skipped by default: the /events/ history is live too)."""
    out = []
    for attempt in range(20):
        try:
            items = page.evaluate(HOOKS_JS, skip)
            break
        except PlaywrightError as exc:  # the page is reloading itself (a new world epoch)
            if "context was destroyed" not in str(exc) or attempt == 19:
                raise
            page.wait_for_load_state()
    for item in items:
        tag, ident, data = json.loads(item)
        kept = {k: v for k, v in data.items() if k not in excluded and k not in FOLLOWING}
        if ident or kept:  # an element hooked only by what is left out says nothing
            out.append(json.dumps([tag, ident, kept]))
    return sorted(out)


def settle(pages: list[Page], excluded: set[str], since: float | None = None) -> float:
    """Until every page's hooks stay unchanged for SETTLE_QUIET_S (bounded); returns when
    they last changed (``since`` if they never did)."""
    deadline = time.monotonic() + SETTLE_MAX_S
    last = [hooks(p, excluded) for p in pages]
    changed = since if since is not None else time.monotonic()
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(SETTLE_POLL_S)
        now = [hooks(p, excluded) for p in pages]
        if now != last:
            last, quiet_since = now, time.monotonic()
            changed = quiet_since
        elif time.monotonic() - quiet_since >= SETTLE_QUIET_S:
            break
    return changed


def fresh(context: BrowserContext, urls: list[str], excluded: set[str]) -> list[list[str]]:
    """The hooks of a fresh load of each URL, all in new tabs at once."""
    pages = [context.new_page() for _ in urls]
    try:
        # Loaded side by side: each goto returns once its response has begun.
        for page, url in zip(pages, urls, strict=True):
            page.goto(url, wait_until="commit")
        for page in pages:
            expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)
        settle(pages, excluded)
        return [hooks(page, excluded) for page in pages]
    finally:
        for page in pages:
            page.close()


def time_varying(context: BrowserContext, urls: list[str]) -> set[str]:
    """Attributes that differ between two fresh loads of a paused cluster."""
    names: set[str] = set()
    for one, two in zip(fresh(context, urls, set()), fresh(context, urls, set()), strict=True):
        parsed = [{(tag, ident, k): v for tag, ident, data in map(json.loads, load) for k, v in data.items()}
                  for load in (one, two)]
        names |= {key[2] for key in parsed[0].keys() ^ parsed[1].keys()}
        names |= {key[2] for key, v in parsed[0].items() if key in parsed[1] and parsed[1][key] != v}
    return names


def sign_in(page: Page, stack: LiveStack, then: str, base: str = "",
            user: str = "admin", password: str = ADMIN_PASSWORD) -> None:
    """Signed in (as the stack's admin by default), then on ``then`` (at ``base``, the
    stack's URL by default)."""
    page.goto((base or stack.url) + "admin/login/?next=/" + urllib.parse.quote(then, safe="/"))
    page.fill("#id_username", user)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(re.compile(re.escape(then) + "$"))
    expect(page.locator("body")).to_have_attribute("data-ws", "open", timeout=15_000)



def watch(page: Page, errors: list[str], name: str) -> None:
    page.on("console", lambda m: errors.append(f"{name}: console {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{name}: pageerror {e}"))


class Api:
    """The HTTP API as a script would call it, with an operator's token."""

    def __init__(self, stack: LiveStack, base: str = "") -> None:
        self.base = (base or stack.url) + "api/v1/"
        self.token = stack.manage("api_token", "admin", "--name", "convergence").strip().splitlines()[-1]

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
        return json.loads(raw) if raw else {}

    def pause(self) -> None:
        self.call("POST", "clock", {"paused": True})
