"""Publishing to the channel layer, always after the transaction commits.

Services are the only writers; they call ``publish_after_commit`` so a browser never
sees a change that was rolled back (zulip's ``send_event_on_commit``). The database is
the truth and the layer only notifies, so a Redis outage loses a frame, never data:
send errors are logged, not raised into the service.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)


_suppressed = False


@contextmanager
def suppressed() -> Iterator[None]:
    """No frames at all: for set-up commands that run before any server or browser."""
    global _suppressed
    previous, _suppressed = _suppressed, True
    try:
        yield
    finally:
        _suppressed = previous


def send_now(group_name: str, message: dict[str, Any]) -> bool:
    if _suppressed:
        return False
    layer = get_channel_layer()
    if layer is None:
        return False
    try:
        async_to_sync(layer.group_send)(group_name, message)
    except Exception as exc:  # noqa: BLE001 - a lost frame must not fail the write that caused it
        log.warning("live publish to %s failed: %s", group_name, exc)
        return False
    return True


def publish_after_commit(group_name: str, message: dict[str, Any]) -> None:
    transaction.on_commit(lambda: send_now(group_name, message))
