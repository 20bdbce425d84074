"""Per-operator API tokens (issue 5): scripts authenticate with ``Authorization: Bearer``;
and the kiosk links (dashboard.md C6.1), which expire and can be revoked."""

from __future__ import annotations

import datetime
import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

TOKEN_PREFIX = "dw_"


def token_digest(raw: str) -> str:
    """Only the digest is stored: a leaked database does not leak usable tokens."""
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What uses it, e.g. 'ci' or 'laptop'.")
    prefix = models.CharField(max_length=16, editable=False,
                              help_text="The first characters, to tell tokens apart.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True, editable=False)
    revoked = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created"]
        verbose_name = "API token"
        permissions = [
            ("control", "Can steer the cluster: API writes and the dashboard's controls"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(cls, user: models.Model, name: str) -> tuple[ApiToken, str]:
        """A new token; the raw value is returned once and never stored."""
        raw = TOKEN_PREFIX + secrets.token_urlsafe(30)
        token = cls.objects.create(user=user, name=name, prefix=raw[:10], digest=token_digest(raw))
        return token, raw


def kiosk_token_default_expiry() -> datetime.datetime:
    return timezone.now() + datetime.timedelta(days=KIOSK_TOKEN_DAYS)


KIOSK_TOKEN_DAYS = 30


class KioskToken(models.Model):
    """One issued kiosk link (dashboard.md C6.1): the signed token names this row, so a
    link can expire and be revoked without changing the secret key."""

    key = models.CharField(max_length=32, unique=True, editable=False)
    world = models.CharField(max_length=64)
    note = models.CharField(max_length=100, blank=True, default="")
    created = models.DateTimeField(default=timezone.now, editable=False)
    expires = models.DateTimeField(default=kiosk_token_default_expiry)
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name = "kiosk link"

    def __str__(self) -> str:
        return f"kiosk {self.key[:8]}… ({self.world})"
