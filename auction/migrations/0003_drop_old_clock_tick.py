"""The beat entry ``sim-clock-tick`` became ``sim-tick`` (it now advances the whole
simulation); drop the old row so beat does not keep sending a task that is gone."""

from django.db import migrations


def drop_old_entry(apps, schema_editor):  # type: ignore[no-untyped-def]
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name="sim-clock-tick").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auction", "0002_bbs_and_auctioneer"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]
    operations = [migrations.RunPython(drop_old_entry, migrations.RunPython.noop)]
