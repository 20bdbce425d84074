"""/api/v1/desired_lrps (issue 5; bbs.md 1.2-1.4)."""

from __future__ import annotations

import pytest

from auction.models import ActualLRP, AuditEntry, BBSEvent, DesiredLRP, PendingWork

pytestmark = pytest.mark.django_db

WEB = {"process_guid": "web", "domain": "cf-apps", "rootfs": "preloaded:cflinuxfs4",
       "instances": 3, "memory_mb": 256, "disk_mb": 512}


def invalid(status_body, message: str) -> None:
    status, body = status_body
    assert status == 400, body
    assert body == {"error": {"type": "InvalidRequest", "message": message}}


def test_desire_creates_an_unclaimed_row_per_index_and_one_start_request(api, cluster) -> None:
    """bbs.md 1.4 Desire: stored, UNCLAIMED rows for 0..n-1, one start request, an audit entry."""
    status, body = api("POST", "desired_lrps", WEB)
    assert status == 201
    assert body["desired_lrp"]["process_guid"] == "web"
    assert body["desired_lrp"]["modification_tag"]["index"] == 0
    rows = ActualLRP.objects.filter(desired_id="web")
    assert sorted(rows.values_list("index", "state")) == [(0, "UNCLAIMED"), (1, "UNCLAIMED"), (2, "UNCLAIMED")]
    work = PendingWork.objects.filter(process_guid="web")
    assert sorted(work.values_list("index", flat=True)) == [0, 1, 2]
    assert len(set(work.values_list("queued_at", "reason"))) == 1
    entry = AuditEntry.objects.get(action="desired_lrp_desire", target="web")
    assert entry.source == "api" and entry.user.username == "op"
    assert entry.diff["instances"] == [None, 3]
    assert BBSEvent.objects.filter(type="desired_lrp_created", key="web").exists()


@pytest.mark.parametrize(("change", "message"), [
    ({"instances": -1}, "Invalid field: instances"),
    ({"rootfs": ""}, "Invalid field: rootfs, Invalid field: rootfs"),
    ({"domain": ""}, "Invalid field: domain, Invalid field: domain"),
    ({"memory_mb": -5, "disk_mb": -1}, "Invalid field: memory_mb, Invalid field: disk_mb"),
    ({"rootfs": "cflinuxfs4"}, "Invalid field: rootfs"),
    # bbs.md 1.2 rule 3: Go's url.Parse rejects these (port, escape, bracket, host).
    ({"rootfs": "docker://registry:abc/img"}, "Invalid field: rootfs"),
    ({"rootfs": "docker:///lib/%zz"}, "Invalid field: rootfs"),
    ({"rootfs": "docker://[::1/img"}, "Invalid field: rootfs"),
    ({"rootfs": "docker://ho st/x"}, "Invalid field: rootfs"),
    ({"max_pids": -1}, "Invalid field: max_pids"),
    ({"annotation": "é" * 5121}, "Invalid field: annotation"),
    ({"routes": {"cf-router": "x" * 131_071}}, "Invalid field: routes"),
    ({"process_guid": "no spaces"}, "Invalid field: process_guid"),
    ({"process_guid": ""}, "Invalid field: process_guid"),
    ({"domain": "", "rootfs": "", "instances": -1, "process_guid": "a.b"},
     "Invalid field: domain, Invalid field: rootfs, Invalid field: rootfs, Invalid field: instances, "
     "Invalid field: domain, Invalid field: process_guid"),
])
def test_desire_validation_messages_in_the_bbs_order(api, cluster, change, message) -> None:
    """bbs.md 1.2: every failed check's text, in Diego's order, joined by ", "; nothing written."""
    invalid(api("POST", "desired_lrps", {**WEB, **change}), message)
    assert not DesiredLRP.objects.filter(process_guid=WEB["process_guid"]).exists()
    assert not AuditEntry.objects.filter(source="api").exists()


def test_routes_at_the_limit_are_accepted(api, cluster) -> None:
    """bbs.md 1.2 step 9: the compact-JSON size of the values may reach 131,072 bytes."""
    status, _ = api("POST", "desired_lrps", {**WEB, "routes": {"cf-router": "x" * 131_070}})
    assert status == 201  # "x"*131070 is 131,072 bytes with its quotes


