# Issue 29: a named foundation can be replaced, so each says which capture it holds
# (version, hash, size, capture time) and a plan says which one it ran on. Foundations
# kept before this get their hash and size from the capture they hold.

import hashlib

from django.db import migrations, models


def fill(apps, schema_editor):
    Foundation = apps.get_model("auction", "Foundation")
    for pk, capture in Foundation.objects.values_list("pk", "capture"):
        data = bytes(capture)
        Foundation.objects.filter(pk=pk).update(sha256=hashlib.sha256(data).hexdigest(),
                                                size_bytes=len(data))


class Migration(migrations.Migration):

    dependencies = [
        ('auction', '0019_cluster_lock'),
    ]

    operations = [
        migrations.AddField(
            model_name='foundation',
            name='captured_at',
            field=models.DateTimeField(blank=True, help_text="The capture's newest time (none for a simulator's dump).", null=True),
        ),
        migrations.AddField(
            model_name='foundation',
            name='replaced_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='foundation',
            name='sha256',
            field=models.CharField(blank=True, default='', help_text='SHA-256 of the kept capture (hex).', max_length=64),
        ),
        migrations.AddField(
            model_name='foundation',
            name='size_bytes',
            field=models.BigIntegerField(default=0, help_text="The kept capture's size (gzip)."),
        ),
        migrations.AddField(
            model_name='foundation',
            name='version',
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.AddField(
            model_name='plan',
            name='base_version',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
