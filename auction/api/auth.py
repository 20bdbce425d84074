"""Who may call the API (issue 5): reads are public on the demo, writes need an operator.

An operator is whoever ``auction.permissions.is_operator`` admits (the
``auction.control`` permission; superusers have it, staff only when granted it),
authenticated by a session (the browser; CSRF checked here) or by a per-operator token
(scripts: ``Authorization: Bearer dw_…``, created in the admin or with
``manage.py api_token``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.middleware.csrf import CsrfViewMiddleware
from django.utils import timezone

from auction.models import ApiToken
from auction.models.tokens import token_digest
from auction.permissions import is_operator
from auction.services.errors import BBSError


class Unauthorized(BBSError):
    type = "Unauthorized"
    status = 401


class Forbidden(BBSError):
    type = "Unauthorized"
    status = 403


class _CsrfCheck(CsrfViewMiddleware):
    def _reject(self, request: HttpRequest, reason: str) -> str:  # type: ignore[override]
        return reason


def _token_user(header: str) -> Any:
    scheme, _, raw = header.strip().partition(" ")
    raw = raw.strip()
    if scheme.lower() != "bearer" or not raw:
        raise Unauthorized("malformed Authorization header; send: Authorization: Bearer <token>")
    token = (ApiToken.objects.select_related("user")
             .filter(digest=token_digest(raw), revoked=False).first())
    if token is None or not token.user.is_active:
        raise Unauthorized("invalid or revoked API token")
    now = timezone.now()
    # Recording every use would turn each read into a write; a minute's precision is enough.
    if token.last_used is None or now - token.last_used > timedelta(minutes=1):
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
    return token.user


def caller(request: HttpRequest) -> tuple[Any, str]:
    """The authenticated user and how (``token`` / ``session``), or (None, "")."""
    header = request.headers.get("Authorization")
    if header:
        return _token_user(header), "token"
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return user, "session"
    return None, ""


def operator(request: HttpRequest) -> Any:
    """The user allowed to write, or the BBS-style refusal."""
    user, how = caller(request)
    if user is None:
        raise Unauthorized("authentication required: log in, or send an API token")
    if how == "session":
        reason = _CsrfCheck(lambda r: None).process_view(request, None, (), {})
        if reason:
            raise Forbidden(f"CSRF check failed: {reason}")
    if not is_operator(user):
        raise Forbidden(f"user {user.get_username()} may not change the cluster "
                        "(needs the control permission)")
    return user


def reader(request: HttpRequest) -> None:
    """Reads are public on the demo (DIEGO_API_PUBLIC_READS); else any logged-in user."""
    if getattr(settings, "DIEGO_API_PUBLIC_READS", True):
        return
    user, _ = caller(request)
    if user is None:
        raise Unauthorized("authentication required: log in, or send an API token")
