"""One REDIS_URL, every role's address (diego_web/redis_urls.py).

The URL's database number is the base: broker +0, results +1, Channels +2, locks and
live state +3. User name, password, TLS and the socket path reach every role, each
spelled as its client (redis-py, kombu, Celery's result backend) reads it; checked here
with those clients' own parsers, in settings, and against the bundled Redis.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from kombu.utils.url import parse_url as kombu_parse
from kombu.utils.url import url_to_parts
from redis.connection import parse_url as redis_py_parse

from diego_web.redis_urls import DB_BROKER, DB_CHANNELS, DB_RESULTS, DB_STATE, RedisTarget, redact

ROOT = Path(__file__).resolve().parent.parent.parent
ROLES = (DB_BROKER, DB_RESULTS, DB_CHANNELS, DB_STATE)


def _celery_backend(url: str) -> dict:
    """What Celery's result backend makes of a URL (it connects lazily): by_url picks the
    class and strips ``redis+`` from ``redis+socket://`` as Celery does."""
    from celery import Celery
    from celery.app.backends import by_url

    backend, stripped = by_url(url)
    return backend(app=Celery(set_as_current=False), url=stripped).connparams


def test_the_bundled_default_is_unchanged() -> None:
    unix = RedisTarget.parse("unix:///tmp/r.sock")
    assert [unix.redis_py(r) for r in ROLES] == [f"unix:///tmp/r.sock?db={n}" for n in range(4)]
    assert unix.celery(DB_BROKER) == "redis+socket:///tmp/r.sock?virtual_host=0"
    assert unix.celery_backend(DB_RESULTS) == "redis+socket:///tmp/r.sock?db=1"
    assert unix.channels_host(DB_CHANNELS) == {"address": "unix:///tmp/r.sock?db=2"}


def test_user_password_and_database_reach_every_role() -> None:
    """The issue's case: redis://user:pass@host:6379/5 lost its user and its 5."""
    target = RedisTarget.parse("redis://user:pass@host:6379/5")
    for role in ROLES:
        parsed = redis_py_parse(target.redis_py(role))
        assert (parsed["username"], parsed["password"], parsed["host"], parsed["port"],
                parsed["db"]) == ("user", "pass", "host", 6379, 5 + role)
    broker = kombu_parse(target.celery(DB_BROKER))
    assert (broker["userid"], broker["password"], broker["virtual_host"]) == ("user", "pass", "5")
    backend = _celery_backend(target.celery_backend(DB_RESULTS))
    assert (backend["username"], backend["password"], backend["db"]) == ("user", "pass", 6)
    assert target.channels_host(DB_CHANNELS) == {"address": "redis://user:pass@host:6379/7"}
    assert redis_py_parse(target.redis_py(DB_STATE))["db"] == 8


def test_no_database_means_base_0_and_a_query_db_wins() -> None:
    assert RedisTarget.parse("redis://10.0.0.5:6380").redis_py(DB_STATE) == "redis://10.0.0.5:6380/3"
    assert RedisTarget.parse("redis://h:1/2?db=7").db == 7  # as redis-py reads it
    assert RedisTarget.parse("redis://:pw@10.0.0.5:6380/0").redis_py(3) == "redis://:pw@10.0.0.5:6380/3"


def test_rediss_keeps_tls_and_tells_celery_the_certificate_rule() -> None:
    target = RedisTarget.parse("rediss://default:s3cret@cache.example:6380/4")
    assert target.redis_py(DB_STATE) == "rediss://default:s3cret@cache.example:6380/7"
    assert redis_py_parse(target.redis_py(DB_STATE))["connection_class"] is redis.SSLConnection
    import ssl

    broker = kombu_parse(target.celery(DB_BROKER))
    assert broker["transport"] == "rediss" and broker["ssl"] == {"ssl_cert_reqs": ssl.CERT_REQUIRED}
    backend = _celery_backend(target.celery_backend(DB_RESULTS))
    assert backend["ssl_cert_reqs"] == ssl.CERT_REQUIRED and backend["db"] == 5
    assert backend["connection_class"].__name__ == "SSLConnection"
    given = RedisTarget.parse("rediss://h:6380/0?ssl_cert_reqs=none&ssl_ca_certs=/ca.pem&protocol=3")
    assert given.celery(DB_BROKER) == "rediss://h:6380/0?ssl_cert_reqs=none&ssl_ca_certs=%2Fca.pem"
    assert redis_py_parse(given.redis_py(DB_CHANNELS))["protocol"] == 3  # redis-py gets them all


