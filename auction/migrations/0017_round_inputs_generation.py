# Issue 14: on SQLite an auction reads its input and runs the engine outside the write lock
# and applies its answer only if nothing it read was written meanwhile. Every write
# statement to a table the round reads bumps this counter first
# (auction/services/reading_apart.py). PostgreSQL reads the round FOR UPDATE in the
# writing transaction instead: nothing here.

from django.db import migrations

COUNTER = "auction_round_inputs"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    schema_editor.execute(f"CREATE TABLE IF NOT EXISTS {COUNTER} (id INTEGER PRIMARY KEY, generation INTEGER NOT NULL)")
    schema_editor.execute(f"INSERT OR IGNORE INTO {COUNTER} (id, generation) VALUES (1, 0)")


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(f"DROP TABLE IF EXISTS {COUNTER}")


class Migration(migrations.Migration):

    dependencies = [
        ('auction', '0016_actual_lrp_fewer_indexes'),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
