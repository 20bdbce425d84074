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


def test_a_forwarded_header_from_a_client_is_ignored(operator, settings) -> None:
    """AD7: with no trusted proxy, X-Forwarded-For is the client's own words: rotating it
    gains no guesses, and the right password still waits after the free failures."""
    settings.TRUSTED_PROXIES = ()
    client = Client(REMOTE_ADDR="10.0.1.1")
    for n in range(signin.FREE_FAILURES):
        client.post("/login/", {"username": "olga", "password": "wrong"}, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
    held = client.post("/login/", {"username": "olga", "password": "right-password-1"},
                       HTTP_X_FORWARDED_FOR="198.51.100.200")
    assert held.status_code == 200 and b"for this username from your address" in held.content


def test_a_trusted_proxy_names_the_client(operator, settings) -> None:
    """AD7: behind a trusted proxy the header is read from the right, past trusted hops,
    to the first address they do not vouch for; what the client wrote before it is not it."""
    import ipaddress

    from auction.views.auth import client_address

    settings.TRUSTED_PROXIES = (ipaddress.ip_network("10.9.0.0/16"),)
    request = Client().get("/login/").wsgi_request
    request.META.update(REMOTE_ADDR="10.9.0.5", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7, 10.9.0.2")
    assert client_address(request) == "203.0.113.7"
    request.META.update(REMOTE_ADDR="192.0.2.1")  # not a proxy: its header is ignored
    assert client_address(request) == "192.0.2.1"
    request.META.update(REMOTE_ADDR="10.9.0.5", HTTP_X_FORWARDED_FOR="")
    assert client_address(request) == "10.9.0.5"


def test_guesses_spread_over_addresses_meet_the_username_count(operator) -> None:
    """AD7: per username from any address: after 10 failures from 10 addresses even the
    right password from an eleventh waits, and says so."""
    for n in range(signin.USERNAME_FREE_FAILURES):
        Client(REMOTE_ADDR=f"10.0.2.{n}").post("/login/", {"username": "olga", "password": "wrong"})
    held = Client(REMOTE_ADDR="10.0.2.99").post("/login/", {"username": "olga", "password": "right-password-1"})
    assert held.status_code == 200
    assert b"Too many failed sign-ins for this username: try again in 30 s." in held.content


def test_spraying_usernames_from_one_address_meets_the_address_count() -> None:
    """AD7: per address for any username: 20 usernames tried once each, then the 21st
    waits; another address is not held up, and a success does not clear the address."""
    now = 1_000_000.0
    for n in range(signin.ADDRESS_FREE_FAILURES):
        assert signin.signin_wait_s(f"user{n}", "a", now) == 0
        signin.signin_failed(f"user{n}", "a", now)
    held = signin.signin_held("someone-else", "a", now)
    assert held is not None and held.reason == "address" and held.wait_s == 30
    assert held.message == "Too many failed sign-ins from your address: try again in 30 s."
    assert signin.signin_wait_s("someone-else", "b", now) == 0
    signin.signin_succeeded("user0", "a")
    assert signin.signin_wait_s("someone-else", "a", now) == 30


def test_the_longest_wait_holds() -> None:
    now = 1_000_000.0
    for _ in range(signin.USERNAME_FREE_FAILURES + 1):
        signin.signin_failed("u", "a", now)
    held = signin.signin_held("u", "a", now)
    # pair: 11 failures, 6 past its 5 free -> 30 * 2**6, capped; username: 1 past its 10 -> 60
    assert held is not None and held.reason == "pair" and held.wait_s == signin.WAIT_CAP_S
    signin.signin_succeeded("u", "a")  # the pair and the username; the address keeps 11 of 20
    assert signin.signin_held("u", "a", now) is None
