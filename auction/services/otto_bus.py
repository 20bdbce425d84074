"""The Otto event bus (otto.md 1-2): the Channels layer alias ``otto`` over Redis.

List-backed queues (channels_redis core layer), not Pub/Sub: a message sent while
nobody listens waits until its expiry. Names are ``otto.<world>.<name>``.
"""

from __future__ import annotations

from channels.layers import get_channel_layer
from django.conf import settings

from auction.otto import messages

FOR_AUCTION, AUCTION, BIDS = "tasks.for_auction", "tasks.auction", "tasks.bids"
STARTED, FINISHED = "tasks.started", "tasks.finished"
LAYER_ALIAS = "otto"


def world() -> str:
    return settings.DIEGO_WORLD


def name(channel: str) -> str:
    return messages.channel(world(), channel)


def inbox(client_id: str) -> str:
    return messages.inbox(world(), client_id)


def otto_layer():  # type: ignore[no-untyped-def]
    """The ``otto`` layer when configured, else the default one (tests with one layer)."""
    alias = LAYER_ALIAS if LAYER_ALIAS in getattr(settings, "CHANNEL_LAYERS", {}) else "default"
    return get_channel_layer(alias)


def next_deadline_key() -> str:
    return name("next_deadline")
