"""Otto integration tests talk to the real channels_redis layer on the private Redis."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def otto_bus(redis_socket: str, settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Real Redis for both layers (the dashboard's and Otto's), flushed per test."""
    import redis
    from channels.layers import channel_layers

    for db in (5, 6):
        redis.Redis(unix_socket_path=redis_socket, db=db).flushdb()
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                    "CONFIG": {"hosts": [{"address": f"unix://{redis_socket}?db=5"}]}},
        "otto": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                 "CONFIG": {"hosts": [{"address": f"unix://{redis_socket}?db=6", "socket_timeout": 30}],
                            "expiry": 60,
                            "channel_capacity": {"otto.*.tasks.bids": 1000, "otto.*.inbox.*": 2000}}},
    }
    redis.Redis(unix_socket_path=redis_socket, db=3).delete("diego:main:otto-auctioneer")
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()
