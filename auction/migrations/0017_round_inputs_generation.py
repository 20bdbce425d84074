# Issue 14: on SQLite an auction reads its input and runs the engine outside the write lock
# and applies its answer only if nothing it read was written meanwhile
# (auction/services/reading_apart.py). Every write to a table the round reads bumps one
# counter, by trigger, so no writer (a service, the admin, a shell) can be missed.
# PostgreSQL reads the round FOR UPDATE in the writing transaction instead: nothing here.

from django.db import migrations

COUNTER = "auction_round_inputs"
# What ``DbStore.round_input`` reads (tests/services/test_reading_apart.py checks it).
TABLES = ("auction_actuallrp", "auction_pendingwork", "auction_cell", "auction_zone",
          "auction_task", "auction_desiredlrp", "auction_auctionsettings")
BUMP = f"BEGIN UPDATE {COUNTER} SET generation = generation + 1 WHERE id = 1; END"


def statements():
    yield f"CREATE TABLE IF NOT EXISTS {COUNTER} (id INTEGER PRIMARY KEY, generation INTEGER NOT NULL)"
    yield f"INSERT OR IGNORE INTO {COUNTER} (id, generation) VALUES (1, 0)"
    for table in TABLES:
        for op in ("INSERT", "UPDATE", "DELETE"):
            yield f"CREATE TRIGGER IF NOT EXISTS {table}_{op.lower()}_round AFTER {op} ON {table} {BUMP}"
    # The clock row is written every tick, often by a whole-row save; only its seed is a
    # round's input.
    yield ("CREATE TRIGGER IF NOT EXISTS auction_simclock_seed_round AFTER UPDATE OF seed ON auction_simclock "
           f"WHEN OLD.seed IS NOT NEW.seed {BUMP}")
    yield f"CREATE TRIGGER IF NOT EXISTS auction_simclock_insert_round AFTER INSERT ON auction_simclock {BUMP}"
    yield f"CREATE TRIGGER IF NOT EXISTS auction_simclock_delete_round AFTER DELETE ON auction_simclock {BUMP}"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    for sql in statements():
        schema_editor.execute(sql)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%%_round'")
        names = [name for (name,) in cursor.fetchall()]
    for name in names:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}")
    schema_editor.execute(f"DROP TABLE IF EXISTS {COUNTER}")


class Migration(migrations.Migration):

    dependencies = [
        ('auction', '0016_actual_lrp_fewer_indexes'),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
