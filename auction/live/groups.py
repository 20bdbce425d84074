"""Channel-layer group names (dashboard.md L2): ``w.<world>.<topic>``.

Channels allows only ``[A-Za-z0-9._-]`` and fewer than 100 characters.
"""

from __future__ import annotations

import re

from django.conf import settings

_VALID = re.compile(r"^[A-Za-z0-9._-]{1,99}$")

# Topics a page may join; each view asks only for what it shows.
TOPICS = ("clock", "zones", "tray", "metrics", "feed", "events", "auctions", "lrps", "otto", "presenter",
          "epoch", "controls")


def group(topic: str, world: str | None = None) -> str:
    name = f"w.{world or settings.DIEGO_WORLD}.{topic}"
    if not _VALID.match(name):
        raise ValueError(f"invalid group name {name!r}")
    return name


def zone_group(zone: str, world: str | None = None) -> str:
    return group(f"zone.{zone}", world)
