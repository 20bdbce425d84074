"""No usernames in public streams (dashboard.md AD8): anonymous readers see "an operator"."""

from __future__ import annotations

import json

import pytest
from django.test import Client, RequestFactory

from auction.api.events import events_after, signed_in, sse_frame
from auction.live.fragments import events_history_fragment, feed_fragment
from auction.live.presenter import Presenter, presenter_banner, user_tag
from auction.models import BBSEvent

pytestmark = pytest.mark.django_db


def audited_change(api) -> BBSEvent:
    start = BBSEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
    status, _ = api("PATCH", "desired_lrps/lrp-a", {"instances": 4})
    assert status == 200
    found, _ = events_after(start, lambda t: True)
    return next(e for e in found if e.data.get("user"))


def test_the_sse_stream_names_the_operator_only_to_signed_in_readers(api, cluster, operator, token) -> None:
    event = audited_change(api)
    assert event.data["user"] == "op"  # the log keeps who (AD4); the admin shows it
    anonymous = json.loads(sse_frame(event).split("\n")[2].removeprefix("data: "))
    assert anonymous["user"] == "an operator"
    named = json.loads(sse_frame(event, names=True).split("\n")[2].removeprefix("data: "))
    assert named["user"] == "op"
    factory = RequestFactory()
    assert not signed_in(factory.get("/api/v1/events"))
    assert not signed_in(factory.get("/api/v1/events", HTTP_AUTHORIZATION="Bearer nonsense"))
    assert signed_in(factory.get("/api/v1/events", HTTP_AUTHORIZATION=f"Bearer {token}"))


def test_feed_history_and_their_live_frames_say_an_operator(api, cluster) -> None:
    audited_change(api)
    for html in (feed_fragment(), events_history_fragment(""),
                 Client().get("/grid/").content.decode(), Client().get("/events/").content.decode()):
        assert "by an operator" in html
        assert "by op" not in html


def test_the_presenter_banner_sent_to_followers_has_no_username() -> None:
    html = presenter_banner(Presenter(4217, "zelda", 0.0, {"view": "/grid/"}))
    assert "following an operator" in html and "zelda" not in html
    # Nor the account's number: the presenter's own page recognises itself by a tag.
    assert "4217" not in html
    assert f'data-presenter-id="{user_tag(4217)}"' in html and user_tag(4217) != user_tag(4218)
