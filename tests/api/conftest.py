"""API test fixtures: a paused clock over seed-example, an operator with a token."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from auction.models import ApiToken
from auction.services.clock import clock_reset
from auction.services.scenarios import scenario_load


@pytest.fixture
def cluster(db: None) -> None:
    scenario_load("seed-example")
    clock_reset(0.0, paused=True)


@pytest.fixture
def operator(db: None) -> User:
    user = User.objects.create_user("op", password="pw-for-tests")
    user.user_permissions.add(Permission.objects.get(codename="control"))
    return user


@pytest.fixture
def token(operator: User) -> str:
    return ApiToken.issue(operator, "tests")[1]


Call = Callable[..., Any]


@pytest.fixture
def api(client: Client, token: str) -> Call:
    """``api(method, path, body=None, raw=None, auth=True)`` → (status, json)."""

    def call(method: str, path: str, body: Any = None, *, raw: bytes | str | None = None,
             auth: bool = True, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        extra = dict(headers or {})
        if auth:
            extra["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else (json.dumps(body) if body is not None else "")
        response = client.generic(method, f"/api/v1/{path}", data=data,
                                  content_type="application/json", headers=extra)
        assert response["Content-Type"].startswith("application/json"), response.content[:200]
        return response.status_code, json.loads(response.content)

    return call
