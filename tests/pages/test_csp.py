"""Every answer carries the Content-Security-Policy (dashboard.md AD5)."""

from __future__ import annotations

import pytest
from django.test import Client

from auction.middleware import CONTENT_SECURITY_POLICY

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/", "/lrps/", "/events/", "/auctions/", "/login/", "/admin/login/",
                                  "/api/v1/desired_lrps", "/api/v1/nowhere", "/healthz/", "/no-such-page/"])
def test_every_answer_has_the_policy(path: str) -> None:
    answer = Client().get(path)
    assert answer["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, (path, answer.status_code)


def test_the_policy_allows_no_inline_script_and_no_framing() -> None:
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))
    assert directives["script-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
    assert directives["object-src"] == "'none'"
