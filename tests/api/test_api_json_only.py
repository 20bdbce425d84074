"""Every error under /api/ is JSON and every body is JSON (bbs.md 1.7)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

TASK = {"task_guid": "t415", "domain": "cf-tasks", "rootfs": "docker:///busybox", "memory_mb": 16}


def error_of(response) -> dict:
    assert response["Content-Type"].startswith("application/json"), response.content[:300]
    body = json.loads(response.content)
    assert set(body) == {"error"} and set(body["error"]) == {"type", "message"}
    return body["error"]


@pytest.mark.parametrize("content_type", [
    "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain", ""])
def test_a_body_that_is_not_json_is_415(token, cluster, content_type) -> None:
    client = Client()
    response = client.generic("POST", "/api/v1/tasks", json.dumps(TASK).encode(),
                              content_type=content_type,
                              headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 415
    assert error_of(response)["message"].startswith("request body must be JSON")


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8",
                                          "application/vnd.diego+json"])
def test_json_types_are_accepted(token, cluster, content_type) -> None:
    response = Client().generic("POST", "/api/v1/tasks", json.dumps(TASK).encode(),
                                content_type=content_type, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201, response.content


def test_404_405_and_csrf_403_are_json(operator) -> None:
    assert error_of(Client().get("/api/v1/nowhere"))["type"] == "ResourceNotFound"
    response = Client().delete("/api/v1/metrics")
    assert response.status_code == 405 and error_of(response)["type"] == "InvalidRequest"
    assert "GET" in response["Allow"]
    # A session write without the CSRF token, through the real CSRF middleware.
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    response = client.post("/api/v1/events", "{}", content_type="application/json")
    assert response.status_code == 403
    assert error_of(response)["message"].startswith("CSRF check failed")


def test_an_exception_is_a_json_500_without_the_traceback(monkeypatch, caplog) -> None:
    def boom() -> dict:
        raise RuntimeError("secret detail")

    monkeypatch.setattr("auction.api.metrics.counters_all", boom)
    response = Client(raise_request_exception=False).get("/api/v1/metrics")
    assert response.status_code == 500
    error = error_of(response)
    assert error == {"type": "UnknownError", "message": "internal error: the request was not completed"}
    assert b"secret detail" not in response.content
    assert "secret detail" in caplog.text  # the log has it


def test_a_bad_host_is_a_json_400() -> None:
    response = Client().get("/api/v1/clock", headers={"Host": "bad host!"})
    assert response.status_code == 400 and error_of(response)["type"] == "InvalidRequest"


def test_pages_keep_their_html_errors() -> None:
    response = Client().get("/no-such-page/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")
