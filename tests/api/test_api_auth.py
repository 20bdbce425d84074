"""Who may write (issue 5): sessions with CSRF, per-operator tokens; reads public on the demo."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from auction.models import ApiToken, DesiredLRP

pytestmark = pytest.mark.django_db

WEB = {"process_guid": "web", "domain": "cf-apps", "rootfs": "preloaded:cflinuxfs4", "instances": 1}


def post(client: Client, body: dict, **headers: str):
    response = client.post("/api/v1/desired_lrps", data=json.dumps(body),
                           content_type="application/json", headers=headers)
    return response.status_code, json.loads(response.content)


def test_unauthenticated_writes_are_refused_and_reads_are_public(cluster) -> None:
    client = Client()
    status, body = post(client, WEB)
    assert status == 401 and body["error"]["type"] == "Unauthorized"
    assert not DesiredLRP.objects.filter(process_guid="web").exists()
    assert client.get("/api/v1/desired_lrps").status_code == 200


def test_reads_can_require_a_login(cluster, settings) -> None:
    settings.DIEGO_API_PUBLIC_READS = False
    response = Client().get("/api/v1/actual_lrps")
    assert response.status_code == 401


@pytest.mark.parametrize("header", ["Bearer nope", "Basic abc", "Bearer", "dw_only"])
def test_bad_tokens_are_401(cluster, token, header) -> None:
    status, body = post(Client(), WEB, Authorization=header)
    assert status == 401 and body["error"]["type"] == "Unauthorized"


def test_revoked_token_and_user_without_the_permission(cluster, operator, token) -> None:
    ApiToken.objects.update(revoked=True)
    assert post(Client(), WEB, Authorization=f"Bearer {token}")[0] == 401
    viewer = User.objects.create_user("viewer")
    _, raw = ApiToken.issue(viewer, "read-only")
    status, body = post(Client(), WEB, Authorization=f"Bearer {raw}")
    assert status == 403
    assert body["error"]["message"] == "user viewer may not change the cluster (needs the control permission)"


def test_token_write_records_last_use(cluster, token) -> None:
    assert post(Client(), WEB, Authorization=f"Bearer {token}")[0] == 201
    assert ApiToken.objects.get().last_used is not None


def test_session_writes_need_the_csrf_token(cluster, operator) -> None:
    """A logged-in browser may write only with its CSRF token (session auth)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    status, body = post(client, WEB)
    assert status == 403 and body["error"]["message"].startswith("CSRF check failed")
    client.get("/admin/login/")  # sets the CSRF cookie
    csrf = client.cookies["csrftoken"].value
    assert post(client, WEB, **{"X-CSRFToken": csrf})[0] == 201


def test_superuser_is_an_operator(cluster) -> None:
    admin = User.objects.create_superuser("root", password="pw")
    _, raw = ApiToken.issue(admin, "root")
    assert post(Client(), WEB, Authorization=f"Bearer {raw}")[0] == 201


def test_admin_creates_a_token_and_shows_it_once(cluster, admin_client) -> None:
    """The admin issues per-operator tokens; only a digest is stored."""
    user = User.objects.get(username="admin")
    response = admin_client.post("/admin/auction/apitoken/add/", {"user": user.pk, "name": "laptop"},
                                 follow=True)
    text = response.content.decode()
    token = ApiToken.objects.get(name="laptop")
    raw = text.split("Bearer ")[1].split("<")[0].split()[0]
    assert raw.startswith("dw_") and raw not in (token.digest, token.prefix)
    assert post(Client(), WEB, Authorization=f"Bearer {raw}")[0] == 201


def test_admin_edits_are_audited_with_their_user(cluster, admin_client) -> None:
    """dashboard.md AD4 / issue 5: the admin saves through the same services, so its
    writes leave the same audit entries (who, sim time, before/after)."""
    from auction.models import AuditEntry

    page = admin_client.get("/admin/auction/desiredlrp/")
    assert page.status_code == 200
    pk = DesiredLRP.objects.get(process_guid="lrp-a").pk
    form = admin_client.get(f"/admin/auction/desiredlrp/{pk}/change/").context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update({"instances": 5, "routes": "{}", "annotation": "", "placement_tags": "",
                 "volume_drivers": "", "ports": "[]",
                 "actual_lrps-TOTAL_FORMS": 0, "actual_lrps-INITIAL_FORMS": 0})
    response = admin_client.post(f"/admin/auction/desiredlrp/{pk}/change/", data)
    assert response.status_code == 302, response.content[:2000]
    entry = AuditEntry.objects.get(action="desired_lrp_update", target="lrp-a")
    assert (entry.source, entry.user.username, entry.diff["instances"]) == ("admin", "admin", [3, 5])


def test_session_write_with_a_form_body_is_refused_not_a_500(cluster, operator) -> None:
    """bbs.md 1.5, 1.7: the CSRF check of a session write reads a form body; the API then
    answers 415, it reads JSON only (it was a RawPostDataException, a 500)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    client.get("/admin/login/")
    csrf = client.cookies["csrftoken"].value
    for data in ({"instances": "3"}, {"csrfmiddlewaretoken": csrf, "instances": "3"}):
        response = client.post("/api/v1/desired_lrps", data, headers={"X-CSRFToken": csrf})
        assert response.status_code == 415, response.content[:300]
        assert json.loads(response.content)["error"]["type"] == "InvalidRequest"


def test_edge_refusals_speak_json_under_the_api(client) -> None:
    """bbs.md 1.5: a NUL in a header or cookie, or more query fields than Django parses,
    is the BBS error shape under /api/, not an HTML page."""
    many = "&".join(f"f{i}=1" for i in range(1200))
    for response in (client.get(f"/api/v1/cells?{many}"),
                     client.get("/api/v1/cells", headers={"Last-Event-ID": "1\x00"}),
                     client.get("/api/v1/cells", headers={"Cookie": "sessionid=a\x00b"})):
        assert response.status_code == 400, response.content[:200]
        assert response.json()["error"]["type"] == "InvalidRequest"
