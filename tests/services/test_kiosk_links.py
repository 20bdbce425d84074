"""Kiosk links expire, refuse dates from the future and can be revoked (dashboard.md C6, AD9)."""

from __future__ import annotations

import datetime
import time
from io import StringIO

import pytest
from django.core import signing
from django.core.management import CommandError, call_command
from django.utils import timezone

from auction.models import KioskToken
from auction.services.kiosk import (
    SALT,
    KioskLinkError,
    kiosk_token_issue,
    kiosk_token_valid,
    revoke_kiosk_tokens,
)

pytestmark = pytest.mark.django_db


def test_a_new_link_is_valid_for_30_days_by_default() -> None:
    token = kiosk_token_issue()
    assert kiosk_token_valid(token)
    row = KioskToken.objects.get()
    life = row.expires - row.created
    assert datetime.timedelta(days=29, hours=23) < life <= datetime.timedelta(days=30, seconds=1)


def test_an_expired_link_is_refused() -> None:
    token = kiosk_token_issue(days=1)
    KioskToken.objects.update(expires=timezone.now() - datetime.timedelta(seconds=1))
    assert not kiosk_token_valid(token)


def test_a_signature_dated_in_the_future_is_refused(monkeypatch) -> None:
    """Signed with the right key but dated a day ahead: refused, whatever the row says."""
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 86400)
    token = kiosk_token_issue()
    monkeypatch.setattr(time, "time", real)
    assert KioskToken.objects.filter(revoked__isnull=True).exists()
    assert not kiosk_token_valid(token)


def test_altered_foreign_and_rowless_tokens_are_refused(settings) -> None:
    token = kiosk_token_issue()
    assert not kiosk_token_valid(token + "x")
    assert not kiosk_token_valid("")
    assert not kiosk_token_valid("\x00\ud800")
    # The old signed shape with no row behind it (what the repository's key could forge).
    assert not kiosk_token_valid(signing.dumps({"world": "main", "scope": "read"}, salt=SALT))
    settings.DIEGO_WORLD = "other"
    assert not kiosk_token_valid(token)


def test_revoke_one_by_token_or_key_and_revoke_all() -> None:
    first, second, third = (kiosk_token_issue() for _ in range(3))
    assert revoke_kiosk_tokens(first) == 1
    assert not kiosk_token_valid(first) and kiosk_token_valid(second)
    key = KioskToken.objects.filter(revoked__isnull=True).order_by("created").first().key
    assert revoke_kiosk_tokens(key[:12]) == 1
    assert revoke_kiosk_tokens() == 1
    assert not any(kiosk_token_valid(t) for t in (first, second, third))
    with pytest.raises(KioskLinkError):
        revoke_kiosk_tokens("nonsense!")


def test_days_outside_the_limit_are_a_clear_error() -> None:
    for days in (0, -1, 3651, 2**31):
        with pytest.raises(KioskLinkError, match="days must be a whole number from 1 to 3650"):
            kiosk_token_issue(days=days)
    assert not KioskToken.objects.exists()


def test_the_command_issues_lists_and_revokes(client) -> None:
    out, err = StringIO(), StringIO()
    call_command("kiosk_link", "--days", "7", "--note", "lobby", stdout=out, stderr=err)
    link = out.getvalue().strip()
    assert "valid for 7 days" in err.getvalue()
    path = link.split("/", 3)[3]
    assert client.get("/" + path).status_code == 200
    listed = StringIO()
    call_command("kiosk_link", "--list", stdout=listed)
    assert "valid until" in listed.getvalue() and "lobby" in listed.getvalue()
    done = StringIO()
    call_command("kiosk_link", "--revoke", link, stdout=done)
    assert "revoked 1" in done.getvalue()
    denied = client.get("/" + path)
    assert denied.status_code == 403 and b"revoked" in denied.content
    with pytest.raises(CommandError, match="no live kiosk link"):
        call_command("kiosk_link", "--revoke", link)
    with pytest.raises(CommandError, match="days must be"):
        call_command("kiosk_link", "--days", "0")
    call_command("kiosk_link", stdout=StringIO(), stderr=StringIO())
    call_command("kiosk_link", "--revoke-all", stdout=done)
    assert not KioskToken.objects.filter(revoked__isnull=True).exists()


def test_the_current_link_is_reused_not_issued_per_visit() -> None:
    """A page showing the link on every visit (the present page) names one row (AD9)."""
    from auction.views.kiosk import kiosk_token

    first, second = kiosk_token(), kiosk_token()
    assert KioskToken.objects.count() == 1
    assert kiosk_token_valid(first) and kiosk_token_valid(second)
    revoke_kiosk_tokens()
    third = kiosk_token()
    assert KioskToken.objects.count() == 2 and kiosk_token_valid(third) and not kiosk_token_valid(first)


def test_the_admin_lists_links_and_revokes_them(admin_client) -> None:
    token = kiosk_token_issue(note="lobby")
    key = KioskToken.objects.get().key
    page = admin_client.get("/admin/auction/kiosktoken/").content.decode()
    assert key[:12] in page and "lobby" in page
    response = admin_client.post("/admin/auction/kiosktoken/", {
        "action": "revoke", "_selected_action": [KioskToken.objects.get().pk]})
    assert response.status_code == 302
    assert not kiosk_token_valid(token)
