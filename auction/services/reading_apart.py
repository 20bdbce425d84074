"""An auction's read outside the write lock, on SQLite (issue 14 point 1).

SQLite has one writer at a time, and its transactions here are ``IMMEDIATE``: a round
read and run inside its writing transaction held the lock through the read and the
engine, three seconds of a 100,000-item flood, while a clock control, a domain bump or
an admin edit waited. WAL gives a reader a consistent snapshot without any lock, so the
round is read in a ``DEFERRED`` transaction and run after it; the writing transaction
then applies the answer only if no table the round reads was written in between.

"Written in between" is one counter (migration 0017) that every write statement to one
of those tables bumps first, in the same transaction: ``count_round_writes`` sits under
every statement Django runs on a SQLite connection, so no writer (a service, the admin,
a shell) slips past it. Row triggers did the same at 9 us a row, a second on a
100,000-instance scale-up; this costs one small UPDATE a statement. Otherwise the round
is read and run again under the lock, as before. PostgreSQL does not need this: its
round reads the rows FOR UPDATE in the writing transaction, and other writers only wait
for those rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction

#: What ``DbStore.round_input`` reads (tests/services/test_reading_apart.py checks it).
#: The clock's row, written every tick, holds one input, the seed: the mark carries it.
ROUND_TABLES = frozenset({"auction_actuallrp", "auction_pendingwork", "auction_cell", "auction_zone",
                          "auction_task", "auction_desiredlrp", "auction_auctionsettings"})
_BUMP = "UPDATE auction_round_inputs SET generation = generation + 1 WHERE id = 1"
_MARK = ("SELECT r.generation, (SELECT c.seed FROM auction_simclock c WHERE c.id = 1) "
         "FROM auction_round_inputs r WHERE r.id = 1")
# The table a statement writes: Django's and ``bulk``'s INSERT, UPDATE (after a WITH list
# too) and DELETE name it quoted, right after the keyword.
_WRITES = re.compile(r'\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)', re.IGNORECASE)


def count_round_writes(execute: Callable[..., Any], sql: str, params: Any, many: bool,
                       context: dict[str, Any]) -> Any:
    """A ``connection.execute_wrappers`` entry: a statement that writes a table the round
    reads bumps the counter first (first: in autocommit the write may be its own
    transaction; a round that validates between the two only sees the bump)."""
    if any(table in ROUND_TABLES for table in _WRITES.findall(sql)):
        try:
            context["connection"].connection.execute(_BUMP)
        except Exception as error:  # before migration 0017 nothing reads apart
            if "no such table" not in str(error):
                raise
    return execute(sql, params, many, context)


def install(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created``: every SQLite connection counts its round writes."""
    if connection.vendor == "sqlite" and count_round_writes not in connection.execute_wrappers:
        connection.execute_wrappers.append(count_round_writes)


def round_inputs_mark() -> tuple[int, int]:
    """(writes the round's tables have seen, the clock's seed): SQLite only."""
    with connection.cursor() as cursor:
        cursor.execute(_MARK)
        row = cursor.fetchone()
    return (0, 0) if row is None else (int(row[0]), int(row[1] or 0))


@contextmanager
def snapshot_read() -> Iterator[tuple[int, int] | None]:
    """Reads in one snapshot, holding no write lock; yields the mark as the snapshot saw
    it, or None where reading apart does not apply (not SQLite, or inside a transaction
    already: its own writes must be seen, and it may hold the lock)."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        yield None
        return
    connection.ensure_connection()  # connecting sets the mode from the settings
    mode = connection.transaction_mode
    connection.transaction_mode = "DEFERRED"
    try:
        with transaction.atomic():
            connection.transaction_mode = mode  # only this BEGIN is deferred
            yield round_inputs_mark()
    finally:
        connection.transaction_mode = mode
