"""Set-based writes of many rows, each with its own values.

Django's ``bulk_update`` writes ``SET f = CASE WHEN id = 1 THEN ... WHEN id = 2 ...``:
every row becomes a few expression objects to resolve and compile, and an auction that
fails 100,000 items spent most of its time there (issue 14; docs/performance.md).
``bulk_set`` sends the values as a ``VALUES`` list joined on the primary key instead, one
statement per batch, which SQLite (3.33+) and PostgreSQL both run as ``UPDATE ... FROM``.
``bulk_insert`` writes plain tuples as multi-row ``INSERT``s: no model instance per row
(``bulk_create`` spent seconds building and compiling 100,000 ActualLRPs and their start
requests, issue 14).

Neither takes model instances: ``bulk_set`` reads attributes of any object (``Values``
is the light one to use), ``bulk_insert`` a tuple per row. A value is adapted by its
field only where the driver cannot take it as it is (JSON, dates...).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.db import connections, models, router, transaction

BATCH = 1000
# Rows per INSERT: SQLite binds at most 32,766 parameters per statement (3.32+).
INSERT_PARAMS = 30_000
INSERT_ROWS = 2000

_PLAIN = (models.CharField, models.TextField, models.IntegerField, models.FloatField,
          models.BooleanField, models.ForeignKey)


class Values:
    """One row's new values for ``bulk_set``: ``Values(pk, field=value, ...)``."""

    def __init__(self, pk: Any, **values: Any) -> None:
        self.pk = pk
        self.__dict__.update(values)


def _adapter(field: Any, conn: Any) -> Callable[[Any], Any] | None:
    """How a value of ``field`` is sent, or None: as it is."""
    if isinstance(field, models.JSONField):
        # Text either way: SQLite stores it so, PostgreSQL casts it (``_slot``). An empty
        # list (a new row's ports, 100,000 of them in a scale-up) is one constant.
        encoder = field.encoder

        def dumps(value: Any) -> str | None:
            if value is None:
                return None
            if not value and isinstance(value, list | tuple):
                return "[]"
            return json.dumps(value, cls=encoder)

        return dumps
    if isinstance(field, _PLAIN):
        return None
    return lambda value: field.get_db_prep_save(value, conn)


def _slot(field: Any, conn: Any, type_name: str | None = None) -> str:
    # PostgreSQL types a VALUES column from its first row: name every type.
    if conn.vendor != "postgresql":
        return "%s"
    return f"CAST(%s AS {type_name or field.db_type(conn)})"


def bulk_set(model: Any, objs: Sequence[Any], fields: Sequence[str], batch_size: int = BATCH) -> None:
    """``UPDATE`` each of ``objs`` (by primary key) to its own values of ``fields``."""
    if not objs or not fields:
        return
    attnames = [model._meta.get_field(name).attname for name in fields]
    bulk_set_columns(model, fields, [obj.pk for obj in objs],
                     [[getattr(obj, name) for obj in objs] for name in attnames], batch_size)


