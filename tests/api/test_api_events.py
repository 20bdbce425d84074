"""/api/v1/events: the BBS event stream as server-sent events (bbs.md 8)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from auction.api.events import STREAMS, events_after, sse_frame
from auction.models import BBSEvent

pytestmark = pytest.mark.django_db


def test_frames_carry_id_type_and_json_data(api, cluster) -> None:
    """bbs.md 8: ``id:`` counter, ``event:`` type, ``data:`` payload."""
    start = BBSEvent.objects.order_by("-id").values_list("id", flat=True).first()
    api("POST", "desired_lrps", {"process_guid": "web", "domain": "cf-apps",
                                 "rootfs": "preloaded:cflinuxfs4", "instances": 1})
    found, last = events_after(start, STREAMS["lrp_instances"])
    # bbs.md 1.4, 8: the desire, then its new UNCLAIMED row (instance and group streams).
    assert [e.type for e in found] == ["desired_lrp_created", "actual_lrp_instance_created"]
    frame = sse_frame(found[0])
    lines = frame.split("\n")
    assert lines[0] == f"id: {found[0].id}" and lines[1] == "event: desired_lrp_created"
    data = json.loads(lines[2].removeprefix("data: "))
    assert data["key"] == "web" and data["after"]["instances"] == 1 and frame.endswith("\n\n")
    assert last >= found[0].id
    tasks, _ = events_after(start, STREAMS["tasks"])
    assert tasks == []


def test_bad_stream_parameters_are_400() -> None:
    client = Client()
    for query in ("stream=everything", "after=-1", "after=x", "after=%C2%B2"):
        response = client.get(f"/api/v1/events?{query}")
        assert response.status_code == 400, query
        assert json.loads(response.content)["error"]["type"] == "InvalidRequest"
    assert client.post("/api/v1/events").status_code == 400
