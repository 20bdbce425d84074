"""``manage.py kiosk_link``: print, list or revoke wall-screen links (dashboard.md C6, AD9).

The kiosk shows one world's live grid read-only to whoever holds the link, for
``--days`` days (30 by default); ``--revoke KEY_OR_LINK`` or ``--revoke-all`` cuts links
off at once without changing the secret key.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from auction.models.tokens import KIOSK_TOKEN_DAYS
from auction.selectors.grid import MODES
from auction.services.kiosk import (
    KioskLinkError,
    kiosk_links,
    kiosk_token_issue,
    revoke_kiosk_tokens,
)


class Command(BaseCommand):
    help = "Print a kiosk (wall screen) URL with a signed read-only token; list or revoke links."

    def add_arguments(self, parser: CommandParser) -> None:
        default = f"http://{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}/"
        parser.add_argument("--base", default=default, help=f"The app's address (default {default}).")
        parser.add_argument("--mode", default="", help="Grid mode: " + ", ".join(MODES))
        parser.add_argument("--zone", default="", help="Show one availability zone only.")
        parser.add_argument("--no-follow", action="store_true",
                            help="Do not follow the presenter (stay on this view).")
        parser.add_argument("--days", type=int, default=KIOSK_TOKEN_DAYS,
                            help=f"How long the link works (default {KIOSK_TOKEN_DAYS}, at most 3650).")
        parser.add_argument("--note", default="", help="What the link is for, shown by --list.")
        parser.add_argument("--list", action="store_true", help="List this world's links.")
        parser.add_argument("--revoke", metavar="KEY_OR_LINK",
                            help="Revoke one link: the link itself, its token, or its key as --list shows it.")
        parser.add_argument("--revoke-all", action="store_true", help="Revoke every live link.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            now = timezone.now()
            for link in kiosk_links():
                state = ("revoked" if link.revoked else "expired" if link.expires <= now
                         else f"valid until {link.expires:%Y-%m-%d %H:%M} UTC")
                self.stdout.write(f"{link.key[:12]}  {state}  {link.note}")
            return
        if options["revoke_all"]:
            self.stdout.write(f"revoked {revoke_kiosk_tokens()} kiosk link(s)")
            return
        if options["revoke"]:
            target = options["revoke"]
            # A whole link pasted in: take its token.
            target = parse_qs(urlsplit(target).query).get("token", [target])[0]
            try:
                count = revoke_kiosk_tokens(target)
            except KioskLinkError as exc:
                raise CommandError(str(exc)) from None
            if not count:
                raise CommandError("no live kiosk link matches (already revoked, or another world's)")
            self.stdout.write(f"revoked {count} kiosk link(s)")
            return
        if options["mode"] and options["mode"] not in MODES:
            raise CommandError(f"unknown mode {options['mode']!r}; one of {', '.join(MODES)}")
        try:
            token = kiosk_token_issue(days=options["days"], note=options["note"])
        except KioskLinkError as exc:
            raise CommandError(str(exc)) from None
        query = {"mode": options["mode"], "zone": options["zone"],
                 "follow": "0" if options["no_follow"] else "1", "token": token}
        base = options["base"].rstrip("/") + "/"
        self.stdout.write(f"{base}kiosk/?{urlencode({k: v for k, v in query.items() if v})}")
        self.stderr.write(f"valid for {options['days']} days; anyone with it sees this world's grid; "
                          "revoke with manage.py kiosk_link --revoke-all")
