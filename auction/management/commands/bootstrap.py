"""Everything ``make run`` does before starting processes: migrate, seed, admin account."""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from auction.live.publish import suppressed
from auction.services.scenarios import cluster_is_empty, scenario_load
from auction.services.work import set_trigger_suppressed

DEFAULT_SCENARIO = "seed-example"


class Command(BaseCommand):
    help = "Migrate, seed the demo cluster when empty, ensure the 'admin' operator account."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000/")

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        if cluster_is_empty():
            # Nothing listens yet (Redis starts after this): no frames, no auction
            # trigger; the first beat tick finds the queued work and starts the auction.
            previous = set_trigger_suppressed(True)
            try:
                with suppressed():
                    scenario_load(DEFAULT_SCENARIO)
            finally:
                set_trigger_suppressed(previous)
            self.stdout.write(f"seeded the demo cluster: scenario {DEFAULT_SCENARIO}")
        password_line = self._ensure_admin()
        self.stdout.write(
            f"    open:  {options['url']}\n"
            f"    admin: {options['url']}admin/  user admin, {password_line}\n"
            f"    lost the password?  python manage.py changepassword admin\n"
        )

    def _ensure_admin(self) -> str:
        users = get_user_model()
        wanted = os.environ.get("DIEGO_ADMIN_PASSWORD", "")
        user = users.objects.filter(username="admin").first()
        if user is None:
            if wanted:  # the operator's own password is never echoed to a log
                users.objects.create_superuser("admin", "admin@example.invalid", wanted)
                return "password from DIEGO_ADMIN_PASSWORD"
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser("admin", "admin@example.invalid", password)
            # Printed once, because it was generated: it is not stored anywhere in clear.
            return f"password {password}"
        if wanted:
            user.set_password(wanted)
            user.save(update_fields=["password"])
            return "password from DIEGO_ADMIN_PASSWORD"
        return "password as printed at first start (or DIEGO_ADMIN_PASSWORD)"
