"""The dashboard's own sign-in and its throttle (dashboard.md AD6, AD7)."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import Permission, User
from django.core.cache import cache
from django.test import Client

from auction.permissions import CONTROL_CODENAME
from auction.services import signin

pytestmark = pytest.mark.django_db


def _clear_counts() -> None:
    cache.clear()
    from auction.live.publish import key_prefix, state_redis

    state = state_redis()
    for key in state.scan_iter(f"{key_prefix()}:signin-failures:*"):
        state.delete(key)


@pytest.fixture(autouse=True)
def _fresh_counts():
    _clear_counts()
    yield
    _clear_counts()


@pytest.fixture
def operator() -> User:
    """An operator who is not staff: the permission alone (auction/permissions.py)."""
    user = User.objects.create_user("olga", password="right-password-1")
    user.user_permissions.add(Permission.objects.get(codename=CONTROL_CODENAME))
    return user


def test_an_operator_without_staff_signs_in_and_out(operator) -> None:
    """AD6: /login/ (not the admin's), then the header names them and offers Sign out;
    the controls are theirs; Sign out (a POST) ends the session."""
    client = Client()
    page = client.get("/grid/").content.decode()
    assert 'href="/login/?next=/grid/"' in page and ">Sign in<" in page
    form = client.get("/login/?next=/grid/")
    assert form.status_code == 200 and b"admin" not in form.content.split(b"<main")[1]
    assert b'data-nofollow="1"' in form.content  # never led away by a presenter mid-password
    response = client.post("/login/", {"username": "olga", "password": "right-password-1", "next": "/grid/"})
    assert response.status_code == 302 and response["Location"] == "/grid/"
    page = client.get("/grid/").content.decode()
    assert "olga" in page and "Sign out" in page and 'data-can-control="true"' in page
    assert client.post("/logout/").status_code == 302
    assert 'data-can-control="false"' in client.get("/grid/").content.decode()


def test_sign_in_refuses_an_offsite_next(operator) -> None:
    client = Client()
    response = client.post("/login/", {"username": "olga", "password": "right-password-1",
                                       "next": "//evil.example/phish"})
    assert response.status_code == 302 and response["Location"] == "/"


def test_five_failures_then_a_wait_with_a_clear_message(operator) -> None:
    """AD7: 5 wrong passwords for one username from one address, then even the right
    password waits; another address or another username is not held up."""
    client = Client(REMOTE_ADDR="10.0.0.1")
    for _ in range(signin.FREE_FAILURES):
        page = client.post("/login/", {"username": "olga", "password": "wrong"})
        assert page.status_code == 200 and b"Too many" not in page.content
    held = client.post("/login/", {"username": "OLGA", "password": "right-password-1"})
    assert held.status_code == 200
    assert b"Too many failed sign-ins for this username from your address: try again in 30 s." in held.content
    elsewhere = Client(REMOTE_ADDR="10.0.0.2")
    assert elsewhere.post("/login/", {"username": "olga", "password": "right-password-1"}).status_code == 302


def test_the_wait_doubles_and_a_success_clears_it() -> None:
    now = time.time()
    for _ in range(signin.FREE_FAILURES):
        assert signin.signin_wait_s("u", "a", now) == 0
        signin.signin_failed("u", "a", now)
    assert signin.signin_wait_s("u", "a", now) == 30
    assert signin.signin_wait_s("u", "a", now + 31) == 0
    signin.signin_failed("u", "a", now + 31)
    assert signin.signin_wait_s("u", "a", now + 31) == 60
    signin.signin_succeeded("u", "a")
    assert signin.signin_wait_s("u", "a", now + 31) == 0


def test_the_admin_login_is_throttled_too(operator) -> None:
    client = Client(REMOTE_ADDR="10.0.0.3")
    for _ in range(signin.FREE_FAILURES):
        client.post("/admin/login/", {"username": "admin", "password": "wrong"})
    held = client.post("/admin/login/", {"username": "admin", "password": "wrong"})
    assert b"Too many failed sign-ins" in held.content


def test_every_web_process_shares_the_count() -> None:
    """AD7: with two daphnes behind one address, failures counted by one hold up the
    other. A second process starts with an empty memory cache; the count is in Redis."""
    now = 1_000_000.0
    for _ in range(signin.FREE_FAILURES):
        signin.signin_failed("u", "a", now)
    cache.clear()  # what the other process's memory holds
    assert signin.signin_wait_s("u", "a", now) == 30


def test_without_redis_the_throttle_still_counts(settings) -> None:
    """AD7: a Redis that does not answer never opens the door nor locks everyone out."""
    settings.REDIS_STATE_URL = "unix:///nonexistent/diego-web-redis.sock"
    now = 1_000_000.0
    for _ in range(signin.FREE_FAILURES):
        assert signin.signin_wait_s("u", "a", now) == 0
        signin.signin_failed("u", "a", now)
    assert signin.signin_wait_s("u", "a", now) == 30
    signin.signin_succeeded("u", "a")
    assert signin.signin_wait_s("u", "a", now) == 0