def test_missing_required_members_are_named_as_the_bbs_names_them(api, cluster) -> None:
    """bbs.md 1.2: an absent domain, rootfs or guid fails as an empty one does."""
    invalid(api("POST", "desired_lrps", {"instances": 1}),
            "Invalid field: domain, Invalid field: rootfs, Invalid field: rootfs, "
            "Invalid field: domain, Invalid field: process_guid")


@pytest.mark.parametrize(("change", "message"), [
    ({"instances": "3"}, "Invalid field: instances"),
    ({"instances": True}, "Invalid field: instances"),
    ({"instances": 1.5}, "Invalid field: instances"),
    ({"instances": 10**12}, "Invalid field: instances"),
    ({"memory_mb": 2**31}, "Invalid field: memory_mb"),
    ({"placement_tags": "gpu"}, "Invalid field: placement_tags"),
    ({"routes": []}, "Invalid field: routes"),
    ({"domain": "nul\x00byte"}, "Invalid field: domain"),
    ({"annotation": "\ud800"}, "Invalid field: annotation"),
    ({"process_guid": "g" * 256}, "Invalid field: process_guid"),
    ({"colour": "red"}, "Invalid field: colour"),
])
def test_wrong_types_and_unknown_members_are_400(api, cluster, change, message) -> None:
    """Issue 5: wrong types and unknown fields are InvalidRequest naming the member, never 500."""
    invalid(api("POST", "desired_lrps", {**WEB, **change}), message)
    assert not DesiredLRP.objects.filter(process_guid="web").exists()