def bulk_set_columns(model: Any, fields: Sequence[str], pks: Sequence[Any],
                     columns: Sequence[Sequence[Any]], batch_size: int = BATCH) -> None:
    """``bulk_set`` given by column: row ``i`` (key ``pks[i]``) gets ``columns[f][i]`` for
    each of ``fields`` (a caller that holds its values by column builds no object per row).

    A field every row gives the same value is set once as a constant, not sent per
    row: a flood's 100,000 failures all get the same placement error, and their queue
    entries differ only in their batch position. With no field left that varies, the
    rows are picked by key alone."""
    if not pks or not fields:
        return
    conn = connections[router.db_for_write(model)]
    meta = model._meta
    quote = conn.ops.quote_name
    pk = meta.pk
    constant: list[tuple[Any, Any]] = []
    varying: list[tuple[Any, Sequence[Any]]] = []
    for name, column in zip(fields, columns, strict=True):
        field = meta.get_field(name)
        fn = _adapter(field, conn)
        if fn is not None:
            column = [fn(value) for value in column]
        first = column[0]
        if first == first and column.count(first) == len(column):  # NaN varies
            constant.append((field, first))
        else:
            varying.append((field, column))
    table = quote(meta.db_table)
    key = f"{table}.{quote(pk.column)}"
    sets = [f"{quote(f.column)} = %s" for f, _ in constant]
    params = [value for _, value in constant]
    if not varying:
        _set_by_key(conn, table, key, sets, params, list(pks))
        return
    if conn.vendor == "postgresql":
        _copy_set(conn, meta, pk, constant, varying, pks)
        return
    row = "(" + ", ".join([_slot(pk, conn, pk.rel_db_type(conn))] + [_slot(f, conn) for f, _ in varying]) + ")"
    names = ", ".join(["row_pk"] + [f"v{i}" for i in range(len(varying))])
    sets += [f"{quote(f.column)} = v.v{i}" for i, (f, _) in enumerate(varying)]
    rows = list(zip(pks, *(values for _, values in varying), strict=True))
    with conn.cursor() as cursor:
        for start in range(0, len(rows), batch_size):
            chunk = rows[start:start + batch_size]
            cursor.execute(
                f"WITH v({names}) AS (VALUES {', '.join([row] * len(chunk))}) "
                f"UPDATE {table} SET {', '.join(sets)} FROM v WHERE {key} = v.row_pk",
                # SET comes after the VALUES list in the statement
                [value for values in chunk for value in values] + params)


def _keys_in(conn: Any, key: str, pks: Sequence[Any]) -> tuple[str, list[Any]]:
    """A condition picking the rows of ``pks`` in one statement, and its parameters:
    PostgreSQL takes the keys as one array, SQLite as one JSON array read by
    ``json_each`` (a chunked ``IN`` list cost Django's query building per chunk)."""
    if conn.vendor == "postgresql":
        if all(type(pk) is int for pk in pks):
            # One text literal: adapting a list of 100,000 ints cost psycopg 0.13 s a call.
            return f"{key} = ANY(%s::bigint[])", ["{" + ",".join(map(str, pks)) + "}"]
        return f"{key} = ANY(%s)", [list(pks)]
    return f"{key} IN (SELECT value FROM json_each(%s))", [json.dumps(list(pks))]


def bulk_read(model: Any, pks: Sequence[Any], fields: Sequence[str], *,
              for_update: bool = False) -> list[tuple[Any, ...]]:
    """(pk, *fields) of each row of ``pks`` that exists, in one statement (``FOR UPDATE``
    where the database has it)."""
    if not pks:
        return []
    conn = connections[router.db_for_write(model)]
    meta = model._meta
    quote = conn.ops.quote_name
    table = quote(meta.db_table)
    where, params = _keys_in(conn, f"{table}.{quote(meta.pk.column)}", pks)
    names = ", ".join([quote(meta.pk.column)] + [quote(meta.get_field(f).column) for f in fields])
    lock = " FOR UPDATE" if for_update and conn.features.has_select_for_update else ""
    with conn.cursor() as cursor:
        cursor.execute(f"SELECT {names} FROM {table} WHERE {where}{lock}", params)
        return [tuple(row) for row in cursor.fetchall()]


def bulk_delete(model: Any, pks: Sequence[Any]) -> None:
    """``DELETE`` the rows of ``pks`` in one statement (no signals, no cascade: for tables
    nothing refers to by a database constraint)."""
    if not pks:
        return
    conn = connections[router.db_for_write(model)]
    meta = model._meta
    quote = conn.ops.quote_name
    table = quote(meta.db_table)
    where, params = _keys_in(conn, f"{table}.{quote(meta.pk.column)}", pks)
    with conn.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table} WHERE {where}", params)


def _set_by_key(conn: Any, table: str, key: str, sets: list[str], params: list[Any], pks: list[Any]) -> None:
    """Every row of ``pks`` to the same values, in one statement: PostgreSQL takes the keys
    as one array, SQLite as one JSON array it reads back with ``json_each``."""
    with conn.cursor() as cursor:
        if conn.vendor in ("postgresql", "sqlite"):
            where, keys = _keys_in(conn, key, pks)
            cursor.execute(f"UPDATE {table} SET {', '.join(sets)} WHERE {where}", [*params, *keys])
        else:
            for start in range(0, len(pks), BATCH):
                chunk = pks[start:start + BATCH]
                cursor.execute(f"UPDATE {table} SET {', '.join(sets)} "
                               f"WHERE {key} IN ({', '.join(['%s'] * len(chunk))})", [*params, *chunk])


