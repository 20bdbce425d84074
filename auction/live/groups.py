"""Channel-layer group names (dashboard.md L2): ``w.<world>.<topic>``.

Channels allows only ``[A-Za-z0-9._-]`` and fewer than 100 characters.
"""

from __future__ import annotations

import re

from django.conf import settings

_VALID = re.compile(r"^[A-Za-z0-9._-]{1,99}$")


def group(topic: str, world: str | None = None) -> str:
    name = f"w.{world or settings.DIEGO_WORLD}.{topic}"
    if not _VALID.match(name):
        raise ValueError(f"invalid group name {name!r}")
    return name


def lrps_page_of(topic: str) -> int:
    """``lrps.p3`` → 3."""
    raw = topic.partition(".p")[2]
    return int(raw) if raw.isascii() and raw.isdigit() and int(raw) > 0 else 1
