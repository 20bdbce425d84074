"""Block until Redis answers (so the worker and beat do not log connection errors at start).

Honcho starts every process at once; the bundled Redis needs a moment to create its
socket. Exits 1 with a message naming the URL if Redis is not up within the timeout.
"""

from __future__ import annotations

import os
import sys
import time

import redis

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "diego_web.settings")


def main(timeout: float = 30.0) -> int:
    from django.conf import settings

    from diego_web.redis_urls import redact

    client = redis.Redis.from_url(settings.REDIS_STATE_URL, socket_connect_timeout=1)
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.ping()
            return 0
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            if time.monotonic() > deadline:
                sys.stderr.write(f"Redis at {redact(settings.REDIS_URL)} did not answer within {timeout:.0f} s\n")
                return 1
            time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main())