def _copy_set(conn: Any, meta: Any, pk: Any, constant: list[tuple[Any, Any]],
              varying: list[tuple[Any, Sequence[Any]]], pks: Sequence[Any]) -> None:
    """PostgreSQL: the varying values ``COPY``-ed into a temporary table, then one ``UPDATE
    ... FROM`` it (a ``VALUES`` list of 100,000 rows spent seconds in the driver's
    client-side query formatting)."""
    quote = conn.ops.quote_name
    table = quote(meta.db_table)
    temp = quote(f"bulk_set_{meta.db_table}")
    names = [quote(pk.column)] + [quote(f.column) for f, _ in varying]
    sets = ([f"{quote(f.column)} = %s" for f, _ in constant]
            + [f"{quote(f.column)} = v.{quote(f.column)}" for f, _ in varying])
    with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
        raw = cursor.cursor  # the psycopg cursor under Django's wrapper
        raw.execute(f"DROP TABLE IF EXISTS {temp}")
        raw.execute(f"CREATE TEMP TABLE {temp} ON COMMIT DROP AS SELECT {', '.join(names)} "
                    f"FROM {table} WITH NO DATA")
        with raw.copy(f"COPY {temp} ({', '.join(names)}) FROM STDIN") as copy:
            for row in zip(pks, *(values for _, values in varying), strict=True):
                copy.write_row(row)
        if len(pks) > BATCH:
            raw.execute(f"ANALYZE {temp}")  # a temporary table has no statistics: a hash join
        raw.execute(f"UPDATE {table} SET {', '.join(sets)} FROM {temp} v "
                    f"WHERE {table}.{quote(pk.column)} = v.{quote(pk.column)}",
                    [value for _, value in constant])
        raw.execute(f"DROP TABLE {temp}")


