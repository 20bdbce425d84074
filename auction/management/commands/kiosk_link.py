"""``manage.py kiosk_link``: print a signed wall-screen URL (dashboard.md C6).

The kiosk shows one world's live grid read-only to whoever holds the link, for
``TOKEN_MAX_AGE_S``; the token is signed with the project's secret key.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlencode

from django.core.management.base import BaseCommand, CommandError, CommandParser

from auction.selectors.grid import MODES
from auction.views.kiosk import TOKEN_MAX_AGE_S, kiosk_token


class Command(BaseCommand):
    help = "Print a kiosk (wall screen) URL with a signed read-only token."

    def add_arguments(self, parser: CommandParser) -> None:
        default = f"http://{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}/"
        parser.add_argument("--base", default=default, help=f"The app's address (default {default}).")
        parser.add_argument("--mode", default="", help="Grid mode: " + ", ".join(MODES))
        parser.add_argument("--zone", default="", help="Show one availability zone only.")
        parser.add_argument("--no-follow", action="store_true",
                            help="Do not follow the presenter (stay on this view).")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["mode"] and options["mode"] not in MODES:
            raise CommandError(f"unknown mode {options['mode']!r}; one of {', '.join(MODES)}")
        query = {"mode": options["mode"], "zone": options["zone"],
                 "follow": "0" if options["no_follow"] else "1", "token": kiosk_token()}
        base = options["base"].rstrip("/") + "/"
        self.stdout.write(f"{base}kiosk/?{urlencode({k: v for k, v in query.items() if v})}")
        self.stderr.write(f"valid for {TOKEN_MAX_AGE_S // 86400} days; anyone with it sees this world's grid")
