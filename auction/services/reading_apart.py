"""An auction's read outside the write lock, on SQLite (issue 14 point 1).

SQLite has one writer at a time, and its transactions here are ``IMMEDIATE``: a round
read and run inside its writing transaction held the lock through the read and the
engine, three seconds of a 100,000-item flood, while a clock control, a domain bump or
an admin edit waited. WAL gives a reader a consistent snapshot without any lock, so the
round is read in a ``DEFERRED`` transaction and run after it; the writing transaction
then applies the answer only if no table the round reads was written in between.

"Written in between" is one counter that triggers bump on every insert, update and
delete of those tables (migration 0017): nothing that writes them, the admin or a shell
included, can slip past. Otherwise the round is read and run again under the lock, as
before. PostgreSQL does not need this: its round reads the rows FOR UPDATE in the
writing transaction, and other writers only wait for those rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction

COUNTER_SQL = "SELECT generation FROM auction_round_inputs WHERE id = 1"


def round_inputs_generation() -> int:
    """How many writes the round's tables have seen (SQLite only)."""
    with connection.cursor() as cursor:
        cursor.execute(COUNTER_SQL)
        row = cursor.fetchone()
    return 0 if row is None else int(row[0])


@contextmanager
def snapshot_read() -> Iterator[int | None]:
    """Reads in one snapshot, holding no write lock; yields the counter as the snapshot
    saw it, or None where reading apart does not apply (not SQLite, or inside a
    transaction already: its own writes must be seen, and it may hold the lock)."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        yield None
        return
    connection.ensure_connection()  # connecting sets the mode from the settings
    mode = connection.transaction_mode
    connection.transaction_mode = "DEFERRED"
    try:
        with transaction.atomic():
            connection.transaction_mode = mode  # only this BEGIN is deferred
            yield round_inputs_generation()
    finally:
        connection.transaction_mode = mode