@pytest.mark.parametrize(("raw", "message"), [
    ("{", "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
    ("[1, 2]", "request body must be a JSON object"),
    ('{"instances": NaN}', "invalid JSON: NaN is not a JSON number"),
    (b"\xff\xfe", None),
    ("", "invalid JSON: Expecting value: line 1 column 1 (char 0)"),
])
def test_malformed_bodies_are_400(api, cluster, raw, message) -> None:
    status, body = api("POST", "desired_lrps", raw=raw)
    assert status == 400 and body["error"]["type"] == "InvalidRequest"
    if message:
        assert body["error"]["message"] == message


def test_desiring_an_existing_guid_is_409(api, cluster) -> None:
    """bbs.md 1.2: ResourceExists, "the requested resource already exists"."""
    status, body = api("POST", "desired_lrps", {**WEB, "process_guid": "lrp-a"})
    assert status == 409
    assert body == {"error": {"type": "ResourceExists", "message": "the requested resource already exists"}}
    assert DesiredLRP.objects.get(process_guid="lrp-a").instances == 3


def test_get_list_filter_and_page(api, cluster) -> None:
    for i in range(5):
        api("POST", "desired_lrps", {**WEB, "process_guid": f"app-{i}", "domain": "other", "instances": 0})
    status, body = api("GET", "desired_lrps?domain=other&page_size=2", auth=False)
    assert status == 200
    assert [d["process_guid"] for d in body["desired_lrps"]] == ["app-0", "app-1"]
    seen = [d["process_guid"] for d in body["desired_lrps"]]
    while body["next_page_token"]:
        _, body = api("GET", f"desired_lrps?domain=other&page_size=2&page_token={body['next_page_token']}")
        seen += [d["process_guid"] for d in body["desired_lrps"]]
    assert seen == [f"app-{i}" for i in range(5)]
    _, body = api("GET", "desired_lrps?process_guid=lrp-a&process_guid=lrp-b")
    assert [d["process_guid"] for d in body["desired_lrps"]] == ["lrp-a", "lrp-b"]
    status, body = api("GET", "desired_lrps/lrp-b", auth=False)
    assert status == 200 and body["desired_lrp"]["instances"] == 2 and body["desired_lrp"]["memory_mb"] == 5120


@pytest.mark.parametrize("query", ["page_size=0", "page_size=1001", "page_size=x",
                                   "page_token=!!", "page_token=WzFd"])
def test_bad_paging_is_400(api, cluster, query) -> None:
    status, body = api("GET", f"desired_lrps?{query}")
    assert status == 400 and body["error"]["type"] == "InvalidRequest"


def test_unknown_guid_is_404(api, cluster) -> None:
    """bbs.md 1.2: ResourceNotFound, "the requested resource could not be found"."""
    missing = {"error": {"type": "ResourceNotFound", "message": "the requested resource could not be found"}}
    assert api("GET", "desired_lrps/nope") == (404, missing)
    assert api("PATCH", "desired_lrps/nope", {"instances": 1}) == (404, missing)
    assert api("DELETE", "desired_lrps/nope") == (404, missing)


def test_update_scales_up_and_down_and_bumps_the_tag_every_time(api, cluster) -> None:
    """bbs.md 1.4 Update: new UNCLAIMED rows for N..M-1; scale-down deletes UNCLAIMED at
    once; modification_tag.index + 1 even when nothing changed."""
    status, body = api("PATCH", "desired_lrps/lrp-a", {"instances": 5})
    assert status == 200 and body["desired_lrp"]["modification_tag"]["index"] == 1
    assert ActualLRP.objects.filter(desired_id="lrp-a").count() == 5
    _, body = api("PATCH", "desired_lrps/lrp-a", {})
    assert body["desired_lrp"]["modification_tag"]["index"] == 2
    _, body = api("PATCH", "desired_lrps/lrp-a", {"instances": 1, "annotation": "v2",
                                                  "routes": {"cf-router": [{"port": 8080}]}})
    assert sorted(ActualLRP.objects.filter(desired_id="lrp-a").values_list("index", flat=True)) == [0]
    stored = DesiredLRP.objects.get(process_guid="lrp-a")
    assert (stored.instances, stored.annotation, stored.modification_tag_index) == (1, "v2", 3)
    entry = AuditEntry.objects.filter(action="desired_lrp_update", target="lrp-a").first()
    assert entry.diff["instances"] == [5, 1] and entry.diff["annotation"] == ["", "v2"]


@pytest.mark.parametrize(("update", "message"), [
    ({"instances": -1}, "Invalid field: instances"),
    ({"domain": "x"}, "Invalid field: domain"),
    ({"instances": -1, "memory_mb": 1}, "Invalid field: instances, Invalid field: memory_mb"),
    ({"annotation": "a" * 10_241, "routes": {"r": "x" * 131_071}},
     "Invalid field: annotation, Invalid field: routes"),
    ({"instances": "two"}, "Invalid field: instances"),
])
def test_update_validation(api, cluster, update, message) -> None:
    """bbs.md 1.3: instances, annotation, routes, then any other member [project rule]."""
    invalid(api("PATCH", "desired_lrps/lrp-a", update), message)
    stored = DesiredLRP.objects.get(process_guid="lrp-a")
    assert (stored.instances, stored.modification_tag_index) == (3, 0)


def test_remove_deletes_and_scales_to_zero(api, cluster) -> None:
    """bbs.md 1.4 Remove: the record goes, then the scale-down to 0."""
    assert api("DELETE", "desired_lrps/lrp-b") == (200, {})
    assert not DesiredLRP.objects.filter(process_guid="lrp-b").exists()
    assert not ActualLRP.objects.filter(desired_id="lrp-b").exists()
    assert BBSEvent.objects.filter(type="desired_lrp_removed", key="lrp-b").exists()
    assert AuditEntry.objects.filter(action="desired_lrp_remove", target="lrp-b", source="api").exists()


def test_wrong_method_is_405_json(api, cluster) -> None:
    status, body = api("PUT", "desired_lrps/lrp-a", {"instances": 1})
    assert status == 405
    assert body["error"]["message"] == "method PUT not allowed; allowed: DELETE, GET, PATCH"


def test_unknown_paths_are_json_404(api) -> None:
    status, body = api("GET", "nothing/here")
    assert status == 404 and body["error"]["type"] == "ResourceNotFound"


@pytest.mark.parametrize(("method", "path", "field"), [
    ("GET", "desired_lrps/web%00", "process_guid"), ("PATCH", "desired_lrps/%00", "process_guid"),
    ("DELETE", "tasks/t%00", "task_guid"), ("POST", "cells/%00/fail", "cell_id"),
    ("GET", "auctions/a-%00", "auction_id"), ("PUT", "domains/%00", "domain"),
])
def test_a_nul_in_the_path_is_invalid_not_a_500(api, cluster, method, path, field) -> None:
    """PostgreSQL cannot even compare a NUL: refused before any lookup, as in a query."""
    assert api(method, path, {}) == (400, {"error": {"type": "InvalidRequest",
                                                     "message": f"Invalid field: {field}"}})
