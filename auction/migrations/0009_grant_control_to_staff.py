"""Operators are the users with ``auction.control``; staff no longer qualify by role.

Until now the dashboard let any staff user steer the cluster while the API asked for
the permission. This grants the permission to every staff user that exists now, so no
one who could use the controls loses them. Superusers have every permission anyway.
A staff user created after this migration is an operator only once an admin grants
the permission (auction/permissions.py).
"""

from django.conf import settings
from django.db import migrations

CODENAME = "control"
NAME = "Can steer the cluster: API writes and the dashboard's controls"


def grant_control_to_staff(apps, schema_editor):
    # post_migrate creates permissions only after every migration has run, so on a
    # fresh database the row does not exist yet: create it (post_migrate then finds it).
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    User = apps.get_model(settings.AUTH_USER_MODEL)
    content_type, _ = ContentType.objects.get_or_create(app_label="auction", model="apitoken")
    permission, _ = Permission.objects.get_or_create(
        codename=CODENAME, content_type=content_type, defaults={"name": NAME})
    for user in User.objects.filter(is_staff=True, is_superuser=False):
        user.user_permissions.add(permission)


class Migration(migrations.Migration):

    dependencies = [
        ("auction", "0008_auction_settings_go_compat"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        # Going back leaves the grants: they cannot be told from ones an admin made.
        migrations.RunPython(grant_control_to_staff, migrations.RunPython.noop),
    ]
