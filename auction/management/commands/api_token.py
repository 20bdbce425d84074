"""``manage.py api_token USER [--name NAME]``: issue an API token and print it once."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from auction.models import ApiToken
from auction.permissions import is_operator


class Command(BaseCommand):
    help = "Issue an API token for USER (an operator) and print it; it is not stored in clear."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("user")
        parser.add_argument("--name", default="cli", help="What the token is for (default: cli).")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user {options['user']!r}; create one in the admin first")
        if not is_operator(user):
            self.stderr.write(f"note: {user} is not an operator (needs the control permission, "
                              "granted in the admin); API writes will be refused")
        _, raw = ApiToken.issue(user, options["name"][:100])
        self.stdout.write(raw)
