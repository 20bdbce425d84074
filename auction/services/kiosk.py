"""Kiosk links (dashboard.md C6, AD9): issue, check and revoke the wall screen's tokens.

A token is signed with the project's secret (salt ``diego-web.kiosk``) and names a
``KioskToken`` row; the row holds the expiry and the revocation, so one link can be cut
off without rotating the secret key (which would sign every operator out too). The
present page and ``manage.py kiosk_link`` both call these functions.
"""

from __future__ import annotations

import datetime
import logging
import secrets
import time

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.core import signing
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from auction.bbs.validation import LIMITS, out_of_range
from auction.models import KioskToken
from auction.models.tokens import KIOSK_TOKEN_DAYS

log = logging.getLogger(__name__)

SALT = "diego-web.kiosk"
# A signature dated later than now plus this much is refused: clocks drift a little, but
# a date from the future must not buy a token a longer life.
CLOCK_SKEW_S = 60


class KioskLinkError(ValueError):
    """A one-line reason a kiosk link cannot be issued or revoked."""


def kiosk_token_issue(days: int = KIOSK_TOKEN_DAYS, world: str | None = None, note: str = "") -> str:
    """A new kiosk token valid for ``days`` days (1…3650)."""
    if out_of_range("kiosk_days", days):
        limit = LIMITS["kiosk_days"]
        raise KioskLinkError(f"days must be a whole number from {limit.minimum:.0f} to {limit.maximum:.0f}")
    row = KioskToken.objects.create(
        key=secrets.token_hex(16), world=world or settings.DIEGO_WORLD, note=note[:100],
        expires=timezone.now() + datetime.timedelta(days=days))
    return _sign(row)


def _sign(row: KioskToken) -> str:
    return signing.dumps({"world": row.world, "scope": "read", "key": row.key}, salt=SALT)


def kiosk_token_current(min_days_left: int = 1) -> str:
    """A token for this world's newest live link with at least ``min_days_left`` days to
    run, issuing one only when there is none: a page that shows the link on every visit
    (the present page) names one row, not a new row per visit."""
    row = (KioskToken.objects
           .filter(world=settings.DIEGO_WORLD, revoked__isnull=True,
                   expires__gt=timezone.now() + datetime.timedelta(days=min_days_left))
           .order_by("-created").first())
    return _sign(row) if row is not None else kiosk_token_issue()


def _signed_key(token: str) -> str | None:
    """The row key when the signature holds, the date is not in the future and the token
    is a read token for this world; None otherwise."""
    signer = signing.TimestampSigner(salt=SALT)
    try:
        # Signer.unsign checks the signature and leaves "payload:timestamp"; Django's own
        # max_age check only refuses old dates, so the timestamp is checked here.
        stamped = signing.Signer.unsign(signer, token)
        issued = signing.b62_decode(stamped.rsplit(signer.sep, 1)[1])
        data = signing.loads(token, salt=SALT)
    except (signing.BadSignature, ValueError, IndexError, UnicodeError):
        return None
    if issued > time.time() + CLOCK_SKEW_S or not isinstance(data, dict):
        return None
    key = data.get("key")
    if data.get("scope") != "read" or data.get("world") != settings.DIEGO_WORLD or not isinstance(key, str):
        return None
    return key


def kiosk_token_valid(token: str) -> bool:
    """True for a link issued here, unexpired and not revoked (dashboard.md AD9)."""
    return kiosk_token_key(token) is not None


def kiosk_token_key(token: str) -> str | None:
    """The row key of a valid link (``kiosk_token_valid``), else None: a kiosk's socket
    listens for its own link's revocation under it."""
    key = _signed_key(token)
    if key is None:
        return None
    live = KioskToken.objects.filter(key=key, revoked__isnull=True, expires__gt=timezone.now()).exists()
    return key if live else None


def kiosk_group(key: str) -> str:
    """The channel-layer group of the sockets one link opened (dashboard.md AD9)."""
    return f"kiosk.{settings.DIEGO_WORLD}.{key}"[:99]


def _close_sockets(keys: list[str]) -> None:
    """After the revocation commits, every socket its links opened is closed: a wall
    screen left open must not stream on (it then loads the refused page)."""
    if not keys:
        return

    def close() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        for key in keys:
            try:
                async_to_sync(layer.group_send)(kiosk_group(key), {"type": "kiosk.revoked"})
            except Exception as exc:  # noqa: BLE001 - the revocation holds; the socket's next connect is refused
                log.warning("kiosk: closing the sockets of a revoked link failed (%s)", exc)

    transaction.on_commit(close)


def revoke_kiosk_tokens(token: str | None = None) -> int:
    """Revoke one link (by its token, or the first characters of its key as
    ``kiosk_link --list`` shows them), or every live link when ``token`` is None.
    Returns how many were revoked."""
    live = KioskToken.objects.filter(revoked__isnull=True, world=settings.DIEGO_WORLD)
    if token is not None:
        key = _signed_key(token)
        if key is not None:
            live = live.filter(key=key)
        elif len(token) >= 6 and all(c in "0123456789abcdef" for c in token):
            live = live.filter(key__startswith=token)
        else:
            raise KioskLinkError("not a kiosk link of this world, nor the start of a link's key")
    return _revoke(live)


def kiosk_links_revoke(keys: list[str]) -> int:
    """Revoke the live links with these row keys (the admin's action)."""
    return _revoke(KioskToken.objects.filter(key__in=keys, revoked__isnull=True))


def _revoke(live: QuerySet[KioskToken]) -> int:
    with transaction.atomic():
        keys = list(live.values_list("key", flat=True))
        revoked = KioskToken.objects.filter(key__in=keys, revoked__isnull=True).update(revoked=timezone.now())
        _close_sockets(keys)
    return revoked


def kiosk_links() -> list[KioskToken]:
    """This world's links, newest first (for ``kiosk_link --list`` and the present page)."""
    return list(KioskToken.objects.filter(world=settings.DIEGO_WORLD))