def bulk_insert(model: Any, fields: Sequence[str], rows: Iterable[Sequence[Any]], *,
                ignore_conflicts: bool = False) -> int:
    """``INSERT`` one row per tuple of ``rows`` (values of ``fields``, in order), in
    multi-row statements; with ``ignore_conflicts`` a row that breaks a unique
    constraint is skipped. A column left out gets its field's default (the database has
    none of Django's defaults). Returns how many tuples were sent.

    SQLite reads many rows as one JSON array (``_insert_from_json``), or prepares one
    single-row statement and runs it per tuple (``executemany``, in C); PostgreSQL
    streams them with ``COPY`` (``_copy``); another database gets multi-row ``VALUES``."""
    conn = connections[router.db_for_write(model)]
    meta = model._meta
    quote = conn.ops.quote_name
    columns = [meta.get_field(name) for name in fields]
    named = {f.attname for f in columns}
    left_out = [f for f in meta.concrete_fields if f.attname not in named and not f.primary_key]
    defaults = [f.get_default() for f in left_out]
    columns += left_out
    # Only the columns the driver cannot take as they are get adapted.
    special = [(i, fn) for i, f in enumerate(columns) if (fn := _adapter(f, conn)) is not None]

    def prepare(values: Sequence[Any]) -> Sequence[Any]:
        if not special and not defaults:
            return values
        out = [*values, *defaults]
        for i, fn in special:
            out[i] = fn(out[i])
        return out

    row = "(" + ", ".join(_slot(f, conn) for f in columns) + ")"
    head = (f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in columns)}) "
            "VALUES ")
    tail = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
    if conn.vendor == "sqlite":
        prepared = [prepare(values) for values in rows]
        with conn.cursor() as cursor:
            for start in range(0, len(prepared), INSERT_ROWS * 10):
                chunk = prepared[start:start + INSERT_ROWS * 10]
                if not _insert_from_json(cursor, quote, meta.db_table, columns, chunk, tail):
                    cursor.executemany(head + row + tail, chunk)
        return len(prepared)
    if conn.vendor == "postgresql":
        return _copy(conn, meta.db_table, [f.column for f in columns], map(prepare, rows),
                     ignore_conflicts)
    per = max(1, min(INSERT_ROWS, INSERT_PARAMS // max(1, len(columns))))
    sent = 0
    batch: list[Any] = []
    count = 0

    def flush(cursor: Any) -> None:
        cursor.execute(head + ", ".join([row] * count) + tail, batch)

    with conn.cursor() as cursor:
        for values in rows:
            batch.extend(prepare(values))
            count += 1
            sent += 1
            if count == per:
                flush(cursor)
                batch, count = [], 0
        if count:
            flush(cursor)
    return sent


#: Below this many rows a plain ``executemany`` is as quick.
JSON_INSERT_MIN = 200


def _insert_from_json(cursor: Any, quote: Callable[[str], str], table: str, columns: list[Any],
                      rows: list[Sequence[Any]], tail: str) -> bool:
    """SQLite: many rows in one ``INSERT ... SELECT`` from ``json_each``: the columns every
    row shares bound once, the varying ones sent as one JSON array of arrays, which SQLite
    reads in C. A scale-up's 100,000 rows differ in two of their 17 columns, and binding
    every value of every row (``executemany``) took twice as long (docs/performance.md).
    Only integers, text and nulls travel as JSON (a float's text form would be parsed
    again); False when the rows do not suit, and the caller binds them."""
    if len(rows) < JSON_INSERT_MIN:
        return False
    select: list[str] = []
    params: list[Any] = []
    varying: list[Sequence[Any]] = []
    for column in zip(*rows, strict=True):
        first = column[0]
        if column.count(first) == len(column) and type(first) in _JSON_SAFE | {float}:
            select.append("%s")
            params.append(first)
            continue
        if any(type(value) not in _JSON_SAFE for value in column):
            return False
        select.append(f"json_extract(value, '$[{len(varying)}]')")
        varying.append(column)
    params.append(json.dumps(list(zip(*varying, strict=True)) if varying else [0] * len(rows)))
    cursor.execute(
        f"INSERT INTO {quote(table)} ({', '.join(quote(f.column) for f in columns)}) "
        f"SELECT {', '.join(select)} FROM json_each(%s) WHERE true ORDER BY key{tail}", params)
    return True


_JSON_SAFE = frozenset({int, str, bool, type(None)})


def _copy(conn: Any, table: str, columns: list[str], rows: Iterable[Sequence[Any]],
          ignore_conflicts: bool) -> int:
    """PostgreSQL: ``COPY ... FROM STDIN`` (psycopg streams the rows; a multi-row INSERT
    of 100,000 rows spent seconds in the driver's client-side query formatting). With
    ``ignore_conflicts`` the rows are first copied straight in under a savepoint (no
    other writer created one of the keys: the usual case); on a conflict they land in a
    temporary table and move over with ``INSERT ... SELECT ... ON CONFLICT DO NOTHING``
    (a fraction of a second more for a scale to 100,000)."""
    quote = conn.ops.quote_name
    names = ", ".join(quote(c) for c in columns)
    target = quote(table)

    def copy_into(raw: Any, into: str, values: Iterable[Sequence[Any]]) -> int:
        sent = 0
        with raw.copy(f"COPY {into} ({names}) FROM STDIN") as copy:
            for row in values:
                copy.write_row(row)
                sent += 1
        return sent

    with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
        raw = cursor.cursor  # the psycopg cursor under Django's wrapper
        if not ignore_conflicts:
            return copy_into(raw, target, rows)
        kept = list(rows)
        try:
            with transaction.atomic(using=conn.alias):
                return copy_into(raw, target, kept)
        except conn.Database.IntegrityError:  # psycopg's own: the raw cursor's error
            pass
        into = quote(f"bulk_{table}")
        raw.execute(f"DROP TABLE IF EXISTS {into}")
        raw.execute(f"CREATE TEMP TABLE {into} ON COMMIT DROP AS SELECT {names} FROM {target} WITH NO DATA")
        sent = copy_into(raw, into, kept)
        raw.execute(f"INSERT INTO {target} ({names}) SELECT {names} FROM {into} ON CONFLICT DO NOTHING")
        raw.execute(f"DROP TABLE {into}")
    return sent