def test_unix_socket_with_database_and_credentials() -> None:
    for url in ("unix://diego:pw@/tmp/r.sock?db=4", "unix:///tmp/r.sock?db=4&username=diego&password=pw"):
        target = RedisTarget.parse(url)
        for role in ROLES:
            parsed = redis_py_parse(target.redis_py(role))
            assert (parsed["path"], parsed["username"], parsed["password"], parsed["db"]) == (
                "/tmp/r.sock", "diego", "pw", 4 + role)
        # kombu reads a socket URL's parts itself (transport redis, host socket://…)
        host = target.celery(DB_BROKER).removeprefix("redis+")
        parts = url_to_parts(host)
        assert (parts.scheme, parts.username, parts.password, parts.path, parts.query) == (
            "socket", "diego", "pw", "tmp/r.sock", {"virtual_host": "4"})
        backend = _celery_backend(target.celery_backend(DB_RESULTS))
        assert (backend["path"], backend["username"], backend["password"], backend["db"]) == (
            "/tmp/r.sock", "diego", "pw", 5)


def test_awkward_passwords_and_ipv6_round_trip() -> None:
    target = RedisTarget.parse("redis://us%40er:p%40ss%3Aw%2Frd@[::1]:7000/1")
    assert (target.username, target.password, target.host) == ("us@er", "p@ss:w/rd", "::1")
    parsed = redis_py_parse(target.redis_py(DB_STATE))
    assert (parsed["username"], parsed["password"], parsed["host"], parsed["db"]) == (
        "us@er", "p@ss:w/rd", "::1", 4)
    broker = kombu_parse(target.celery(DB_BROKER))
    assert (broker["userid"], broker["password"], broker["hostname"]) == ("us@er", "p@ss:w/rd", "::1")


@pytest.mark.parametrize(("url", "words"), [
    ("http://x", "expected redis://"),
    ("redis://h:6379/x", "the database 'x' is not a number"),
    ("redis://h:6379/13", "use at most 12"),
    ("unix:///s.sock?db=-1", "is not a number"),
    ("unix://", "needs a socket path"),
    ("redis://:hunter2@h:port/0", "the port is not a number"),
])
def test_bad_urls_are_refused_without_showing_the_password(url: str, words: str) -> None:
    with pytest.raises(ValueError, match=words) as refused:
        RedisTarget.parse(url)
    assert "hunter2" not in str(refused.value)
    assert redact("redis://u:hunter2@h/0?password=hunter2") == "redis://u:***@h/0?password=%2A%2A%2A"


def _settings_under(env: dict[str, str]) -> dict:
    code = ("import json, django; django.setup(); from django.conf import settings as s; "
            "print(json.dumps([s.CELERY_BROKER_URL, s.CELERY_RESULT_BACKEND, "
            "s.CHANNEL_LAYERS['default']['CONFIG']['hosts'][0]['address'], "
            "s.CHANNEL_LAYERS['otto']['CONFIG']['hosts'][0]['address'], s.REDIS_STATE_URL, "
            "s.REDIS_EMBEDDED]))")
    base = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**base, "DJANGO_SETTINGS_MODULE": "diego_web.settings", **env},
                         check=True, timeout=60)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_settings_give_each_role_its_database() -> None:
    given = _settings_under({"REDIS_URL": "redis://user:pass@127.0.0.1:6379/5"})
    assert given == ["redis://user:pass@127.0.0.1:6379/5", "redis://user:pass@127.0.0.1:6379/6",
                     "redis://user:pass@127.0.0.1:6379/7", "redis://user:pass@127.0.0.1:6379/7",
                     "redis://user:pass@127.0.0.1:6379/8", False]
    bundled = _settings_under({"DIEGO_VAR_DIR": "/tmp/dw-var"})
    assert bundled == ["redis+socket:///tmp/dw-var/redis.sock?virtual_host=0",
                       "redis+socket:///tmp/dw-var/redis.sock?db=1",
                       "unix:///tmp/dw-var/redis.sock?db=2", "unix:///tmp/dw-var/redis.sock?db=2",
                       "unix:///tmp/dw-var/redis.sock?db=3", True]


def test_an_acl_user_on_the_bundled_redis_reaches_its_databases(redis_socket: str) -> None:
    """End to end: a user and password, base 6, through redis-py and kombu (Celery's broker)."""
    from kombu import Connection

    admin = redis.Redis(unix_socket_path=redis_socket)
    admin.execute_command("ACL", "SETUSER", "dw-test", "on", ">pw for tests", "~*", "&*", "+@all")
    try:
        target = RedisTarget.parse(f"unix://dw-test:pw%20for%20tests@{redis_socket}?db=6")
        state = redis.Redis.from_url(target.redis_py(DB_STATE))
        state.set("dw-test:key", "in the state database")
        assert redis.Redis(unix_socket_path=redis_socket, db=9).get("dw-test:key") == b"in the state database"
        assert redis.Redis(unix_socket_path=redis_socket, db=3).get("dw-test:key") is None
        with Connection(target.celery(DB_BROKER)) as broker:
            client = broker.default_channel.client
            assert client.ping() and client.connection_pool.connection_kwargs["db"] == 6
            assert client.acl_whoami() == "dw-test"
        with pytest.raises(redis.AuthenticationError):
            redis.Redis.from_url(f"unix://dw-test:wrong@{redis_socket}?db=6").ping()
    finally:
        redis.Redis(unix_socket_path=redis_socket, db=9).delete("dw-test:key")
        admin.execute_command("ACL", "DELUSER", "dw-test")
